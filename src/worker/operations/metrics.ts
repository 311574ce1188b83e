/**
 * The connector's Prometheus metrics, on a registry of their own. Every metric and label is listed in
 * `docs/operations.md`.
 * @module
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import type { TaskResultStatus } from '../../api/index.js';
import type { SourceKind } from '../../connector/internal.js';
import { crossCheck, func, parseOptions } from '../../internal/options.js';
import { PUSH_METRIC_NAMES, PushMetrics } from './push-metrics.js';

/**
 * How a sync run read the source: as its kind declares (changes since the cursor, a full snapshot), a
 * reconciliation, or a lookup of the approvals that tasks just decided.
 */
export type SyncMode = SourceKind | 'reconcile' | 'lookup';

/** How a sync run ended. */
export type SyncOutcome = 'success' | 'failure';

/**
 * What happened to the connector's key: a key `created`, `rotated` or `adopted` from the key store, and a check that
 * found it `expiring` (due and not replaced) or `expired`.
 */
export type KeyEvent = 'created' | 'rotated' | 'adopted' | 'expiring' | 'expired';

const KEY_EVENTS: readonly KeyEvent[] = ['created', 'rotated', 'adopted', 'expiring', 'expired'];

/**
 * Why a task's result was given up on without the service acknowledging it: the service `refused` it for good (a
 * 4xx other than 408, 409, 425 and 429), the report's retries were `exhausted` (the service kept failing), or the
 * `shutdown` deadline came first. The result is kept: a new offer of the task reports it again.
 */
export type TaskReportFailure = 'refused' | 'exhausted' | 'shutdown';

const TASK_REPORT_FAILURES: readonly TaskReportFailure[] = ['refused', 'exhausted', 'shutdown'];

/** Prefix of every metric name. */
export const METRIC_PREFIX = 'approval_connector_';

/** Upper bounds, in seconds, of the default buckets of `approval_connector_task_duration_seconds`. */
export const DEFAULT_TASK_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
]);

/** Options of {@link ConnectorMetrics}. */
export interface ConnectorMetricsOptions {
  /**
   * Registry to register the metrics on, to serve them beside an application's own. It must not hold metrics of
   * the same names already, so two connectors never share one registry. Never the global default registry unless
   * passed here explicitly.
   * @default a new registry owned by this instance
   */
  registry?: Registry;
  /**
   * Upper bounds, in seconds, of the buckets of `approval_connector_task_duration_seconds`.
   * @default DEFAULT_TASK_DURATION_BUCKETS (50 ms to 5 minutes)
   */
  taskDurationBuckets?: readonly number[];
  /**
   * The clock, in milliseconds since the epoch. Read at every scrape for the sync lag and the key expiry.
   * @default Date.now
   */
  now?: () => number;
}

/** A rendered scrape: the body and the content type to serve it with. */
export interface RenderedMetrics {
  contentType: string;
  body: string;
}

/**
 * The connector's metrics, one small method per event. The sync lag and the key expiry are computed at each scrape
 * from the instants recorded, so they keep moving while nothing else happens (a stalled sync shows a growing lag).
 *
 * Recording never throws: the methods are called on the task and sync paths, where a metric must not cost a result
 * or a run. A value that would corrupt a metric (a negative count or duration, an invalid `Date`) is dropped.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { ConnectorMetrics } from './metrics.js';
 *
 * const metrics = new ConnectorMetrics();
 * metrics.approvalsPushed(50);
 * metrics.syncRun('incremental', 'success');
 * metrics.syncCursor(new Date('2026-05-01T10:00:00.000Z'));
 * const { contentType, body } = await metrics.render();
 * ```
 */
export class ConnectorMetrics {
  /** The registry the metrics are registered on. */
  readonly registry: Registry;
  /** The push path's metrics (`approval_connector_push_*`). */
  readonly push: PushMetrics;
  readonly #now: () => number;
  readonly #approvalsPushed: Counter;
  readonly #syncRuns: Counter<'mode' | 'outcome'>;
  readonly #tasks: Counter<'type' | 'status'>;
  readonly #taskDuration: Histogram<'type'>;
  readonly #pollErrors: Counter;
  readonly #taskReportFailures: Counter<'reason'>;
  readonly #clientRetries: Counter<'endpoint' | 'reason'>;
  readonly #ready: Gauge;
  readonly #syncLag: Gauge;
  readonly #keyExpiry: Gauge;
  readonly #keyEvents: Counter<'event'>;
  #cursorAt: number | undefined;
  #keyExpiresAt: number | undefined;

  constructor(options: ConnectorMetricsOptions = {}) {
    const compiled = parseOptions(metricsOptionsSchema, options, 'metrics options');
    const { registry } = compiled;
    const buckets = [...compiled.taskDurationBuckets];
    this.registry = registry;
    this.#now = compiled.now;
    const registers = [registry];

    this.#approvalsPushed = new Counter({
      name: `${METRIC_PREFIX}approvals_pushed_total`,
      help: 'Approvals the service acknowledged on Update approvals.',
      registers,
    });
    this.#syncRuns = new Counter({
      name: `${METRIC_PREFIX}sync_runs_total`,
      help: 'Sync runs that ended, by mode and outcome.',
      labelNames: ['mode', 'outcome'] as const,
      registers,
    });
    // Clock skew between the source and the worker must not show as a negative lag.
    this.#syncLag = new Gauge({
      name: `${METRIC_PREFIX}sync_lag_seconds`,
      help: 'Seconds from the lastModified of the saved sync cursor to now; absent before a cursor is saved.',
      registers,
      collect: () =>
        this.#collectSeconds(this.#syncLag, this.#cursorAt, (at) => Math.max(0, this.#now() - at)),
    });
    this.#tasks = new Counter({
      name: `${METRIC_PREFIX}tasks_total`,
      help: 'Tasks that finished, by task type and the status of their result.',
      labelNames: ['type', 'status'] as const,
      registers,
    });
    this.#taskDuration = new Histogram({
      name: `${METRIC_PREFIX}task_duration_seconds`,
      help: 'Time a task took from its receipt to its result, by task type.',
      labelNames: ['type'] as const,
      buckets,
      registers,
    });
    this.#pollErrors = new Counter({
      name: `${METRIC_PREFIX}poll_errors_total`,
      help: 'Get task requests that failed after the client retries.',
      registers,
    });
    this.#taskReportFailures = new Counter({
      name: `${METRIC_PREFIX}task_reports_failed_total`,
      help: 'Task results given up on without the service acknowledging them, by reason.',
      labelNames: ['reason'] as const,
      registers,
    });
    for (const reason of TASK_REPORT_FAILURES) this.#taskReportFailures.inc({ reason }, 0);
    this.#clientRetries = new Counter({
      name: `${METRIC_PREFIX}client_retries_total`,
      help: 'Requests to the service the client retried, by endpoint and the reason of the failure.',
      labelNames: ['endpoint', 'reason'] as const,
      registers,
    });
    this.#keyExpiry = new Gauge({
      name: `${METRIC_PREFIX}key_expiry_seconds`,
      help: 'Seconds until the public key registered with the service expires (negative once expired); absent without one.',
      registers,
      collect: () => this.#collectSeconds(this.#keyExpiry, this.#keyExpiresAt, (at) => at - this.#now()),
    });
    this.#keyEvents = new Counter({
      name: `${METRIC_PREFIX}key_events_total`,
      help: 'Connector keys created, rotated or adopted, and checks that found the key expiring or expired.',
      labelNames: ['event'] as const,
      registers,
    });
    // Every event is shown from the start, so that an alert on its increase sees the first one.
    for (const event of KEY_EVENTS) this.#keyEvents.inc({ event }, 0);
    this.#ready = new Gauge({
      name: `${METRIC_PREFIX}ready`,
      help: '1 while the connector is ready to take work, 0 otherwise.',
      registers,
    });
    this.#ready.set(0);
    this.push = new PushMetrics(registry, METRIC_PREFIX, this.#now);
  }

  /** Counts approvals the service acknowledged. A count that is not a finite number from 0 up is dropped. */
  approvalsPushed(count: number): void {
    if (isCount(count)) this.#approvalsPushed.inc(count);
  }

  /** Counts a sync run that ended. */
  syncRun(mode: SyncMode, outcome: SyncOutcome): void {
    this.#syncRuns.inc({ mode, outcome });
  }

  /**
   * Records the lastModified of the cursor just saved; `undefined` when there is none (before the first save). An
   * invalid `Date` counts as none: the lag is then absent.
   */
  syncCursor(lastModified: Date | undefined): void {
    this.#cursorAt = timeOf(lastModified);
  }

  /**
   * Counts a task that finished with the given result status, and observes how long it took. A duration that is not
   * a finite number from 0 up is not observed; the task is still counted.
   */
  taskFinished(type: string, status: TaskResultStatus, seconds: number): void {
    this.#tasks.inc({ type, status });
    if (isCount(seconds)) this.#taskDuration.observe({ type }, seconds);
  }

  /** Counts a poll for tasks that failed. */
  pollError(): void {
    this.#pollErrors.inc();
  }

  /** Counts a task result given up on without the service acknowledging it. */
  taskReportFailed(reason: TaskReportFailure): void {
    this.#taskReportFailures.inc({ reason });
  }

  /**
   * Counts a retry of a request to the service: `endpoint` is the endpoint's name (`putApprovals`), `reason` why
   * (`server_error`: the client's `RetryReason`).
   */
  clientRetry(endpoint: string, reason: string): void {
    this.#clientRetries.inc({ endpoint, reason });
  }

  /**
   * Records when the public key registered with the service expires; `undefined` when the connector has no key. An
   * invalid `Date` counts as none: the expiry is then absent.
   */
  keyExpiresAt(expiresAt: Date | undefined): void {
    this.#keyExpiresAt = timeOf(expiresAt);
  }

  /** Counts an event of the connector's key. */
  keyEvent(event: KeyEvent): void {
    this.#keyEvents.inc({ event });
  }

  /** Sets whether the connector is ready to take work. */
  ready(isReady: boolean): void {
    this.#ready.set(isReady ? 1 : 0);
  }

  // Absent rather than 0 when unknown: a 0 lag or expiry would read as "all is well".
  #collectSeconds(gauge: Gauge, at: number | undefined, toMs: (at: number) => number): void {
    if (at === undefined) gauge.remove();
    else gauge.set(toMs(at) / 1000);
  }

  /** Every metric of the registry in the Prometheus text format. */
  async render(): Promise<RenderedMetrics> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

const METRIC_NAMES = [
  'approvals_pushed_total',
  'sync_runs_total',
  'sync_lag_seconds',
  'tasks_total',
  'task_duration_seconds',
  'poll_errors_total',
  'task_reports_failed_total',
  'client_retries_total',
  'key_expiry_seconds',
  'key_events_total',
  'ready',
  ...PUSH_METRIC_NAMES,
].map((name) => `${METRIC_PREFIX}${name}`);

function isCount(value: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function timeOf(value: Date | undefined): number | undefined {
  const time = value instanceof Date ? value.getTime() : Number.NaN;
  return Number.isNaN(time) ? undefined : time;
}

function isIncreasing(buckets: unknown): buckets is readonly number[] {
  return (
    Array.isArray(buckets) &&
    buckets.length > 0 &&
    buckets.every(
      (bound, index) =>
        typeof bound === 'number' && Number.isFinite(bound) && (index === 0 || bound > buckets[index - 1]),
    )
  );
}

/**
 * The schema of {@link ConnectorMetricsOptions} without the check that the registry is free, which the connector
 * applies to its `metrics` option too (with {@link registryIsFree}).
 */
export const metricsOptionsShape = z.strictObject({
  // A fresh registry per instance: a default one shared between instances would refuse the second.
  registry: z
    .custom<Registry>((value) => value instanceof Registry, { error: 'a prom-client Registry' })
    .default(() => new Registry()),
  taskDurationBuckets: z
    .custom<readonly number[]>(isIncreasing, {
      error: 'a non-empty list of finite numbers in increasing order',
    })
    .default(DEFAULT_TASK_DURATION_BUCKETS),
  now: func<() => number>().default(() => Date.now),
});

/** A registry that holds the connector's metrics already would make two connectors count into one. */
export const registryIsFree = crossCheck<{ registry: Registry }>((options, context) => {
  const taken = METRIC_NAMES.filter((name) => options.registry.getSingleMetric(name) !== undefined);
  if (taken.length > 0) {
    context.addIssue({
      code: 'custom',
      path: ['registry'],
      input: options.registry,
      message: `a registry without the connector's metrics (it holds ${taken.join(', ')} already: give each connector its own)`,
    });
  }
});

const metricsOptionsSchema = metricsOptionsShape.check(registryIsFree);
