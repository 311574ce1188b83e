import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as backend from '../../src/backend/index.js';
import * as client from '../../src/client/index.js';
import { ApprovalKitError, ERROR_CODES } from '../../src/errors.js';
import * as kit from '../../src/index.js';
import * as testing from '../../src/testing/index.js';
import * as worker from '../../src/worker/index.js';

const catalogue = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = [...catalogue.matchAll(/^\| `([a-z_]+)` +\| `([A-Za-z]+)` +\|/gm)].map(([, code, name]) => ({
  code: code!,
  name: name!,
}));

/** The code a class's name gives: its name without `Error`, in snake_case (`PartialAddUsersError` → `partial_add_users`). */
function codeOfClassName(name: string): string {
  return name
    .replace(/Error$/, '')
    .replace(/(?<=[a-z0-9])([A-Z])/g, '_$1')
    .toLowerCase();
}

describe('docs/errors.md', () => {
  it('lists every code of the catalogue once, in its order', () => {
    expect(rows.map((row) => row.code)).toEqual([...ERROR_CODES]);
  });

  it('names for each code a class the kit exports, which is an ApprovalKitError named after itself', () => {
    const exported: Record<string, unknown> = { ...kit, ...client, ...worker, ...backend, ...testing };
    for (const { code, name } of rows) {
      const found = exported[name];
      expect(typeof found, `${code}: ${name}`).toBe('function');
      expect((found as { prototype: unknown }).prototype, name).toBeInstanceOf(ApprovalKitError);
      expect((found as { name: string }).name).toBe(name);
    }
  });

  it('gives each class the code its name echoes: the name without `Error`, in snake_case', () => {
    expect(rows.length).toBe(ERROR_CODES.length);
    for (const { code, name } of rows) expect(code, name).toBe(codeOfClassName(name));
  });
});

describe('the rule of the codes', () => {
  it.each([
    ['SystemError', 'system'],
    ['ApiError', 'api'],
    ['PartialAddUsersError', 'partial_add_users'],
    ['OperationsServerListenError', 'operations_server_listen'],
    ['ServiceUnavailableError', 'service_unavailable'],
  ])('%s has the code %s', (name, code) => {
    expect(codeOfClassName(name)).toBe(code);
  });
});
