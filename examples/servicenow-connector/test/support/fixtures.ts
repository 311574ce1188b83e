import { readFileSync } from 'node:fs';

/** A fixture of `test/fixtures/` (answers shaped like ServiceNow's documented ones), parsed. */
export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
}
