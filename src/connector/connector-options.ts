import { z } from 'zod';
import type { ClientOptions } from '../client/options.js';
import { parseOptions } from '../options.js';
import type { KeyStore } from './key-store.js';
import { type KeyRingOptions, keyRingOptionsIssues } from './keys.js';
import type { Logger, LoggerOptions } from './logger.js';
import type { ConnectorMetrics } from './metrics.js';
import type { PushLimits } from './sync/pusher.js';
import { type Schedule, scheduleProblem } from './sync/schedule.js';
import type { PollerSettings } from './tasks/poller.js';

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
   * Approvals in one Update approvals request, at most.
   * @default 100
   */
  batchSize?: number;
  /**
   * Bytes of JSON in one Update approvals request, at most.
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
}

/** Options of the task poller. */
export interface TaskOptions {
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
   * The longest wait between polls while no task comes, in milliseconds.
   * @default 10000
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

/** Options of a `ConnectorWorker`: where the service is, and how the kit runs the connector. */
export interface ConnectorOptions {
  /**
   * Where the service is and the connector token: the options of the `IntegrationClient` the connector uses. The
   * connector counts each retry in `client_retries_total` and logs it at debug, then calls `onRetry` when given.
   */
  service: ClientOptions;
  /** A pino logger to log through (the kit adds its redaction), or options for the one the kit creates. */
  logger?: Logger | LoggerOptions;
  /**
   * Where the key pairs are kept, when the connector has `authRequired`. In a container, mount a volume there, or
   * use a `ReadOnlyKeyStore` over a mounted secret (see `docs/keys.md`).
   * @default a `FileKeyStore` at `.connector/keys.json` under the working directory
   */
  keyStore?: KeyStore;
  /**
   * Key lifetime and rotation margin; the margin must be less than the lifetime. A running connector rotates its
   * key when the margin begins (see `docs/keys.md`).
   */
  keys?: Pick<KeyRingOptions, 'keyLifetimeMs' | 'rotationMarginMs'>;
  sync?: SyncOptions;
  tasks?: TaskOptions;
  /**
   * The graceful shutdown. `stop()` resolves at most `graceMs + forceMs + SHUTDOWN_MARGIN_MS` (1 s) after it began,
   * whatever the service and the handlers do: every call it makes carries that deadline. Under Kubernetes, set
   * `terminationGracePeriodSeconds` above it (with the defaults, 36 s: the default of 30 s is too short).
   */
  shutdown?: {
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
  };
  /**
   * The operations HTTP port (`/healthz`, `/readyz`, `/metrics`), or `false` for none.
   * @default false
   */
  operations?: { port?: number; host?: string } | false;
  /**
   * Where the connector records its metrics.
   * @default a new `ConnectorMetrics` with its own registry
   */
  metrics?: ConnectorMetrics;
  /**
   * The wall clock, in milliseconds since the epoch: key lifetimes, the time a sync ran. Durations (a task's
   * deadline and time taken, the task poller's watchdog, the shutdown's grace and force times) are read from the
   * monotonic clock instead, so a step of this one changes none of them.
   * @default Date.now
   */
  now?: () => number;
  /**
   * The randomness of jitter, in [0, 1).
   * @default Math.random
   */
  random?: () => number;
}

/** Connector options with every default applied. */
export interface ResolvedConnectorOptions {
  sync: {
    enabled: boolean;
    runOnStart: boolean;
    schedule: Schedule;
    reconcileSchedule: Schedule | false;
    overlapMs: number;
    reconcileChunkSize: number;
    limits: PushLimits;
  };
  tasks: { enabled: boolean } & PollerSettings;
  shutdown: { graceMs: number; forceMs: number };
  now: () => number;
  random: () => number;
}

const positive = z.number().int().positive();
const nonNegative = z.number().int().nonnegative();
const schedule = z.union([z.string(), z.number()]).superRefine((value, ctx) => {
  const problem = scheduleProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const Checked = z.object({
  sync: z
    .object({
      enabled: z.boolean().optional(),
      runOnStart: z.boolean().optional(),
      schedule: schedule.optional(),
      reconcileSchedule: z.union([schedule, z.literal(false)]).optional(),
      batchSize: positive.max(500).optional(),
      batchBytes: positive.max(5 * 1024 * 1024).optional(),
      concurrency: positive.optional(),
      overlapMs: nonNegative.optional(),
      reconcileChunkSize: positive.optional(),
    })
    .optional(),
  tasks: z
    .object({
      enabled: z.boolean().optional(),
      concurrency: positive.optional(),
      idleMinMs: positive.optional(),
      idleMaxMs: positive.optional(),
      recentResults: positive.optional(),
      recentResultTtlMs: positive.optional(),
      watchdogMs: positive.optional(),
      timeoutMs: positive.optional(),
    })
    .optional(),
  shutdown: z.object({ graceMs: nonNegative.optional(), forceMs: nonNegative.optional() }).optional(),
  // Checked here rather than when the key ring loads at start, where a bad margin would stop a deployed worker.
  keys: z
    .looseObject({})
    .superRefine((keys, ctx) => {
      for (const { path, message } of keyRingOptionsIssues(keys)) {
        ctx.addIssue({ code: 'custom', path: [...path], message });
      }
    })
    .optional(),
});

/** Validates the connector's own options and applies their defaults, in one place. */
export function resolveConnectorOptions(options: ConnectorOptions): ResolvedConnectorOptions {
  parseOptions(
    Checked,
    { sync: options.sync, tasks: options.tasks, shutdown: options.shutdown, keys: options.keys },
    'connector options',
  );
  const sync = options.sync ?? {};
  const tasks = options.tasks ?? {};
  return {
    sync: {
      enabled: sync.enabled ?? true,
      runOnStart: sync.runOnStart ?? true,
      schedule: sync.schedule ?? 60_000,
      reconcileSchedule: sync.reconcileSchedule ?? '17 * * * *',
      overlapMs: sync.overlapMs ?? 300_000,
      reconcileChunkSize: sync.reconcileChunkSize ?? 100,
      limits: {
        batchSize: sync.batchSize ?? 100,
        batchBytes: sync.batchBytes ?? 1024 * 1024,
        concurrency: sync.concurrency ?? 4,
      },
    },
    tasks: {
      enabled: tasks.enabled ?? true,
      concurrency: tasks.concurrency ?? 4,
      idleMinMs: tasks.idleMinMs ?? 250,
      idleMaxMs: Math.max(tasks.idleMaxMs ?? 10_000, tasks.idleMinMs ?? 250),
      recentResults: tasks.recentResults ?? 10_000,
      recentResultTtlMs: tasks.recentResultTtlMs ?? 86_400_000,
      watchdogMs: tasks.watchdogMs ?? 120_000,
      timeoutMs: tasks.timeoutMs ?? 30_000,
    },
    shutdown: { graceMs: options.shutdown?.graceMs ?? 30_000, forceMs: options.shutdown?.forceMs ?? 5_000 },
    now: options.now ?? Date.now,
    random: options.random ?? Math.random,
  };
}
