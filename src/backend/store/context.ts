import type { StoreChange } from './changes.js';
import type { Database } from './database.js';

/** What every repository shares: the connection, the clock, and where committed writes are told. */
export interface StoreContext {
  readonly db: Database;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** Notes a write, told to the store's watchers once its transaction commits. */
  readonly changed: (change: StoreChange | (() => StoreChange)) => void;
}

/** A stored instant as the wire writes it: UTC ISO 8601 with milliseconds. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
