import { readFileSync } from 'node:fs';

/** A fixture of `fixtures/` (see its README for the documentation page each follows), parsed. */
export function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as T;
}

/** The fixture's text as Jira would send it. */
export function fixtureText(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}
