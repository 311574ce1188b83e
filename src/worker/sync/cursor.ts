/**
 * The order of sync cursors. A cursor is a {@link SyncCursor}, `(lastModified, id)`, as connector state holds it
 * (`state.ts` reads it there); while a sync runs, it is a {@link CursorKey}, the same cursor with its instant parsed.
 * {@link compareKeys} is the one order of cursors, for the sync and for whatever checks it.
 * @module
 */
import type { SyncCursor } from '../../connector/index.js';

/**
 * A cursor with its instant already parsed (epoch milliseconds), so that ordering places, once per record of a sync,
 * never parses a date; it becomes a {@link SyncCursor} again only when it is saved.
 */
export interface CursorKey {
  readonly at: number;
  readonly id: string;
}

/** The key of a saved cursor. */
export function keyOfCursor(cursor: SyncCursor): CursorKey {
  return { at: Date.parse(cursor.lastModified), id: cursor.id };
}

/** The cursor saved for a key: `lastModified` as `Date.toISOString` writes it. */
export function cursorOfKey(key: CursorKey): SyncCursor {
  return { lastModified: new Date(key.at).toISOString(), id: key.id };
}

/** Orders keys by instant, then by `id`: the order of `(lastModified, id)` with `lastModified` read as an instant. */
export function compareKeys(a: CursorKey, b: CursorKey): number {
  const byTime = a.at - b.at;
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
