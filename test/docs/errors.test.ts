import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as backend from '../../src/backend/index.js';
import * as client from '../../src/client/index.js';
import * as conformance from '../../src/conformance/index.js';
import { ApprovalKitError, ERROR_CODES } from '../../src/errors.js';
import * as kit from '../../src/index.js';
import * as testing from '../../src/testing/index.js';
import * as worker from '../../src/worker/index.js';

const catalogue = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = [...catalogue.matchAll(/^\| `([a-z_]+)` +\| `([A-Za-z]+)` +\|/gm)].map(([, code, name]) => ({
  code: code!,
  name: name!,
}));

describe('docs/errors.md', () => {
  it('lists every code of the catalogue once, in its order', () => {
    expect(rows.map((row) => row.code)).toEqual([...ERROR_CODES]);
  });

  it('names for each code a class the kit exports, which is an ApprovalKitError named after itself', () => {
    const exported: Record<string, unknown> = {
      ...kit,
      ...client,
      ...worker,
      ...backend,
      ...testing,
      ...conformance,
    };
    for (const { code, name } of rows) {
      const found = exported[name];
      expect(typeof found, `${code}: ${name}`).toBe('function');
      expect((found as { prototype: unknown }).prototype, name).toBeInstanceOf(ApprovalKitError);
      expect((found as { name: string }).name).toBe(name);
    }
  });
});
