import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SyncCursor } from '../../src/connector/index.js';
import { compareKeys, cursorOfKey, keyOfCursor } from '../../src/worker/sync/cursor.js';

/** The order cursors had before keys: both dates parsed on every comparison. */
function compareCursorsByParsing(a: SyncCursor, b: SyncCursor): number {
  const byTime = Date.parse(a.lastModified) - Date.parse(b.lastModified);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const T0 = Date.UTC(2026, 4, 1, 10);

/** An instant, often one of a few so that equal instants come up, written in one of the forms a source may use. */
const lastModified = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(T0, T0 + 1, T0 + 1000),
      fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }),
    ),
    fc.constantFrom('utc', 'offset', 'micro'),
  )
  .map(([at, form]) => {
    const iso = new Date(at).toISOString();
    if (form === 'utc') return iso;
    if (form === 'micro') return iso.replace('Z', '999Z');
    // The same instant two hours ahead, written with its offset.
    return `${new Date(at + 2 * 3600_000).toISOString().slice(0, -1)}+02:00`;
  });
const id = fc.oneof(fc.constantFrom('PO-1', 'PO-2', 'po-1', ''), fc.string());
const cursor = fc.record({ lastModified, id });

describe('cursor keys', () => {
  it('order cursors as parsing both dates on every comparison did, equal instants and ids included', () => {
    fc.assert(
      fc.property(cursor, cursor, (a, b) => {
        expect(Math.sign(compareKeys(keyOfCursor(a), keyOfCursor(b)))).toBe(
          Math.sign(compareCursorsByParsing(a, b)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('order records as the ISO cursors built from them did, and save the same cursor', () => {
    // Before keys, each record's cursor was `new Date(lastModified).toISOString()`; now it is `Date.parse` once.
    const oldCursor = (record: SyncCursor): SyncCursor => ({
      lastModified: new Date(record.lastModified).toISOString(),
      id: record.id,
    });
    const newKey = (record: SyncCursor) => ({ at: Date.parse(record.lastModified), id: record.id });
    fc.assert(
      fc.property(cursor, cursor, (a, b) => {
        expect(Math.sign(compareKeys(newKey(a), newKey(b)))).toBe(
          Math.sign(compareCursorsByParsing(oldCursor(a), oldCursor(b))),
        );
        expect(cursorOfKey(newKey(a))).toEqual(oldCursor(a));
      }),
      { numRuns: 2000 },
    );
  });
});
