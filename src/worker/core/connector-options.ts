import { resolve } from 'node:path';
import { z } from 'zod';
import type { ClientOptions } from '../../client/index.js';
import { CLIENT_SECRET_OPTIONS, clientOptionsSchema } from '../../client/internal.js';
import { func, integer, parseOptions, pinoLogger, withMethods } from '../../internal/options.js';
import {
  FileKeyStore,
  type KeyRingOptions,
  type KeyStore,
  keyRingOptionsShape,
  marginUnderLifetime,
} from '../keys/index.js';
import {
  type ConnectorMetricsOptions,
  type LoggerOptions,
  loggerOptionsSchema,
  metricsOptionsShape,
  type OperationsServerOptions,
  operationsServerOptionsSchema,
  type PinoLogger,
  registryIsFree,
} from '../operations/index.js';
import { PUSH_SECRET_OPTIONS, type PushOptions, pushOptionsSchema } from '../push/index.js';
import { type Schedule, scheduleSchema } from '../sync/index.js';

/** Where the key pairs are kept when no `keyStore` is given, relative to the working directory. */
export const DEFAULT_KEY_FILE = '.connector/keys.json';

/**
 * What `stop()` may take beyond `shutdown.graceMs + shutdown.forceMs`, in milliseconds: the time to cut short the
 * calls still in flight at that deadline and close the connections. `stop()` resolves, and `runConnector` ends the
 * process, at most `graceMs + forceMs + SHUTDOWN_MARGIN_MS` after the stop began.
 */
export const SHUTDOWN_MARGIN_MS = 1_000;

/** Options of the sync loop. */
export interface SyncOptions {
  /**
   * Run the sync loop in this worker. With several replicas, let exactly one of them sync.
   * @default true
   */
  enabled?: boolean;
  /**
   * When to sync: a cron expression (UTC) or milliseconds between the end of one run and the start of the next.
   * @default 60000
   */
  schedule?: Schedule;
  /**
   * Run a sync as soon as the connector has started, rather than one `schedule` later.
   * @default true
   */
  runOnStart?: boolean;
  /**
   * When to reconcile the service's open approvals with the source (needs `lookup()`); `false` turns it off.
   * @default '17 * * * *' (hourly)
   */
  reconcileSchedule?: Schedule | false;
  /**
   * How long after a task succeeds the worker syncs the approval it decided, in milliseconds, so that the decision
   * shows in the service within seconds rather than at the next scheduled run; `false` turns it off. Requests that
   * come before that run, or during it, are served together by one run: never two at once, and the schedules are
   * left alone. With `lookup()`, the run asks it about those approvals only (in any role, the cursor untouched);
   * without, it is a sync run as the source declares, in a worker that syncs. See `docs/connector.md`, "After a task".
   * @default 1000
   */
  afterTaskMs?: number | false;
  /**
   * Approvals in one Update approvals request, at most.
   * @default 100
   */
  batchSize?: number;
  /**
   * Bytes of one Update approvals request's body, at most: UTF-8 bytes of the JSON as it is sent. (One approval
   * larger than this on its own is still sent, alone.)
   * @default 1048576 (1 MiB)
   */
  batchBytes?: number;
  /**
   * Update approvals requests in flight at once.
   * @default 4
   */
  concurrency?: number;
  /**
   * How far before the saved cursor an incremental read starts again, in milliseconds, so that changes the source
   * commits late, or stamps coarsely (to the minute, say), are not missed.
   * @default 300000 (5 minutes)
   */
  overlapMs?: number;
  /**
   * Approvals per `lookup()` call during reconciliation.
   * @default 100
   */
  reconcileChunkSize?: number;
  /**
   * How a run reads its source again, in place, when a read fails with what may succeed later (the failure mapping's
   * `serviceUnavailable`: 429, 408, 5xx, network errors, timeouts): after the failure's `retryAfterMs` (its
   * `Retry-After`), or else after a backoff. What was read is pushed first, and the read resumes from the last
   * acknowledged record of an ordered source; an unordered source and a snapshot are read again from their start.
   * The budget counts failures in a row without progress: a run that gets further starts it afresh. See
   * `docs/connector.md`, "When the source fails".
   * @default {} (5 retries in a row within 2 minutes)
   */
  sourceRetry?: {
    /**
     * Failed reads in a row, without progress in between, that are read again. `0` turns retries off: a failed read
     * fails the run.
     * @default 5
     */
    retries?: number;
    /**
     * The backoff's ceiling before the first retry when the failure did not say how long to wait; it doubles for each
     * later one (full jitter below it).
     * @default 1000
     */
    baseDelayMs?: number;
    /**
     * The backoff's largest ceiling. A `retryAfterMs` from the source is honoured even when longer.
     * @default 30000
     */
    maxDelayMs?: number;
    /**
     * Time budget of the failures in a row, from the first of them, on the monotonic clock: a wait that would end
     * past it is not started, and the run fails (the next run resumes from the saved cursor).
     * @default 120000
     */
    maxRetryTimeMs?: number;
  };
}

/** Options of the task poller. */
export interface PollerOptions {
  /**
   * Run the task poller in this worker.
   * @default true
   */
  enabled?: boolean;
  /**
   * Tasks run at once.
   * @default 4
   */
  concurrency?: number;
  /**
   * The shortest wait between polls while no task comes, in milliseconds; the wait doubles up to `idleMaxMs`.
   * @default 250
   */
  idleMinMs?: number;
  /**
   * The longest wait between polls while no task comes, in milliseconds. Idle, the poller sends one request at a
   * time, each wait drawn from half this to this: the default keeps a task created just after a poll within 1.4 s
   * of being leased, at about one request a second (see `docs/connector.md`).
   * @default 1400
   */
  idleMaxMs?: number;
  /**
   * Results of finished tasks kept to answer a redelivery without running the action again.
   * @default 10000
   */
  recentResults?: number;
  /**
   * How long a finished task's result is kept for that, in milliseconds.
   * @default 86400000 (1 day)
   */
  recentResultTtlMs?: number;
  /**
   * How long the poller may go without polling (while not busy) before the watchdog restarts the poll and reports
   * the worker not ready, in milliseconds.
   * @default 120000
   */
  watchdogMs?: number;
  /**
   * A task's deadline, in milliseconds from its receipt: then its handler's `signal` is aborted (with a
   * `TimeoutError`), so that the task is answered before the service's lease on it ends and it is offered to another
   * worker. Keep it well under the lease (60 s in the reference backend), leaving time to report. A result that comes
   * after the deadline is still reported, and logged as late.
   * @default 30000
   */
  timeoutMs?: number;
}

/** Options of the graceful shutdown. */
export interface ShutdownOptions {
  /**
   * How long running tasks may take to finish after a stop, in milliseconds, before their `signal` is aborted.
   * @default 30000
   */
  graceMs?: number;
  /**
   * How long aborted tasks may take to settle and report, in milliseconds, after the grace time. At its end, calls
   * still in flight are cut short and the ids of the tasks whose outcome is unknown are logged.
   * @default 5000
   */
  forceMs?: number;
}

/**
 * Options of a `ConnectorWorker`: where the service is, and how the kit runs the connector. Every option, at every
 * level, is checked when the worker is built: a bad value or an unknown key is a `ValidationError` that names the
 * option (see `docs/connector.md`, "Options").
 */
export interface ConnectorOptions {
  /**
   * Where the service is and the connector token: the options of the `IntegrationClient` the connector uses. The
   * connector counts each retry in `client_retries_total` and logs it at debug, then calls `onRetry` when given.
   * Its pool's `connections` default to what the worker can have in flight at once (see {@link poolConnections}),
   * not the client's 16, so that the pool never holds back the poller's or the sync's concurrency.
   */
  service: ClientOptions;
  /**
   * A pino logger to log through (the kit adds its redaction), or options for the one the kit creates.
   * @default {} (a new logger at level `info`, writing JSON lines to stdout)
   */
  logger?: PinoLogger | LoggerOptions;
  /**
   * Where the key pairs are kept, when the connector has `authRequired`. In a container, mount a volume there, or
   * use a `ReadOnlyKeyStore` over a mounted secret (see `docs/keys.md`).
   * @default a `FileKeyStore` at `.connector/keys.json` under the working directory
   */
  keyStore?: KeyStore;
  /**
   * Key lifetime and rotation margin (each documented, with its default, on `KeyRingOptions`); the margin must be
   * less than the lifetime. A running connector rotates its key when the margin begins (see `docs/keys.md`).
   * @default {}
   */
  keys?: Pick<KeyRingOptions, 'keyLifetimeMs' | 'rotationMarginMs'>;
  /**
   * The sync loop.
   * @default {}
   */
  sync?: SyncOptions;
  /**
   * The task poller: how many tasks run at once, how it polls, a task's deadline. (Named `tasks` before 0.2; the
   * connector's `tasks` are the task types it declares.)
   * @default {}
   */
  poller?: PollerOptions;
  /**
   * The graceful shutdown. `stop()` resolves at most `graceMs + forceMs + SHUTDOWN_MARGIN_MS` (1 s) after it began,
   * whatever the service and the handlers do: every call it makes carries that deadline. Under Kubernetes, set
   * `terminationGracePeriodSeconds` above it (with the defaults, 36 s: the default of 30 s is too short).
   * @default {}
   */
  shutdown?: ShutdownOptions;
  /**
   * The operations HTTP endpoints (`/healthz`, `/readyz`, `/metrics`): their port and host (each documented, with
   * its default, on `OperationsServerOptions`: port 9464 on 127.0.0.1), or `false` for none. Checked when the
   * worker is built; opened once it has started.
   * @default false
   */
  operations?: Pick<OperationsServerOptions, 'port' | 'host'> | false;
  /**
   * The push path's ingress, where a connector declares one (`push({...})` beside `lookup()`) and the worker syncs:
   * its own port and host (9465 on 127.0.0.1), its path, the address the source delivers to, the webhook secret,
   * its limits and push health (each documented, with its default, on `PushOptions`; see `docs/push.md`), or
   * `false` for none. Off unless asked for, as the operations port is: no port opens that nobody configured. Opened
   * as the worker starts.
   * @default false
   */
  push?: PushOptions | false;
  /**
   * Where the worker records its metrics: the registry and the task duration buckets (each documented, with its
   * default, on `ConnectorMetricsOptions`). The metrics are read from the worker's `metrics` member.
   * @default {} (a registry of the worker's own)
   */
  metrics?: Pick<ConnectorMetricsOptions, 'registry' | 'taskDurationBuckets'>;
  /**
   * The wall clock, in milliseconds since the epoch: key lifetimes, the time a sync ran, the metrics' sync lag and
   * key expiry. Durations (a task's deadline and time taken, the task poller's watchdog, the shutdown's grace and
   * force times) are read from the monotonic clock instead, so a step of this one changes none of them.
   * @default Date.now
   */
  now?: () => number;
  /**
   * The randomness of jitter, in [0, 1).
   * @default Math.random
   */
  random?: () => number;
}

const syncOptionsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  schedule: scheduleSchema.default(60_000),
  runOnStart: z.boolean().default(true),
  reconcileSchedule: z
    .union([z.literal(false), scheduleSchema], {
      error: 'a cron expression, a number of milliseconds from 1 and up, or false',
    })
    .default('17 * * * *'),
  afterTaskMs: z
    .union([z.literal(false), integer(0)], { error: 'a number of milliseconds from 0 and up, or false' })
    .default(1_000),
  batchSize: integer(1, 500).default(100),
  batchBytes: integer(1, 5 * 1024 * 1024).default(1024 * 1024),
  concurrency: integer(1).default(4),
  overlapMs: integer(0).default(300_000),
  reconcileChunkSize: integer(1).default(100),
  sourceRetry: z
    .strictObject({
      retries: integer(0).default(5),
      baseDelayMs: integer(0).default(1_000),
      maxDelayMs: integer(0).default(30_000),
      maxRetryTimeMs: integer(0).default(120_000),
    })
    .prefault({}),
});

const pollerOptionsSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    concurrency: integer(1).default(4),
    idleMinMs: integer(1).default(250),
    idleMaxMs: integer(1).default(1_400),
    recentResults: integer(1).default(10_000),
    recentResultTtlMs: integer(1).default(86_400_000),
    watchdogMs: integer(1).default(120_000),
    timeoutMs: integer(1).default(30_000),
  })
  // The wait starts at idleMinMs whatever the ceiling: a floor above the default ceiling raises it.
  .transform((poller) => ({ ...poller, idleMaxMs: Math.max(poller.idleMaxMs, poller.idleMinMs) }));

/**
 * The connections of a worker's pool when `service.connections` is not set: as many as the requests the worker can
 * have in flight at once. Two per task the poller runs at once (a slot's lease and its handler's state writes take
 * turns on one, while the result of the slot's previous task is reported on the other), one per Update approvals
 * request of a sync run plus one for the run's reads and cursor saves (both only when that part runs), and one for
 * the rest (registration, keys, templates, the worker's state saves). With the defaults, 8 + 4 + 1 + 1 = 14.
 */
export function poolConnections(options: {
  poller: { enabled: boolean; concurrency: number };
  sync: { enabled: boolean; concurrency: number };
}): number {
  const { poller, sync } = options;
  return (poller.enabled ? 2 * poller.concurrency : 0) + (sync.enabled ? sync.concurrency + 1 : 0) + 1;
}

/** The schema of {@link ConnectorOptions}: checks them and applies every default. */
export const connectorOptionsSchema = z.strictObject({
  // No default for the pool here: the worker sizes it by the poller and the sync (poolConnections).
  service: clientOptionsSchema.extend({ connections: integer(1).optional() }),
  logger: z
    .union([pinoLogger(), loggerOptionsSchema], {
      error: 'a pino logger, or options of the logger to create',
    })
    .prefault({}),
  // Resolved now, so that the key file does not move if the working directory changes after the build.
  keyStore: withMethods<KeyStore>('a KeyStore (an object with load() and save())', 'load', 'save').default(
    () => new FileKeyStore(resolve(DEFAULT_KEY_FILE)),
  ),
  keys: keyRingOptionsShape
    .pick({ keyLifetimeMs: true, rotationMarginMs: true })
    .check(marginUnderLifetime)
    .prefault({}),
  sync: syncOptionsSchema.prefault({}),
  poller: pollerOptionsSchema.prefault({}),
  shutdown: z
    .strictObject({ graceMs: integer(0).default(30_000), forceMs: integer(0).default(5_000) })
    .prefault({}),
  operations: z
    .union([z.literal(false), operationsServerOptionsSchema.pick({ port: true, host: true })], {
      error: 'false, or an object with the port and host of the operations endpoints',
    })
    .default(false),
  push: z
    .union([z.literal(false), pushOptionsSchema], {
      error: 'false, or an object of the options of the push ingress',
    })
    .default(false),
  metrics: metricsOptionsShape
    .pick({ registry: true, taskDurationBuckets: true })
    .check(registryIsFree)
    .prefault({}),
  now: func<() => number>().default(() => Date.now),
  random: func<() => number>().default(() => Math.random),
});

/** Connector options with every default applied: what the worker runs with. */
export type ResolvedConnectorOptions = z.output<typeof connectorOptionsSchema>;

/**
 * Validates the connector's options, at every level (the service's client options, the keys, the operations port and
 * the metrics among them), and applies their defaults, in one place. The token's value is never shown.
 */
export function resolveConnectorOptions(options: ConnectorOptions): ResolvedConnectorOptions {
  return parseOptions(connectorOptionsSchema, options, 'connector options', [
    ...CLIENT_SECRET_OPTIONS.map((name) => `service.${name}`),
    ...PUSH_SECRET_OPTIONS.map((name) => `push.${name}`),
  ]);
}
