import { isDeepStrictEqual } from 'node:util';
import type { Task, TaskResultStatus, UiTemplateWrite } from '../api/integration.js';
import { IntegrationClient } from '../client/integration-client.js';
import { isRetryable, type RetryEvent, sleep } from '../client/retry.js';
import { ApprovalKitError } from '../errors.js';
import {
  type ConnectorOptions,
  type ResolvedConnectorOptions,
  resolveConnectorOptions,
  SHUTDOWN_MARGIN_MS,
} from './connector-options.js';
import { abortAfter, settlesWithin } from './deadline.js';
import { announceNewKey, KeyRotation } from './key-rotation.js';
import { KeyRing } from './keys.js';
import { componentLogger, createLogger, type Logger } from './logger.js';
import { ConnectorMetrics, type SyncMode } from './metrics.js';
import { OperationsServer } from './operations-server.js';
import { StateStore } from './state.js';
import { type RunContext, type RunReport, runIncremental, runReconcile, runSnapshot } from './sync/runs.js';
import { runOnSchedule, type ScheduledJob } from './sync/schedule.js';
import type { ChangeWindow, SourceApproval, SourceContext } from './sync/source.js';
import type { PrecheckVerdict, TaskContext, TaskHandlers, TaskSchemas } from './tasks/definition.js';
import { TaskPoller } from './tasks/poller.js';

/**
 * Where a connector is in its life: `idle` → `starting` → `running` → `stopping` → `stopped`, or `failed` when
 * starting met an error that retrying cannot mend (a rejected token, an invalid registration).
 */
export type LifecycleState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** The connector was asked to do something its lifecycle state does not allow. */
export class LifecycleError extends ApprovalKitError {
  constructor(action: string, state: LifecycleState) {
    super('lifecycle', `Cannot ${action} a connector that is ${state}`);
  }
}

/** Which sync a run is: the source's own mode (incremental or snapshot), or reconciliation. */
export type SyncKind = 'sync' | 'reconcile';

/**
 * The base class of a connector. A subclass declares its task types with the schema of the data each needs,
 * implements one handler per type, and reads approvals from its source, either as changes since a cursor
 * (`changes`) or as a snapshot of what is open now (`snapshot`). The kit does the rest: registration and keys,
 * the sync loop, the task poller, UI templates, state, and a lifecycle fit for a long-lived worker.
 *
 * @example
 * ```ts
 * const tasks = { approve: z.object({ approval: z.object({ id: z.string() }) }) };
 *
 * class MyConnector extends Connector<typeof tasks> {
 *   readonly tasks = tasks;
 *   readonly handlers: TaskHandlers<typeof tasks> = {
 *     approve: async ({ approval }) => { await source.approve(approval.id); },
 *   };
 *   async *changes({ since }: ChangeWindow) { yield* source.changedSince(since); }
 * }
 * ```
 */
export abstract class Connector<
  Schemas extends TaskSchemas = TaskSchemas,
  AppState extends object = Record<string, unknown>,
> {
  /** The task types, each with the schema of the task data its handler receives. */
  abstract readonly tasks: Schemas;
  /** One handler per task type. */
  abstract readonly handlers: TaskHandlers<Schemas>;
  /** Whether actions need the approver's credentials (then tasks carry them, sealed to the connector's key). */
  readonly authRequired: boolean = false;
  /** The UI templates to publish, one per `(type, schemaId)`. */
  readonly uiTemplates: readonly UiTemplateWrite[] = [];

  /** Incremental source: every change at or after `window.since` (everything when it is `undefined`). */
  changes?(window: ChangeWindow, context: SourceContext): AsyncIterable<SourceApproval>;
  /** Snapshot source: every approval open in the source now. */
  snapshot?(context: SourceContext): AsyncIterable<SourceApproval>;
  /** For reconciliation: the current record of each of these approvals the source still has. */
  lookup?(ids: readonly string[], context: SourceContext): AsyncIterable<SourceApproval>;
  /** Confirms in the source, before a handler runs, that the approval is still pending and unchanged. */
  precheck?(task: Task, context: TaskContext): Promise<PrecheckVerdict>;
  /** Overrides the automatic classification of a handler's error; `undefined` falls back to it. */
  classifyError?(error: unknown): TaskResultStatus | undefined;

  /** The client of the Integration API the connector speaks through. */
  protected readonly client: IntegrationClient;
  /** The connector's logger. */
  protected readonly logger: Logger;
  readonly metrics: ConnectorMetrics;
  readonly #settings: ResolvedConnectorOptions;
  readonly #state: StateStore<AppState>;
  /** Aborted as soon as stop() begins: what starts no new work (sync runs, start-up steps). */
  readonly #stopping = new AbortController();
  /** Aborted at the shutdown deadline: every other call, so that none outlives stop(). */
  readonly #deadline = new AbortController();
  #lifecycle: LifecycleState = 'idle';
  #keepAlive: NodeJS.Timeout | undefined;
  #keyRing: KeyRing | undefined;
  #poller: TaskPoller | undefined;
  #jobs: ScheduledJob[] = [];
  #operations: OperationsServer | undefined;
  #operationsUrl: string | undefined;
  #runs: Promise<unknown> = Promise.resolve();
  #started: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;

  constructor(options: ConnectorOptions) {
    this.#settings = resolveConnectorOptions(options);
    const { logger, metrics, service, now } = this.#settings;
    this.logger = isLogger(logger) ? createLogger({ logger }) : createLogger(logger);
    this.metrics = new ConnectorMetrics({ ...metrics, now });
    const onRetry = retryReporter(this.metrics, componentLogger(this.logger, 'client'), service.onRetry);
    this.client = new IntegrationClient({ ...service, onRetry });
    this.#state = new StateStore<AppState>(this.client);
  }

  /** Where the connector is in its life. */
  get lifecycle(): LifecycleState {
    return this.#lifecycle;
  }

  /**
   * The base URL of the operations endpoints (`/healthz`, `/readyz`, `/metrics`), such as `http://127.0.0.1:9464`:
   * the port actually opened, also when `operations.port` is `0`. `undefined` before they listen, after the
   * connector stopped, and when `operations` is off.
   */
  get operationsUrl(): string | undefined {
    return this.#operationsUrl;
  }

  /**
   * The most `stop()` takes, in milliseconds: `shutdown.graceMs + shutdown.forceMs + SHUTDOWN_MARGIN_MS`. It
   * resolves by then whatever the service and the handlers do; `runConnector` ends the process then at the latest.
   */
  get stopDeadlineMs(): number {
    const { graceMs, forceMs } = this.#settings.shutdown;
    return graceMs + forceMs + SHUTDOWN_MARGIN_MS;
  }

  /** Whether the worker should get traffic: running, and its poller is polling. */
  get ready(): boolean {
    return this.#lifecycle === 'running' && (this.#poller?.healthy ?? true);
  }

  /**
   * Starts the connector: loads its state and keys, registers with the service, publishes its UI templates, then
   * starts the sync schedule and the task poller. While the service cannot be reached it keeps trying, with backoff,
   * and logs so; it fails only on what retrying cannot mend (a rejected token, an invalid registration).
   */
  start(): Promise<void> {
    if (this.#lifecycle !== 'idle') return Promise.reject(new LifecycleError('start', this.#lifecycle));
    this.#lifecycle = 'starting';
    // The schedules' timers do not hold the process (nor do polling or the operations port when they are off): this
    // does, until stop(), so that a worker never ends by itself.
    this.#keepAlive = setInterval(() => {}, KEEP_ALIVE_INTERVAL_MS);
    this.#started = this.#start().catch((error: unknown) => {
      if (this.#stopping.signal.aborted) return;
      clearInterval(this.#keepAlive);
      this.#lifecycle = 'failed';
      this.logger.error({ err: error }, 'the connector failed to start');
      throw error;
    });
    return this.#started;
  }

  /**
   * Stops the connector: readiness fails at once, polling, schedules and a sync run in progress stop, state is saved,
   * running tasks get the grace time to finish and are then aborted. It resolves within {@link stopDeadlineMs}
   * whatever the service and the handlers do. Idempotent: every call returns the same promise.
   */
  stop(): Promise<void> {
    if (this.#stopped !== undefined) return this.#stopped;
    if (this.#lifecycle === 'idle') {
      this.#lifecycle = 'stopped';
      this.#stopped = this.client.close();
      return this.#stopped;
    }
    this.#stopped = this.#stop();
    return this.#stopped;
  }

  /**
   * Runs a sync now (or a reconciliation), after any run in progress, and resolves with what it did. Runs never
   * overlap. The source's mode decides between incremental and snapshot. Only while `running`; otherwise it
   * rejects with a {@link LifecycleError}.
   */
  syncNow(kind: SyncKind = 'sync'): Promise<RunReport> {
    return this.#exclusive(() => this.#run(kind, false));
  }

  /**
   * Runs a sync that reads the whole source, not only what changed since the cursor (which still never moves
   * backwards). For a snapshot source, the same as {@link syncNow}.
   */
  resync(): Promise<RunReport> {
    return this.#exclusive(() => this.#run('sync', true));
  }

  /** The author's own part of connector state, as last loaded or written. */
  readState(): AppState | undefined {
    return this.#state.app;
  }

  /**
   * Replaces the author's own part of connector state and saves it. The kit's part is kept. Only while `running`:
   * before the state is loaded, a write would replace the saved cursor.
   */
  writeState(state: AppState): Promise<void> {
    if (this.#lifecycle !== 'running') {
      return Promise.reject(new LifecycleError('write the state of', this.#lifecycle));
    }
    return this.#state.setApp(state, this.#deadline.signal);
  }

  async #start(): Promise<void> {
    const { logger } = this;
    const signal = this.#stopping.signal;
    if (this.changes === undefined && this.snapshot === undefined) {
      throw new ApprovalKitError(
        'invalid_connector',
        'A connector implements changes() or snapshot() to read its source',
      );
    }
    if (this.authRequired) {
      this.#keyRing = await KeyRing.load(this.#settings.keyStore, {
        ...this.#settings.keys,
        now: this.#settings.now,
        onNewKey: announceNewKey(componentLogger(logger, 'keys'), this.metrics),
      });
      await this.#keyRing.rotateIfDue();
    }
    await this.#untilReachable('load the connector state', () => this.#state.load(signal));
    await this.#untilReachable('register the connector', () => this.#register());
    await this.#untilReachable('publish the UI templates', () => this.#publishTemplates());
    if (signal.aborted) return;

    if (this.#settings.operations) {
      this.#operations = new OperationsServer({
        ...this.#settings.operations,
        logger: componentLogger(logger, 'operations'),
        metrics: this.metrics,
        health: () => ({
          healthy: this.#lifecycle !== 'failed' && this.#lifecycle !== 'stopped',
          state: this.#lifecycle,
        }),
        isReady: () =>
          this.ready
            ? { ready: true }
            : {
                ready: false,
                reason: this.#poller?.healthy === false ? 'task polling stalled' : this.#lifecycle,
              },
      });
      const { url } = await this.#operations.start();
      this.#operationsUrl = url;
      logger.info({ url }, 'operations endpoints listening');
      // stop() may have begun while the port opened: it has stopped the schedules already, so schedule none.
      if (signal.aborted) return;
    }
    this.#lifecycle = 'running';
    this.#scheduleJobs();
    const poller = this.#settings.poller;
    if (poller.enabled) {
      this.#poller = new TaskPoller(
        {
          client: this.client,
          schemas: this.tasks,
          handlers: this.handlers as Readonly<Record<string, never>>,
          keyRing: this.#keyRing,
          precheck: this.precheck?.bind(this),
          classify: this.classifyError?.bind(this),
          logger: componentLogger(logger, 'tasks'),
          metrics: this.metrics,
          random: this.#settings.random,
        },
        poller,
      );
      this.#poller.start();
    }
    this.metrics.ready(true);
    logger.info({ taskTypes: Object.keys(this.tasks), authRequired: this.authRequired }, 'connector running');
  }

  async #stop(): Promise<void> {
    this.#lifecycle = 'stopping';
    this.metrics.ready(false);
    this.#stopping.abort(new ApprovalKitError('stopping', 'The connector is stopping'));
    for (const job of this.#jobs) job.stop();
    const { graceMs, forceMs } = this.#settings.shutdown;
    const startedAt = performance.now();
    const left = () => this.stopDeadlineMs - (performance.now() - startedAt);
    const deadline = abortAfter(
      graceMs + forceMs,
      () => new ApprovalKitError('shutdown_deadline', 'The shutdown deadline has passed'),
      this.#deadline,
    );
    const drained = (async () => {
      await this.#started?.catch(() => {});
      await Promise.all([this.#poller?.stop(graceMs, forceMs), this.#saveState()]);
    })();
    // Both bound themselves by the deadline; this only guards against a step that does not (a key store that hangs).
    if (!(await settlesWithin(drained, left() - SHUTDOWN_MARGIN_MS / 2))) {
      this.logger.error('stopping passed its deadline; closing regardless');
    }
    deadline.cancel();
    const closed = Promise.all([this.#operations?.close(), this.client.close()]);
    if (!(await settlesWithin(closed, left()))) await this.client.destroy().catch(() => {});
    this.#operationsUrl = undefined;
    clearInterval(this.#keepAlive);
    this.#lifecycle = 'stopped';
    this.logger.info('connector stopped');
  }

  /** Saves the state once a sync run in progress has ended (at once: its calls carry the stopping signal). */
  async #saveState(): Promise<void> {
    await this.#runs.catch(() => {});
    await this.#state
      .flush(this.#deadline.signal)
      .catch((error: unknown) => this.logger.error({ err: error }, 'saving the connector state failed'));
  }

  #scheduleJobs(): void {
    if (this.#keyRing !== undefined) {
      const rotation = new KeyRotation({
        ring: this.#keyRing,
        register: () => this.#register(),
        logger: componentLogger(this.logger, 'keys'),
        metrics: this.metrics,
        now: this.#settings.now,
        random: this.#settings.random,
      });
      this.#jobs.push(rotation.start());
    }
    const sync = this.#settings.sync;
    if (!sync.enabled) return;
    const tick = (kind: SyncKind) => async () => {
      await this.syncNow(kind).catch(() => {});
    };
    this.#jobs.push(runOnSchedule(sync.schedule, tick('sync')));
    if (sync.reconcileSchedule !== false && this.lookup !== undefined) {
      this.#jobs.push(runOnSchedule(sync.reconcileSchedule, tick('reconcile')));
    }
    if (sync.runOnStart) void tick('sync')();
  }

  async #run(kind: SyncKind, full: boolean): Promise<RunReport> {
    const mode: SyncMode =
      kind === 'reconcile' ? 'reconcile' : this.changes !== undefined ? 'incremental' : 'snapshot';
    const logger = componentLogger(this.logger, 'sync', { mode });
    const context: RunContext = {
      client: this.client,
      source: {
        ...(this.changes ? { changes: this.changes.bind(this) } : {}),
        ...(this.snapshot ? { snapshot: this.snapshot.bind(this) } : {}),
        ...(this.lookup ? { lookup: this.lookup.bind(this) } : {}),
      },
      state: this.#state as StateStore<object>,
      limits: this.#settings.sync,
      signal: this.#stopping.signal,
      logger,
      now: this.#settings.now,
    };
    const started = performance.now();
    try {
      const sync = this.#settings.sync;
      const report =
        mode === 'incremental'
          ? await runIncremental(context, { overlapMs: sync.overlapMs, ordered: sync.ordered, full })
          : mode === 'snapshot'
            ? await runSnapshot(context)
            : await runReconcile(context, { chunkSize: sync.reconcileChunkSize });
      this.metrics.syncRun(mode, 'success');
      this.metrics.approvalsPushed(report.pushed);
      const cursor = this.#state.cursor;
      this.metrics.syncCursor(cursor === undefined ? undefined : new Date(cursor.lastModified));
      logger.info({ ...report, durationMs: Math.round(performance.now() - started) }, 'sync run finished');
      return report;
    } catch (error) {
      this.metrics.syncRun(mode, 'failure');
      if (!this.#stopping.signal.aborted)
        logger.error({ err: error }, 'sync run failed; the next run resumes from the saved cursor');
      throw error;
    }
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    // Before start the state is not loaded, and a run's state write would replace the author's part.
    if (this.#lifecycle !== 'running') return Promise.reject(new LifecycleError('sync', this.#lifecycle));
    const next = this.#runs.catch(() => {}).then(run);
    this.#runs = next.catch(() => {});
    return next;
  }

  async #register(): Promise<void> {
    const key = this.#keyRing?.current;
    await this.client.registerConnector(
      {
        taskTypes: Object.keys(this.tasks),
        authRequired: this.authRequired,
        ...(key ? { publicKey: key.publicKey, publicKeyExpiredAt: key.expiresAt } : {}),
      },
      { signal: this.#stopping.signal },
    );
    this.metrics.keyExpiresAt(key?.expiresAt);
  }

  /** Publishes each declared template whose content differs from what the service holds. */
  async #publishTemplates(): Promise<void> {
    if (this.uiTemplates.length === 0) return;
    const held = await this.client.getUiTemplates({ signal: this.#stopping.signal });
    const changed = this.uiTemplates.filter(
      (template) =>
        !held.some(
          (existing) =>
            existing.type === template.type &&
            isDeepStrictEqual(existing.uiTemplate[template.schemaId], template.template),
        ),
    );
    if (changed.length === 0) return;
    await this.client.putUiTemplates(changed, { signal: this.#stopping.signal });
    this.logger.info(
      { templates: changed.map(({ type, schemaId }) => `${type}/${schemaId}`) },
      'published UI templates',
    );
  }

  /**
   * Runs a start-up step until it succeeds. While the service is down or unreachable (what the client itself would
   * retry: network errors, timeouts, 5xx, 429) the step is logged and tried again with backoff, until the connector
   * stops; any other failure (a rejected token, an invalid registration) ends the start.
   */
  async #untilReachable(what: string, step: () => Promise<void>): Promise<void> {
    const signal = this.#stopping.signal;
    for (let attempt = 0; !signal.aborted; attempt += 1) {
      try {
        await step();
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (!isRetryable(error, 'safe')) throw error;
        const delay =
          Math.min(60_000, 1000 * 2 ** Math.min(attempt, 6)) * (0.5 + this.#settings.random() / 2);
        this.logger.warn(
          { err: error, attempt, retryInMs: Math.round(delay) },
          `cannot ${what} yet; retrying`,
        );
        await sleep(delay, signal).catch(() => {});
      }
    }
  }
}

// The longest interval a timer takes (about 24 days): the keep-alive timer is there to exist, not to fire.
const KEEP_ALIVE_INTERVAL_MS = 2 ** 31 - 1;

function isLogger(value: ResolvedConnectorOptions['logger']): value is Logger {
  return typeof (value as Logger | undefined)?.child === 'function';
}

// The client does not log: the connector counts and logs each of its retries, then tells the caller's own hook.
function retryReporter(
  metrics: ConnectorMetrics,
  logger: Logger,
  own: ConnectorOptions['service']['onRetry'],
): (event: RetryEvent) => void {
  return (event) => {
    const { endpoint, method, path, attempt, delayMs, reason, error } = event;
    metrics.clientRetry(endpoint, reason);
    logger.debug({ endpoint, method, path, attempt, delayMs, reason, err: error }, 'retrying a request');
    own?.(event);
  };
}
