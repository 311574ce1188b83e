import type { Task, TaskResult, TaskResultStatus } from '../../api/index.js';
import {
  ApiError,
  ConflictError,
  type IntegrationClient,
  isRetryable,
  type LeasedTask,
  RateLimitedError,
  ServerError,
} from '../../client/index.js';
import type { StateAccess, TaskContext, TaskDeclarations } from '../../connector/index.js';
import {
  type Credentials,
  CredentialsUnreadableError,
  classifyFailure,
  TaskDataInvalidError,
} from '../../connector/index.js';
import { redactSecrets } from '../../connector/internal.js';
import { toIssues } from '../../errors.js';
import { backoffDelay } from '../../internal/backoff.js';
import { causeChain, property } from '../../internal/causes.js';
import { abortAfter, settlesWithin, sleep, untilAborted } from '../../internal/wait.js';
import { ShutdownDeadlineError, StoppingError } from '../errors.js';
import type { KeyRing } from '../keys/index.js';
import {
  type ConnectorMetrics,
  lazyChild,
  type PinoLogger,
  secretScrubbingLogger,
} from '../operations/index.js';

/**
 * How long a task's result is retried while the service keeps failing (5xx, 429, 408, 425, the network), in
 * milliseconds from its first report: about a lease, after which the service offers the task again and the result
 * kept in memory answers that offer. The report gives up on the first failure that would pass it, and ends.
 */
export const REPORT_RETRY_MS = 60_000;

/** How the poller runs. Every field is required here; `PollerOptions` documents the defaults. */
export interface PollerSettings {
  concurrency: number;
  idleMinMs: number;
  idleMaxMs: number;
  recentResults: number;
  recentResultTtlMs: number;
  watchdogMs: number;
  timeoutMs: number;
}

/** What the poller needs from the connector and the worker. */
export interface PollerParts {
  client: IntegrationClient;
  /** The connector's task types: each one's input schema, pre-check and handler. */
  tasks: TaskDeclarations<object>;
  /** Present when the connector has `authRequired`. */
  keyRing: KeyRing | undefined;
  /** The connector's own failure classification, consulted before the kit's. */
  classifyFailure: ((error: unknown) => TaskResultStatus | undefined) | undefined;
  /** The author's part of connector state, as the task context gives it. */
  state: StateAccess<object>;
  logger: PinoLogger;
  metrics: ConnectorMetrics | undefined;
  random: () => number;
  /** Told of each task that ends `success`, once its handler has returned (before its result is reported). */
  onSucceeded?: ((task: Task) => void) | undefined;
  /** Told when {@link TaskPoller.healthy} changes: the watchdog found polling stalled, or a poll succeeded again. */
  onHealthChanged?: (() => void) | undefined;
}

/**
 * Leases tasks from the service, runs each with its handler, and reports each result until the service acknowledges
 * it. A task already running or recently finished in this process is not run again when the service offers it again
 * (its lease ran out, or it was delivered twice): a finished one has its stored result reported again.
 *
 * A slot is held from a task's lease request until its handler ends; its result then travels on its own, so that the
 * slot leases the next task meanwhile rather than sit idle for a round trip. At most `concurrency` handlers run at
 * once, and the tasks held (leased, running, or with a result not yet acknowledged) never pass twice that: while the
 * service does not acknowledge results, the poller stops leasing rather than run tasks whose results pile up.
 *
 * Every duration (a task's deadline and time taken, the watchdog, how long a result is kept) is read from the
 * monotonic clock, so a step of the wall clock changes none of them.
 */
export class TaskPoller {
  readonly #parts: PollerParts;
  readonly #settings: PollerSettings;
  /**
   * The tasks' jobs (from a task's lease answered to its handler's end), each of which never rejects. The poll loop
   * leases a task only for a free slot, so a job starts as soon as its task comes: no queue is needed.
   */
  readonly #jobs = new Set<Promise<void>>();
  /** The tasks whose handlers run, each with its handler's signal, aborted at its deadline or at forced shutdown. */
  readonly #running = new Map<string, AbortController>();
  readonly #recent = new Map<string, { result: TaskResult; at: number }>();
  /**
   * Walks {@link #recent} from its oldest entry as the oldest are forgotten. One iterator kept for good: a Map's
   * iterator is live, and every entry before this one's place has been deleted, so it always stands just before the
   * oldest entry left. A new iterator per eviction would step over every entry deleted since the Map last compacted
   * its table, thousands once the worker has run more tasks than it remembers.
   */
  #oldest: Iterator<string> | undefined;
  /** Aborted when polling must stop. */
  readonly #stopPolling = new AbortController();
  /** Aborted when handlers must stop: the grace time is over. */
  readonly #force = new AbortController();
  /** Aborted when result reports give up: the grace and force times are over. Armed by {@link stop}. */
  readonly #deadline = new AbortController();
  /** The result reports in flight, each with its own signal, which the deadline aborts. */
  readonly #reports = new Set<AbortController>();
  /** The tasks whose result is being reported, by id, each with the report's end (which never rejects). */
  readonly #reporting = new Map<string, Promise<void>>();
  /** Get task requests in flight, each with the time it was sent; stopping aborts them. */
  readonly #leases = new Map<AbortController, number>();
  /** Empty answers in a row, the answers of requests sent together counted once; 0 while tasks come. */
  #idle = 0;
  /** The wait before the next request while idle, drawn when the answer that made it due came. */
  #pause = 0;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #lastPollAt = 0;
  #stalled = false;

  constructor(parts: PollerParts, settings: PollerSettings) {
    this.#parts = parts;
    this.#settings = settings;
    // One listener each, rather than a signal per request and per task combined with AbortSignal.any, which costs
    // tens of microseconds each time and more as the signals it tracks pile up.
    this.#stopPolling.signal.addEventListener(
      'abort',
      () => {
        for (const poll of this.#leases.keys()) poll.abort(this.#stopPolling.signal.reason);
        this.#changed();
      },
      { once: true },
    );
    this.#force.signal.addEventListener(
      'abort',
      () => {
        for (const handler of this.#running.values()) handler.abort(this.#force.signal.reason);
      },
      { once: true },
    );
    // Reports too: with the deadline's signal passed to each, every report in flight would add its own listener to
    // it, and Node warns of a leak past ten.
    this.#deadline.signal.addEventListener(
      'abort',
      () => {
        for (const report of this.#reports) report.abort(this.#deadline.signal.reason);
      },
      { once: true },
    );
  }

  /** Tasks being run now. */
  get inFlight(): number {
    return this.#running.size;
  }

  /** False while the watchdog finds that polling has stalled. */
  get healthy(): boolean {
    return !this.#stalled;
  }

  start(): void {
    if (this.#loop !== undefined) return;
    this.#lastPollAt = performance.now();
    this.#loop = this.#pollLoop();
    this.#watchdog = setInterval(
      () => this.#checkPolling(),
      Math.max(1, Math.floor(this.#settings.watchdogMs / 2)),
    );
    this.#watchdog.unref();
  }

  /**
   * Stops leasing tasks and lets the running ones finish for `graceMs`, reporting their results. Then it aborts the
   * rest: a task whose handler then fails is handed back (not reported), and the service offers it again when its
   * lease ends; one whose handler returns is reported. Reports give up once `forceMs` more have passed, and stop
   * resolves then at the latest, logging the ids of the tasks whose outcome the service will not learn.
   */
  async stop(graceMs: number, forceMs: number): Promise<void> {
    const deadline = abortAfter(graceMs + forceMs, () => new ShutdownDeadlineError(), this.#deadline);
    const startedAt = performance.now();
    const left = () => graceMs + forceMs - (performance.now() - startedAt);
    this.#stopPolling.abort();
    clearInterval(this.#watchdog);
    // Waited for only once the loop has ended: it may still start a job for a task it just received.
    const drained = (async () => {
      await this.#loop;
      await Promise.all(this.#jobs);
      // Every report has started once the jobs have ended: a task's job starts its report before it ends.
      await Promise.all(this.#reporting.values());
    })();
    if (await settlesWithin(drained, graceMs)) {
      deadline.cancel();
      return;
    }
    this.#parts.logger.warn(
      { inFlight: this.#running.size },
      'tasks still running after the grace time; aborting them',
    );
    this.#force.abort(new StoppingError('The connector is shutting down'));
    if (await settlesWithin(drained, left())) {
      deadline.cancel();
      return;
    }
    // Running, or their result not acknowledged.
    this.#parts.logger.error(
      { taskIds: [...new Set([...this.#running.keys(), ...this.#reporting.keys()])] },
      'tasks whose outcome is unknown at the shutdown deadline: not reported, so the service offers them again',
    );
  }

  /**
   * Keeps a lease request in flight for every free slot while the service has tasks, and a single one, with the
   * adaptive idle wait between them, while it has none: idle, the worker asks no more often than one poller would.
   * A slot is held from the lease request until the task's job ends, so a task is never leased without one.
   */
  async #pollLoop(): Promise<void> {
    const stopping = this.#stopPolling.signal;
    while (!stopping.aborted) {
      const free = this.#freeSlots();
      if (free > 0 && this.#idle === 0) {
        void this.#lease(0);
        continue;
      }
      if (free > 0 && this.#leases.size === 0) {
        // Nothing else can take a slot while this one waits: only this loop leases.
        const resting = await sleep(this.#pause, stopping).then(
          () => true,
          () => false,
        );
        if (resting) void this.#lease(this.#idle);
        continue;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
    // A lease that answered as polling stopped still starts its task's job, which stop() then waits for.
    while (this.#leases.size > 0) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  /** Resolves the poll loop's wait: a lease answered, a task's job or report ended, or polling stopped. */
  #changed(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Slots held by tasks. */
  #busySlots(): number {
    return this.#jobs.size;
  }

  /**
   * The lease requests the poller may send now: a slot free of tasks and of lease requests, within twice the
   * concurrency counting the results not yet acknowledged.
   */
  #freeSlots(): number {
    const { concurrency } = this.#settings;
    const held = this.#busySlots() + this.#leases.size;
    return Math.min(concurrency - held, 2 * concurrency - held - this.#reporting.size);
  }

  /** One Get task request; `idle` is how many empty answers in a row the poller had counted when it was sent. */
  async #lease(idle: number): Promise<void> {
    const { client, logger, metrics } = this.#parts;
    const poll = new AbortController();
    const { signal } = poll;
    this.#lastPollAt = performance.now();
    this.#leases.set(poll, this.#lastPollAt);
    if (this.#stopPolling.signal.aborted) poll.abort(this.#stopPolling.signal.reason);
    try {
      // The watchdog's abort ends the wait even when the call itself ignores the signal (and would hang forever).
      const leased = await untilAborted(client.leaseTask({ signal }), signal);
      this.#setStalled(false);
      if (leased === null) {
        this.#quiet(idle);
        return;
      }
      this.#idle = 0;
      // #handle catches what it expects; anything else is a bug, logged rather than left an unhandled rejection.
      const job: Promise<void> = this.#handle(leased)
        .catch((error: unknown) =>
          logger.error(
            { err: error, taskId: (leased.valid ? leased.task : leased).id },
            'running the task failed unexpectedly',
          ),
        )
        .finally(() => {
          this.#jobs.delete(job);
          this.#changed();
        });
      this.#jobs.add(job);
    } catch (error) {
      if (signal.aborted) return; // polling stopped, or the watchdog cut a stuck poll short
      metrics?.pollError();
      logger.warn({ err: error, retryInMs: this.#quiet(idle) }, 'polling for tasks failed; retrying');
    } finally {
      this.#leases.delete(poll);
      this.#changed();
    }
  }

  /**
   * Counts an empty (or failed) answer to a request sent after `idle` of them, and gives the wait before the next
   * request. The answers of requests sent together count once, so that the first idle wait is the shortest whatever
   * the concurrency.
   */
  #quiet(idle: number): number {
    if (idle + 1 > this.#idle) {
      this.#idle = idle + 1;
      this.#pause = this.#idleDelay(idle);
    }
    return this.#pause;
  }

  /** Adaptive idle wait: doubles while no task comes, with jitter, back to the minimum as soon as one does. */
  #idleDelay(idle: number): number {
    const { idleMinMs, idleMaxMs } = this.#settings;
    return backoffDelay(idle, {
      baseMs: idleMinMs,
      maxMs: idleMaxMs,
      jitter: 'equal',
      random: this.#parts.random,
    });
  }

  #setStalled(stalled: boolean): void {
    if (stalled === this.#stalled) return;
    this.#stalled = stalled;
    this.#parts.onHealthChanged?.();
  }

  #checkPolling(): void {
    const now = performance.now();
    const { watchdogMs } = this.#settings;
    const stuck = [...this.#leases].filter(([, sentAt]) => now - sentAt > watchdogMs);
    // With no request in flight, the loop itself stopped sending them, unless no slot is free (busy).
    const silent = this.#leases.size === 0 && now - this.#lastPollAt > watchdogMs && this.#freeSlots() > 0;
    if (stuck.length === 0 && !silent) return;
    this.#setStalled(true);
    this.#parts.logger.error(
      { sinceLastPollMs: Math.round(now - Math.min(this.#lastPollAt, ...stuck.map(([, sentAt]) => sentAt))) },
      'the task poller stopped polling; restarting the poll',
    );
    for (const [poll] of stuck) poll.abort();
  }

  async #handle(leased: LeasedTask): Promise<void> {
    const task = idAndType(leased);
    const logger = lazyChild(this.#parts.logger, { taskId: task.id, taskType: task.type });
    if (this.#offeredAgain(task.id, logger)) return;
    const { timeoutMs } = this.#settings;
    // The handler's signal: aborted at the deadline here, or by stop() at forced shutdown (see the constructor).
    const handler = new AbortController();
    if (this.#force.signal.aborted) handler.abort(this.#force.signal.reason);
    this.#running.set(task.id, handler);
    let late = false;
    const due = abortAfter(
      timeoutMs,
      () => {
        late = true;
        logger.warn({ timeoutMs }, 'task passed its deadline; aborting its signal');
        return new DOMException(`The task took longer than its deadline of ${timeoutMs} ms`, 'TimeoutError');
      },
      handler,
    );
    try {
      const started = performance.now();
      const ended = await this.#execute(leased, logger, handler.signal);
      due.cancel();
      if (ended === undefined) {
        // Interrupted by shutdown: not reported, so the lease runs out and the service offers the task again.
        logger.warn('task interrupted by shutdown; handed back to the service');
        return;
      }
      // A handler that stopped when its signal was aborted honoured the deadline: its failure is logged already.
      if (late && !ended.stoppedBySignal) {
        logger.warn(
          { status: ended.result.status, timeoutMs },
          'task finished after its deadline; reporting it late',
        );
      }
      this.#finished(leased, ended.result, performance.now() - started, logger);
    } finally {
      due.cancel();
      this.#running.delete(task.id);
    }
  }

  /**
   * Answers a task offered again while it runs here (nothing: it is not run twice), while its result is reported
   * (nothing: that report goes on), or after it finished here (its result, reported again). Gives whether it was one
   * of them.
   */
  #offeredAgain(taskId: string, logger: PinoLogger): boolean {
    if (this.#running.has(taskId)) {
      logger.info('task offered again while it runs; not running it twice');
      return true;
    }
    if (this.#reporting.has(taskId)) {
      logger.info('task offered again while its result is reported; not reporting it twice');
      return true;
    }
    const recent = this.#recentResult(taskId);
    if (recent === undefined) return false;
    logger.info(
      { status: recent.status },
      'task offered again after it finished; reporting its result again',
    );
    this.#startReport(taskId, recent, logger);
    return true;
  }

  /** Records a task's result (remembered, counted, logged, and told when it succeeded), then starts its report. */
  #finished(leased: LeasedTask, result: TaskResult, tookMs: number, logger: PinoLogger): void {
    const task = idAndType(leased);
    // Remembered before reporting: an offer that comes while the report is retried re-reports, never re-runs.
    this.#remember(task.id, result);
    this.#parts.metrics?.taskFinished(task.type, result.status, tookMs / 1000);
    logger.info({ status: result.status, durationMs: Math.round(tookMs) }, 'task finished');
    if (result.status === 'success' && leased.valid) this.#parts.onSucceeded?.(leased.task);
    this.#startReport(task.id, result, logger);
  }

  /**
   * Reports a result outside the task's slot (see the class), tracked until it ends so that stop() waits for it and
   * the poll loop learns of the room it leaves.
   */
  #startReport(taskId: string, result: TaskResult, logger: PinoLogger): void {
    // Sent on the next turn of the event loop, once the slot's next lease request has gone out: the service answers
    // that lease first, and records this result while the connector runs the task it leased.
    const reported: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.#report(taskId, result, logger))
      // #report catches what it expects; anything else is a bug, logged rather than left an unhandled rejection.
      .catch((error: unknown) =>
        logger.error({ err: error }, 'reporting the task result failed unexpectedly'),
      )
      .finally(() => {
        if (this.#reporting.get(taskId) === reported) this.#reporting.delete(taskId);
        this.#changed();
      });
    this.#reporting.set(taskId, reported);
  }

  /**
   * Runs a task and gives its result, and whether it failed because its signal was aborted; `undefined` when shutdown
   * interrupted it. `signal` is the handler's: aborted at the task's deadline or at forced shutdown, whichever comes
   * first.
   */
  async #execute(
    leased: LeasedTask,
    logger: PinoLogger,
    signal: AbortSignal,
  ): Promise<{ result: TaskResult; stoppedBySignal: boolean } | undefined> {
    const { tasks, keyRing, state, classifyFailure: ownRule } = this.#parts;
    let credentials: Credentials | undefined;
    let taskLogger = logger;
    try {
      // Answered like data that fails its type's schema: the service would otherwise offer the task forever.
      if (!leased.valid) throw new TaskDataInvalidError(leased.type ?? '(unreadable)', leased.issues);
      const { task } = leased;
      const declared = Object.hasOwn(tasks, task.type) ? tasks[task.type] : undefined;
      if (declared === undefined) {
        throw new TaskDataInvalidError(task.type, [
          { path: ['type'], message: `no handler for task type "${task.type}"`, code: 'invalid_value' },
        ]);
      }
      const input = declared.input.safeParse(task.data);
      if (!input.success) throw new TaskDataInvalidError(task.type, toIssues(input.error));
      if (keyRing !== undefined) {
        const sealed = task.data.credentials;
        if (sealed === undefined) throw new CredentialsUnreadableError('The task carries no credentials');
        credentials = await keyRing.open(sealed);
        // As in the result's meta: an author's line may quote them (an error from the source, say).
        taskLogger = secretScrubbingLogger(logger, Object.values(credentials));
      }
      const context: TaskContext<object> = {
        taskId: task.id,
        type: task.type,
        idempotencyKey: task.id,
        signal,
        logger: taskLogger,
        credentials,
        task,
        state,
      };
      if (declared.precheck !== undefined) {
        const verdict = await declared.precheck(input.data, context);
        if (verdict !== true) return { result: scrub(verdict, credentials), stoppedBySignal: false };
      }
      const outcome = await declared.run(input.data, context);
      const meta = outcome?.meta;
      const result: TaskResult = meta === undefined ? { status: 'success' } : { status: 'success', meta };
      return { result: scrub(result, credentials), stoppedBySignal: false };
    } catch (error) {
      if (this.#force.signal.aborted) return undefined;
      const { status, meta } = classifyFailure(error, {
        ...(ownRule ? { classifyFailure: ownRule } : {}),
        secrets: credentials === undefined ? [] : Object.values(credentials),
      });
      taskLogger.warn({ status, code: meta.code }, 'task failed');
      return { result: { status, meta: { ...meta } }, stoppedBySignal: causedByAbort(error, signal) };
    }
  }

  /**
   * Reports a result until the service acknowledges it, refuses it for good, or {@link REPORT_RETRY_MS} or the
   * shutdown deadline passes. Only what can succeed later is retried (see `isRetryable`), with backoff or after the
   * `Retry-After` the service asked for. A result given up on is logged with the task's id and the service's answer,
   * and counted; it stays remembered, so a new offer of the task reports it again.
   */
  async #report(taskId: string, result: TaskResult, logger: PinoLogger): Promise<void> {
    const report = new AbortController();
    if (this.#deadline.signal.aborted) report.abort(this.#deadline.signal.reason);
    this.#reports.add(report);
    const startedAt = performance.now();
    try {
      for (let attempt = 0; ; attempt += 1) {
        try {
          await this.#parts.client.reportTaskResult(taskId, result, { signal: report.signal });
          return;
        } catch (error) {
          // 409: a result is already recorded; this one (or an earlier delivery's) was acknowledged.
          if (error instanceof ConflictError) return;
          const failure = { err: error, status: result.status, httpStatus: statusOf(error) };
          if (report.signal.aborted) {
            this.#parts.metrics?.taskReportFailed('shutdown');
            logger.error(failure, 'the task result was not reported by the shutdown deadline');
            return;
          }
          if (!isRetryable(error, 'safe')) {
            this.#parts.metrics?.taskReportFailed('refused');
            logger.error(failure, 'the service refused the task result; not retrying it');
            return;
          }
          const retryInMs = retryAfterOf(error) ?? this.#idleDelay(attempt);
          if (performance.now() - startedAt + retryInMs > REPORT_RETRY_MS) {
            this.#parts.metrics?.taskReportFailed('exhausted');
            logger.error(
              { ...failure, attempts: attempt + 1 },
              'reporting the task result kept failing; giving up until the service offers the task again',
            );
            return;
          }
          logger.warn({ ...failure, attempt, retryInMs }, 'reporting the task result failed; retrying');
          await sleep(retryInMs, report.signal).catch(() => {});
        }
      }
    } finally {
      this.#reports.delete(report);
    }
  }

  #remember(taskId: string, result: TaskResult): void {
    this.#recent.set(taskId, { result, at: performance.now() });
    while (this.#recent.size > this.#settings.recentResults) {
      this.#oldest ??= this.#recent.keys();
      this.#recent.delete(this.#oldest.next().value as string);
    }
  }

  #recentResult(taskId: string): TaskResult | undefined {
    const entry = this.#recent.get(taskId);
    if (entry === undefined) return undefined;
    if (performance.now() - entry.at > this.#settings.recentResultTtlMs) {
      this.#recent.delete(taskId);
      return undefined;
    }
    return entry.result;
  }
}

/**
 * Whether `error` came of the abort of `signal`: it is, or was caused by, the signal's reason, or an abort of the
 * handler's own (an `AbortError`, as a library that does not pass the reason on rejects with) after the signal's.
 */
function causedByAbort(error: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  for (const link of causeChain(error)) {
    if (link === signal.reason || property(link, 'name') === 'AbortError') return true;
  }
  return false;
}

/** The HTTP status the service answered a failed request with, when it answered. */
function statusOf(error: unknown): number | undefined {
  return error instanceof ApiError ? error.status : undefined;
}

/** The wait the service asked for with `Retry-After`, when it did. */
function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RateLimitedError || error instanceof ServerError ? error.retryAfterMs : undefined;
}

/** A result whose `meta` carries none of the task's credentials. */
function scrub(result: TaskResult, credentials: Credentials | undefined): TaskResult {
  if (result.meta === undefined || credentials === undefined) return result;
  return {
    ...result,
    meta: JSON.parse(redactSecrets(JSON.stringify(result.meta), Object.values(credentials))),
  };
}

/** A leased task's id and type, also when its data broke the contract (its type then as far as it could be read). */
function idAndType(leased: LeasedTask): { id: string; type: string } {
  return leased.valid ? leased.task : { id: leased.id, type: leased.type ?? '' };
}
