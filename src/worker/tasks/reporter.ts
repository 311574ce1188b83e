import type { TaskResult } from '../../api/index.js';
import {
  ApiError,
  ConflictError,
  type IntegrationClient,
  isRetryable,
  RateLimitedError,
  ServerError,
} from '../../client/index.js';
import { type Backoff, backoffDelay } from '../../internal/backoff.js';
import { inSpan, type TraceSpan } from '../../internal/tracing.js';
import { abortAfter, sleep } from '../../internal/wait.js';
import { ShutdownDeadlineError } from '../errors.js';
import type { ConnectorMetrics, PinoLogger } from '../operations/index.js';
import type { TaskTrace } from './task-trace.js';

/** How a report ended: `acknowledged` (a 409 included: a result was recorded), or why it was given up. */
type ReportEnd = 'acknowledged' | 'refused' | 'exhausted' | 'shutdown';

/**
 * How long a task's result is retried while the service keeps failing (5xx, 429, 408, 425, the network), in
 * milliseconds from its first report: about a lease, after which the service offers the task again and the result
 * kept in memory answers that offer. The report gives up on the first failure that would pass it, and ends.
 */
export const REPORT_RETRY_MS = 60_000;

/**
 * The wait between a result's reports, unless the service asked for one with `Retry-After`: from 125-250 ms,
 * doubling up to 700-1,400 ms. The reporter's own, whatever the idle poll's options.
 */
export const REPORT_BACKOFF: Omit<Backoff, 'random'> = { baseMs: 250, maxMs: 1_400, jitter: 'equal' };

/** How the reporter retries a result. */
export interface ReportPolicy {
  /** See {@link REPORT_RETRY_MS}. */
  retryForMs: number;
  backoff: Omit<Backoff, 'random'>;
}

/** What the reporter needs from the worker. */
export interface ReporterParts {
  client: Pick<IntegrationClient, 'reportTaskResult'>;
  metrics: ConnectorMetrics | undefined;
  random: () => number;
  /** Told each time a report ends, whichever way: the result no longer holds room. */
  onSettled?: (() => void) | undefined;
}

/**
 * Reports tasks' results until the service acknowledges each, with a retry policy of its own. It counts the results
 * not yet acknowledged ({@link pending}), which the leasing holds back on, and the shutdown waits for them.
 */
export class ResultReporter {
  readonly #parts: ReporterParts;
  readonly #policy: ReportPolicy;
  /** Aborted when result reports give up: the shutdown's deadline. Armed by {@link giveUpAfter}. */
  readonly #deadline = new AbortController();
  /** The result reports in flight, each with its own signal, which the deadline aborts. */
  readonly #reports = new Set<AbortController>();
  /** The tasks whose result is being reported, by id, each with the report's end (which never rejects). */
  readonly #reporting = new Map<string, Promise<void>>();

  constructor(
    parts: ReporterParts,
    policy: ReportPolicy = { retryForMs: REPORT_RETRY_MS, backoff: REPORT_BACKOFF },
  ) {
    this.#parts = parts;
    this.#policy = policy;
    // One listener, rather than the deadline's signal passed to each report: every report in flight would add its
    // own listener to it, and Node warns of a leak past ten.
    this.#deadline.signal.addEventListener(
      'abort',
      () => {
        for (const report of this.#reports) report.abort(this.#deadline.signal.reason);
      },
      { once: true },
    );
  }

  /** Results being reported, not yet acknowledged nor given up on. */
  get pending(): number {
    return this.#reporting.size;
  }

  /** The ids of the tasks whose result is being reported. */
  get taskIds(): string[] {
    return [...this.#reporting.keys()];
  }

  isReporting(taskId: string): boolean {
    return this.#reporting.has(taskId);
  }

  /**
   * Starts reporting a result, tracked until it ends. It is sent on the next turn of the event loop, once the slot's
   * next lease request has gone out: the service answers that lease first, and records this result while the
   * connector runs the task it leased. The report is a span `report result` of the task's trace, which it ends.
   */
  start(taskId: string, result: TaskResult, logger: PinoLogger, trace?: TaskTrace): void {
    const reported: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() =>
        inSpan('report result', { parent: trace?.context }, (span) =>
          this.#report(taskId, result, logger, span),
        ),
      )
      // #report catches what it expects; anything else is a bug, logged rather than left an unhandled rejection.
      .catch((error: unknown) =>
        logger.error({ err: error }, 'reporting the task result failed unexpectedly'),
      )
      .finally(() => {
        trace?.end();
        if (this.#reporting.get(taskId) === reported) this.#reporting.delete(taskId);
        this.#parts.onSettled?.();
      });
    this.#reporting.set(taskId, reported);
  }

  /** Resolves once every report started so far has ended. Never rejects. */
  async settled(): Promise<void> {
    await Promise.all(this.#reporting.values());
  }

  /** Gives up the reports in flight, and those started later, `ms` from now, unless cancelled first. */
  giveUpAfter(ms: number): { cancel: () => void } {
    return abortAfter(ms, () => new ShutdownDeadlineError(), this.#deadline);
  }

  /**
   * Reports a result until the service acknowledges it, refuses it for good, or the policy's time or the shutdown
   * deadline passes. Only what can succeed later is retried (see `isRetryable`), with the policy's backoff or after
   * the `Retry-After` the service asked for. A result given up on is logged with the task's id and the service's
   * answer, and counted.
   */
  async #report(taskId: string, result: TaskResult, logger: PinoLogger, span: TraceSpan): Promise<void> {
    const report = new AbortController();
    if (this.#deadline.signal.aborted) report.abort(this.#deadline.signal.reason);
    this.#reports.add(report);
    const startedAt = performance.now();
    let attempt = 0;
    let end: ReportEnd = 'acknowledged';
    try {
      for (; ; attempt += 1) {
        try {
          await this.#parts.client.reportTaskResult(taskId, result, { signal: report.signal });
          return;
        } catch (error) {
          const retryIn = this.#retryIn(
            error,
            result,
            attempt,
            performance.now() - startedAt,
            report,
            logger,
          );
          if (typeof retryIn === 'string') {
            end = retryIn;
            return;
          }
          await sleep(retryIn, report.signal).catch(() => {});
        }
      }
    } finally {
      this.#reports.delete(report);
      span.set({
        'approval_connector.report.outcome': end,
        'approval_connector.report.attempts': attempt + 1,
      });
      if (end !== 'acknowledged') span.fail(end);
    }
  }

  /** The wait before the next attempt after `error`, logged; or how the report ends (logged and counted). */
  #retryIn(
    error: unknown,
    result: TaskResult,
    attempt: number,
    tookMs: number,
    report: AbortController,
    logger: PinoLogger,
  ): number | ReportEnd {
    // 409: a result is already recorded; this one (or an earlier delivery's) was acknowledged.
    if (error instanceof ConflictError) return 'acknowledged';
    const { metrics, random } = this.#parts;
    const failure = { err: error, status: result.status, httpStatus: statusOf(error) };
    if (report.signal.aborted) {
      metrics?.taskReportFailed('shutdown');
      logger.error(failure, 'the task result was not reported by the shutdown deadline');
      return 'shutdown';
    }
    if (!isRetryable(error, 'safe')) {
      metrics?.taskReportFailed('refused');
      logger.error(failure, 'the service refused the task result; not retrying it');
      return 'refused';
    }
    const retryInMs = retryAfterOf(error) ?? backoffDelay(attempt, { ...this.#policy.backoff, random });
    if (tookMs + retryInMs > this.#policy.retryForMs) {
      metrics?.taskReportFailed('exhausted');
      logger.error(
        { ...failure, attempts: attempt + 1 },
        'reporting the task result kept failing; giving up until the service offers the task again',
      );
      return 'exhausted';
    }
    logger.warn({ ...failure, attempt, retryInMs }, 'reporting the task result failed; retrying');
    return retryInMs;
  }
}

/** The HTTP status the service answered a failed request with, when it answered. */
function statusOf(error: unknown): number | undefined {
  return error instanceof ApiError ? error.status : undefined;
}

/** The wait the service asked for with `Retry-After`, when it did. */
function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RateLimitedError || error instanceof ServerError ? error.retryAfterMs : undefined;
}
