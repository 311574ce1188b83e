/** Runs a full garbage collection when the process was started with `--expose-gc`; reports whether it could. */
export function collectGarbage(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  gc();
  return true;
}

/**
 * Watches the JS heap during a run: `heapUsed` sampled on a timer (the peak includes garbage not yet collected), and
 * the live heap measured after a full collection at the points the run asks for (see {@link checkpoint}).
 */
export class HeapSampler {
  /** `heapUsed` after a full collection, before the run. */
  readonly baseline: number;
  #peakSampled: number;
  #peakLive: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(readonly intervalMs = 10) {
    collectGarbage();
    this.baseline = process.memoryUsage().heapUsed;
    this.#peakSampled = this.baseline;
    this.#peakLive = this.baseline;
  }

  start(): void {
    this.#timer = setInterval(() => this.#sample(), this.intervalMs);
  }

  /** Collects garbage and records what stays alive: the memory the run actually holds at this point. */
  checkpoint(): void {
    this.#sample();
    if (!collectGarbage()) return;
    this.#peakLive = Math.max(this.#peakLive, process.memoryUsage().heapUsed);
  }

  stop(): { peakGrowth: number; liveGrowth: number } {
    clearInterval(this.#timer);
    this.#sample();
    return { peakGrowth: this.#peakSampled - this.baseline, liveGrowth: this.#peakLive - this.baseline };
  }

  #sample(): void {
    this.#peakSampled = Math.max(this.#peakSampled, process.memoryUsage().heapUsed);
  }
}
