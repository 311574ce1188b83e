import { ServiceError } from '../../errors.js';

/** The largest page endpoints 1 and 5 serve. */
export const MAX_PAGE_LIMIT = 1000;

/** Rejects a limit over {@link MAX_PAGE_LIMIT}, which the wire schema (shared with the clients) leaves open. */
export function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && limit > MAX_PAGE_LIMIT) {
    throw ServiceError.invalid([
      { path: ['limit'], message: `must be at most ${MAX_PAGE_LIMIT}`, code: 'too_big' },
    ]);
  }
}
