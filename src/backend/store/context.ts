import type { Database } from './database.js';

/** What every repository shares: the connection and the clock. */
export interface StoreContext {
  readonly db: Database;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

/** A stored instant as the wire writes it: UTC ISO 8601 with milliseconds. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
