import type { Task, TaskResultStatus } from '../../api/index.js';
import type { IntegrationClient, LeasedTask } from '../../client/index.js';
import type { StateAccess, TaskDeclarations } from '../../connector/index.js';
import { withContext } from '../../internal/tracing.js';
import { settlesWithin } from '../../internal/wait.js';
import { StoppingError } from '../errors.js';
import type { KeyRing } from '../keys/index.js';
import {
  type ConnectorMetrics,
  lazyChild,
  type PinoLogger,
  type ReadinessCheck,
} from '../operations/index.js';
import { Leasing } from './leasing.js';
import { RecentResults } from './recent-results.js';
import { ResultReporter } from './reporter.js';
import { idAndType, runTask, showsSourceState, type TaskRun } from './run-task.js';
import { type LeaseTiming, TaskTrace } from './task-trace.js';

export { REPORT_RETRY_MS } from './reporter.js';

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
  onSourceState?: ((task: Task) => void) | undefined;
  /** Told when {@link TaskPoller.healthy} changes: the watchdog found polling stalled, or a poll succeeded again. */
  onHealthChanged?: (() => void) | undefined;
}

/**
 * Leases tasks from the service, runs each with its handler, and reports each result until the service acknowledges
 * it. A task already running or recently finished in this process is not run again when the service offers it again
 * (its lease ran out, or it was delivered twice): a finished one has its stored result reported again.
 *
 * Three parts do the work: the {@link Leasing} (slots, lease requests, the idle wait, the watchdog), {@link runTask}
 * (one task, from its data to its result) and the {@link ResultReporter} (each result until it is acknowledged, with
 * a retry policy of its own). A slot is held from a task's lease request until its handler ends; its result then
 * travels on its own, so that the slot leases the next task meanwhile rather than sit idle for a round trip. At most
 * `concurrency` handlers run at once, and the tasks held (leased, running, or with a result not yet acknowledged)
 * never pass twice that: while the service does not acknowledge results, the poller stops leasing rather than run
 * tasks whose results pile up.
 *
 * Every duration (a task's deadline and time taken, the watchdog, how long a result is kept) is read from the
 * monotonic clock, so a step of the wall clock changes none of them.
 */
export class TaskPoller {
  readonly #parts: PollerParts;
  readonly #settings: PollerSettings;
  readonly #leasing: Leasing;
  readonly #reporter: ResultReporter;
  readonly #recent: RecentResults;
  /**
   * The tasks whose handlers run, each with its handler's signal (aborted at its deadline or at forced shutdown) and
   * how many times it was delivered here.
   */
  readonly #running = new Map<string, { handler: AbortController; deliveries: number }>();
  /** Aborted when handlers must stop: the grace time is over. */
  readonly #force = new AbortController();

  constructor(parts: PollerParts, settings: PollerSettings) {
    this.#parts = parts;
    this.#settings = settings;
    const { client, logger, metrics, random } = parts;
    // Its own retry policy: how often an idle worker polls does not change how a result is retried.
    this.#reporter = new ResultReporter({
      client,
      metrics,
      random,
      onSettled: () => this.#leasing.changed(),
    });
    this.#leasing = new Leasing(
      {
        client,
        logger,
        metrics,
        random,
        run: (leased, lease) => this.#handle(leased, lease),
        backlog: () => this.#reporter.pending,
        onHealthChanged: parts.onHealthChanged,
      },
      settings,
    );
    this.#recent = new RecentResults(settings.recentResults, settings.recentResultTtlMs);
    // One listener, rather than a signal per task combined with AbortSignal.any, which costs tens of microseconds
    // each time and more as the signals it tracks pile up.
    this.#force.signal.addEventListener(
      'abort',
      () => {
        for (const { handler } of this.#running.values()) handler.abort(this.#force.signal.reason);
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
    return this.#leasing.healthy;
  }

  /** Milliseconds since a lease request last succeeded; `undefined` before start() and after stop(). */
  get leaseAgeMs(): number | undefined {
    return this.#leasing.leaseAgeMs;
  }

  /**
   * The `poller` part of `/readyz`: `stalled` while the watchdog finds polling stalled, `not leasing` once no lease
   * request has succeeded for `watchdogMs` (the requests fail, or every slot is held), `stopped` once stopped.
   */
  check(): ReadinessCheck {
    const leaseAgeMs = this.leaseAgeMs;
    if (leaseAgeMs === undefined) return { status: 'stopped' };
    const { watchdogMs, concurrency } = this.#settings;
    const status = !this.healthy ? 'stalled' : leaseAgeMs >= watchdogMs ? 'not leasing' : 'ok';
    return {
      status,
      lastLeaseAgeSeconds: Math.round(leaseAgeMs) / 1000,
      notLeasingAfterSeconds: watchdogMs / 1000,
      running: this.#running.size,
      concurrency,
    };
  }

  start(): void {
    this.#leasing.start();
  }

  /**
   * Stops leasing tasks and lets the running ones finish for `graceMs`, reporting their results. Then it aborts the
   * rest: a task whose handler then fails is handed back (not reported), and the service offers it again when its
   * lease ends; one whose handler returns is reported. Reports give up once `forceMs` more have passed, and stop
   * resolves then at the latest, logging the ids of the tasks whose outcome the service will not learn.
   */
  async stop(graceMs: number, forceMs: number): Promise<void> {
    const deadline = this.#reporter.giveUpAfter(graceMs + forceMs);
    const startedAt = performance.now();
    const left = () => graceMs + forceMs - (performance.now() - startedAt);
    this.#leasing.stop();
    const drained = (async () => {
      await this.#leasing.drained();
      // Every report has started once the jobs have ended: a task's job starts its report before it ends.
      await this.#reporter.settled();
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
      { taskIds: [...new Set([...this.#running.keys(), ...this.#reporter.taskIds])] },
      'tasks whose outcome is unknown at the shutdown deadline: not reported, so the service offers them again',
    );
  }

  /**
   * A leased task's job, in its slot: run it (unless it is offered again), then start its report. Its trace ends with
   * its report, or here when it has none.
   */
  async #handle(leased: LeasedTask, lease: LeaseTiming): Promise<void> {
    const task = idAndType(leased);
    const logger = lazyChild(this.#parts.logger, { taskId: task.id, taskType: task.type });
    const trace = new TaskTrace(task, Object.hasOwn(this.#parts.tasks, task.type), lease);
    if (this.#offeredAgain(task.id, logger, trace)) return;
    trace.delivered(1);
    // The handler's signal: aborted at the deadline by runTask, or by stop() at forced shutdown (see the constructor).
    const handler = new AbortController();
    if (this.#force.signal.aborted) handler.abort(this.#force.signal.reason);
    const running = { handler, deliveries: 1 };
    this.#running.set(task.id, running);
    let reported = false;
    try {
      const { tasks, keyRing, classifyFailure, state } = this.#parts;
      const inputs = { tasks, keyRing, classifyFailure, state, logger, timeoutMs: this.#settings.timeoutMs };
      const run = await withContext(trace.context, () =>
        runTask(leased, { ...inputs, handler, interrupted: this.#force.signal }),
      );
      if (run === undefined) trace.interrupted();
      // In the task's context: its `task finished` line carries the trace.
      else
        reported = withContext(trace.context, () =>
          this.#finished(leased, run, logger, { trace, deliveries: running.deliveries }),
        );
    } finally {
      this.#running.delete(task.id);
      if (!reported) trace.end();
    }
  }

  /**
   * Answers a task offered again while it runs here (nothing: it is not run twice), while its result is reported
   * (nothing: that report goes on), or after it finished here (its result, reported again). Gives whether it was one
   * of them.
   */
  #offeredAgain(taskId: string, logger: PinoLogger, trace: TaskTrace): boolean {
    const running = this.#running.get(taskId);
    if (running !== undefined) {
      running.deliveries += 1;
      trace.delivered(running.deliveries, 'running');
      trace.end();
      logger.info('task offered again while it runs; not running it twice');
      return true;
    }
    const recent = this.#recent.get(taskId);
    if (this.#reporter.isReporting(taskId)) {
      if (recent !== undefined) trace.delivered(this.#recent.delivered(taskId), 'reporting');
      trace.end();
      logger.info('task offered again while its result is reported; not reporting it twice');
      return true;
    }
    if (recent === undefined) return false;
    trace.delivered(this.#recent.delivered(taskId), 'finished');
    trace.result(recent.status);
    logger.info(
      { status: recent.status },
      'task offered again after it finished; reporting its result again',
    );
    this.#reporter.start(taskId, recent, logger, trace);
    return true;
  }

  /**
   * Records a task's result (remembered, counted, logged, and told when it shows the source's state), then starts
   * its report, which ends the task's trace. Gives `true`.
   */
  #finished(
    leased: LeasedTask,
    { result, tookMs, byPrecheck }: TaskRun,
    logger: PinoLogger,
    { trace, deliveries }: { trace: TaskTrace; deliveries: number },
  ): true {
    const task = idAndType(leased);
    // Remembered before reporting: an offer that comes while the report is retried re-reports, never re-runs.
    this.#recent.remember(task.id, result, deliveries);
    trace.delivered(deliveries);
    trace.result(result.status);
    this.#parts.metrics?.taskFinished(task.type, result.status, tookMs / 1000);
    logger.info({ status: result.status, durationMs: Math.round(tookMs) }, 'task finished');
    if (leased.valid && showsSourceState({ result, byPrecheck })) this.#parts.onSourceState?.(leased.task);
    this.#reporter.start(task.id, result, logger, trace);
    return true;
  }
}
