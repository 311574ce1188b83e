import type { TaskResultStatus } from '../../api/index.js';
import { classifyFailure } from '../../connector/index.js';
import { backoffDelay } from '../../internal/backoff.js';
import { sleep } from '../../internal/wait.js';
import type { PinoLogger } from '../operations/index.js';

/** How a run reads its source again after a failure. Every field is required here; `SyncOptions` documents the defaults. */
export interface SourceRetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryTimeMs: number;
}

/** What {@link SourceRetries} needs from the run. */
export interface SourceRetryParts {
  sourceRetry: SourceRetryPolicy;
  /** The connector's own failure rule, consulted before the kit's table, as for a task. */
  classifyFailure: ((error: unknown) => TaskResultStatus | undefined) | undefined;
  random: () => number;
  signal: AbortSignal;
  logger: PinoLogger;
  /**
   * The line logged before each retry.
   * @default 'reading the source failed; reading it again from the last acknowledged point'
   */
  retryMessage?: string;
}

/**
 * The budget of one run's reads of its source: which failures are worth reading again, and how long to wait first.
 * A failure is read again when the failure mapping calls it `serviceUnavailable` (429, 408, 5xx, network errors,
 * timeouts), after the `retryAfterMs` it carries, or else after the kit's backoff. At most `retries` failures in a
 * row without progress, whose waits end within `maxRetryTimeMs` of the first of them on the monotonic clock; a run
 * that gets further starts the budget afresh.
 */
export class SourceRetries {
  readonly #parts: SourceRetryParts;
  /** Failures in a row since the run last got further. */
  #failures = 0;
  /** When the first of them came, on the monotonic clock. */
  #firstAt: number | undefined;

  constructor(parts: SourceRetryParts) {
    this.#parts = parts;
  }

  /** The run got further than at any earlier failure: the budget starts afresh. */
  progressed(): void {
    this.#failures = 0;
    this.#firstAt = undefined;
  }

  /**
   * Waits before the source is read again, or throws `error` when it is not to be: trying later cannot help, the
   * budget is spent, or the worker is stopping (then the wait rejects with the signal's reason).
   */
  async wait(error: unknown): Promise<void> {
    const { sourceRetry: policy, classifyFailure: ownRule, random, signal, logger } = this.#parts;
    if (signal.aborted) throw error;
    const { status, meta, retryAfterMs } = classifyFailure(
      error,
      ownRule ? { classifyFailure: ownRule } : {},
    );
    if (status !== 'serviceUnavailable' || this.#failures >= policy.retries) throw error;
    const delayMs =
      retryAfterMs ??
      backoffDelay(this.#failures, {
        baseMs: policy.baseDelayMs,
        maxMs: policy.maxDelayMs,
        jitter: 'full',
        random,
      });
    const now = performance.now();
    this.#firstAt ??= now;
    // A wait that would end past the budget is not started: the run fails now, as the client does with a request.
    if (now - this.#firstAt + delayMs > policy.maxRetryTimeMs) throw error;
    this.#failures += 1;
    logger.warn(
      { err: error, code: meta.code, attempt: this.#failures, retryInMs: delayMs },
      this.#parts.retryMessage ??
        'reading the source failed; reading it again from the last acknowledged point',
    );
    await sleep(delayMs, signal);
  }
}

/**
 * Reads a source to its end, giving each record to `take`. When the source itself fails (not `take`), `settle()`
 * runs first: it sends what was read, saves what can be saved, and says whether the run got further than at the
 * previous failure. Then, if {@link SourceRetries.wait} lets it, `open()` is called again: an async iterator cannot
 * go on after it threw, so the read starts again, from wherever `open()` now starts it.
 */
export async function readSource<T>(
  open: () => AsyncIterable<T>,
  take: (record: T) => Promise<void>,
  retries: SourceRetries,
  settle: () => Promise<boolean>,
): Promise<void> {
  for (;;) {
    const failure = await readOnce(open, take);
    if (failure === undefined) {
      retries.progressed();
      return;
    }
    if (await settle()) retries.progressed();
    await retries.wait(failure.error);
  }
}

/** Reads the source once to its end. A failure of the source is returned; one of `take` is thrown. */
async function readOnce<T>(
  open: () => AsyncIterable<T>,
  take: (record: T) => Promise<void>,
): Promise<{ error: unknown } | undefined> {
  let iterator: AsyncIterator<T>;
  try {
    iterator = open()[Symbol.asyncIterator]();
  } catch (error) {
    return { error };
  }
  for (;;) {
    let next: IteratorResult<T>;
    try {
      next = await iterator.next();
    } catch (error) {
      return { error };
    }
    if (next.done) return undefined;
    try {
      await take(next.value);
    } catch (error) {
      // As `for await` does: the source is closed, and the run's own failure is the one that counts.
      try {
        await iterator.return?.();
      } catch {
        // Closing failed too; the run's failure is still the one to report.
      }
      throw error;
    }
  }
}
