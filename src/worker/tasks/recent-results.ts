import type { TaskResult } from '../../api/index.js';

/**
 * The results of the tasks finished here, kept to answer a new offer of one (its lease ran out, or it was delivered
 * twice) by reporting it again rather than running it again: at most `size` of them, the oldest forgotten first,
 * each for `ttlMs` (read from the monotonic clock).
 */
export class RecentResults {
  readonly #size: number;
  readonly #ttlMs: number;
  readonly #recent = new Map<string, { result: TaskResult; at: number; deliveries: number }>();
  /**
   * Walks {@link #recent} from its oldest entry as the oldest are forgotten. One iterator kept for good: a Map's
   * iterator is live, and every entry before this one's place has been deleted, so it always stands just before the
   * oldest entry left. A new iterator per eviction would step over every entry deleted since the Map last compacted
   * its table, thousands once the worker has run more tasks than it remembers.
   */
  #oldest: Iterator<string> | undefined;

  constructor(size: number, ttlMs: number) {
    this.#size = size;
    this.#ttlMs = ttlMs;
  }

  /** Keeps a task's result, and how many times the task was delivered here so far. */
  remember(taskId: string, result: TaskResult, deliveries = 1): void {
    this.#recent.set(taskId, { result, at: performance.now(), deliveries });
    while (this.#recent.size > this.#size) {
      this.#oldest ??= this.#recent.keys();
      this.#recent.delete(this.#oldest.next().value as string);
    }
  }

  /** The task's result, when it is remembered and not past its time. */
  get(taskId: string): TaskResult | undefined {
    const entry = this.#recent.get(taskId);
    if (entry === undefined) return undefined;
    if (performance.now() - entry.at > this.#ttlMs) {
      this.#recent.delete(taskId);
      return undefined;
    }
    return entry.result;
  }

  /** Counts one more delivery of a remembered task, and gives how many there were; 0 when it is not remembered. */
  delivered(taskId: string): number {
    const entry = this.#recent.get(taskId);
    if (entry === undefined) return 0;
    entry.deliveries += 1;
    return entry.deliveries;
  }
}
