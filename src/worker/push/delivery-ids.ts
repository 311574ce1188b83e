/**
 * The delivery ids seen within a window: what tells a source's retry of a delivery from a new one. Bounded in time
 * (`windowMs`, on the monotonic clock) and in count (`limit`, the oldest forgotten first), so that a flood of
 * deliveries cannot grow it without end.
 */
export class DeliveryIds {
  readonly #windowMs: number;
  readonly #limit: number;
  /** Each id and when it was first seen; in the order they came, which is the order they expire. */
  readonly #seen = new Map<string, number>();

  constructor(options: { windowMs: number; limit: number }) {
    this.#windowMs = options.windowMs;
    this.#limit = options.limit;
  }

  /** Whether `id` came within the window already; if not, it is noted now. */
  seenBefore(id: string): boolean {
    const now = performance.now();
    this.#forget(now);
    if (this.#seen.has(id)) return true;
    this.#seen.set(id, now);
    if (this.#seen.size > this.#limit) {
      const [oldest] = this.#seen.keys();
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
    return false;
  }

  #forget(now: number): void {
    for (const [id, at] of this.#seen) {
      if (now - at < this.#windowMs) return;
      this.#seen.delete(id);
    }
  }
}
