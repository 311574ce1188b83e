/** How a {@link backoffDelay} grows, and how it is spread. */
export interface Backoff {
  /** The ceiling of the first wait, in milliseconds. It doubles with each wait after it. */
  baseMs: number;
  /** The largest ceiling, in milliseconds. */
  maxMs: number;
  /**
   * How a wait is drawn below its ceiling: `full`, anywhere from 0 (spreads retries the most: a client's requests);
   * `equal`, from half the ceiling (keeps waits growing: polling and start-up retries).
   */
  jitter: 'full' | 'equal';
  /** Source of randomness, in [0, 1). */
  random: () => number;
}

/**
 * The exponential backoff of the kit, in whole milliseconds: the wait after `waited` earlier waits (from 0). Its
 * ceiling is `min(maxMs, baseMs * 2^waited)`; a `full` wait is uniform in `[0, ceiling]`, an `equal` one in
 * `[ceiling / 2, ceiling]`.
 */
export function backoffDelay(waited: number, backoff: Backoff): number {
  const { baseMs, maxMs, jitter, random } = backoff;
  // 2^waited overflows to Infinity, which min() caps; only a zero base would then make NaN.
  const ceiling = baseMs > 0 ? Math.min(maxMs, baseMs * 2 ** waited) : 0;
  return jitter === 'full'
    ? Math.floor(random() * (ceiling + 1))
    : Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
