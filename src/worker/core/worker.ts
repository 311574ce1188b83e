import type { Task } from '../../api/index.js';
import { IntegrationClient } from '../../client/index.js';
import type { Connector, StateAccess } from '../../connector/index.js';
import { parseOptions } from '../../internal/options.js';
import { abortAfter, settlesWithin } from '../../internal/wait.js';
import { ShutdownDeadlineError, StoppingError } from '../errors.js';
import { announceNewKey, KeyRing, KeyRotation, type PublicKeyInfo } from '../keys/index.js';
import {
  ConnectorMetrics,
  componentLogger,
  createLogger,
  type OperationsServer,
  type PinoLogger,
} from '../operations/index.js';
import { type PushReport, PushRuntime } from '../push/index.js';
import {
  approvalIdsOfTask,
  LookupQueue,
  type RunReport,
  type ScheduledJob,
  StateStore,
  SyncRunner,
} from '../sync/index.js';
import { TaskPoller } from '../tasks/index.js';
import {
  type ConnectorOptions,
  poolConnections,
  type ResolvedConnectorOptions,
  resolveConnectorOptions,
  SHUTDOWN_MARGIN_MS,
} from './connector-options.js';
import { DeclaredConnector } from './declared.js';
import { checkMove, type LIFECYCLE_MOVES, LifecycleError, type LifecycleState } from './lifecycle.js';
import { operationsServer, publishTemplates, retryReporter, untilReachable } from './service.js';
import { logStartFailure, startFailure } from './start-failure.js';

/** The type of the author's own part of connector state, as a connector class declares it. */
export type AppStateOf<C extends Connector<object>> = C extends Connector<infer AppState> ? AppState : never;

/**
 * Runs a {@link Connector}: registration and keys, the sync loop, the task poller, UI templates, connector state,
 * the operations endpoints, and a lifecycle fit for a long-lived worker. The options say where the service is and
 * how the kit runs; the connector says what the author's code does. `runConnector` builds one and stops it on
 * SIGTERM or SIGINT.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { ConnectorWorker } from 'approval-connector-kit/worker';
 *
 * const worker = new ConnectorWorker(new MyConnector(sourceClient), { service: { baseUrl, token } });
 * await worker.start();
 * await worker.syncNow();
 * await worker.stop();
 * ```
 */
export class ConnectorWorker<C extends Connector<object> = Connector> {
  /** The connector this worker runs. */
  readonly connector: C;
  /** Where the worker records its metrics. */
  readonly metrics: ConnectorMetrics;
  readonly #client: IntegrationClient;
  readonly #baseUrl: URL;
  readonly #logger: PinoLogger;
  readonly #settings: ResolvedConnectorOptions;
  readonly #state: StateStore<AppStateOf<C>>;
  /** The author's part of the state, as the connector's methods get it in their context. */
  readonly #appState: StateAccess<AppStateOf<C>>;
  /** Aborted as soon as stop() begins: what starts no new work (sync runs, start-up steps). */
  readonly #stopping = new AbortController();
  /** Aborted at the shutdown deadline: every other call, so that none outlives stop(). */
  readonly #deadline = new AbortController();
  #lifecycle: LifecycleState = 'idle';
  #keepAlive: NodeJS.Timeout | undefined;
  #keyRing: KeyRing | undefined;
  /** The public key the service holds: the last one registered. */
  #registeredKey: PublicKeyInfo | undefined;
  #poller: TaskPoller | undefined;
  #jobs: ScheduledJob[] = [];
  /** The one queue of lookups: after tasks, and for the push path's events. */
  #lookups: LookupQueue | undefined;
  /** The push path, in a worker that syncs a connector that declares one. */
  readonly #push: PushRuntime | undefined;
  #operations: OperationsServer | undefined;
  #operationsUrl: string | undefined;
  /** Every read of the source: sync runs, reconciliations, lookups after tasks; one at a time. */
  readonly #sync: SyncRunner;
  #started: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;

  /**
   * Checks the connector's declarations and the options, and builds the worker; it sends nothing until
   * {@link start}. A bad declaration or option is a `ValidationError` naming it and what it got.
   */
  constructor(connector: C, options: ConnectorOptions) {
    parseOptions(DeclaredConnector, connector, 'connector');
    this.connector = connector;
    this.#settings = resolveConnectorOptions(options);
    const { logger, metrics, service, now } = this.#settings;
    this.#logger = isLogger(logger) ? createLogger({ logger }) : createLogger(logger);
    this.metrics = new ConnectorMetrics({ ...metrics, now });
    const onRetry = retryReporter(this.metrics, componentLogger(this.#logger, 'client'), service.onRetry);
    this.#client = new IntegrationClient({
      ...service,
      connections: service.connections ?? poolConnections(this.#settings),
      onRetry,
    });
    this.#baseUrl = new URL(String(service.baseUrl));
    this.#state = new StateStore<AppStateOf<C>>(this.#client);
    this.#appState = {
      read: () => this.#state.app,
      write: (state) => this.#writeAppState(state, ['running', 'stopping']),
    };
    this.#push = PushRuntime.of(connector, this.#settings, {
      state: this.#state as StateStore<object>,
      appState: this.#appState as StateAccess<object>,
      metrics: this.metrics.push,
      logger: this.#logger,
      signal: this.#stopping.signal,
      running: () => this.#lifecycle === 'running',
    });
    this.#sync = new SyncRunner({
      connector: connector as Connector<object>,
      client: this.#client,
      state: this.#state as StateStore<object>,
      appState: this.#appState as StateAccess<object>,
      settings: this.#settings.sync,
      metrics: this.metrics,
      logger: this.#logger,
      signal: this.#stopping.signal,
      random: this.#settings.random,
      now: this.#settings.now,
      refusal: () =>
        this.#lifecycle === 'running' ? undefined : new LifecycleError('sync', this.#lifecycle),
      observer: this.#push?.health,
    });
  }

  /** Where the worker is in its life. */
  get lifecycle(): LifecycleState {
    return this.#lifecycle;
  }

  /**
   * The base URL of the operations endpoints (`/healthz`, `/readyz`, `/metrics`), such as `http://127.0.0.1:9464`:
   * the port actually opened, also when `operations.port` is `0`. `undefined` before they listen, after the
   * worker stopped, and when `operations` is off.
   */
  get operationsUrl(): string | undefined {
    return this.#operationsUrl;
  }

  /**
   * The push path: where its ingress takes deliveries (`url`, on the port actually opened), its health (missed events,
   * `degraded`, the last verified delivery), the webhook, the lookups waiting. `undefined` without a push path in
   * this worker. See `docs/push.md`, "Push health".
   */
  get pushHealth(): PushReport | undefined {
    return this.#push?.report;
  }

  /** Resolves once every delivery the push ingress took so far is looked up and pushed (or dropped): for tests. */
  pushSettled(): Promise<void> {
    return this.#push?.settled() ?? Promise.resolve();
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
   * Starts the worker: loads the connector state and keys, registers with the service, publishes the UI templates,
   * then starts the sync schedule and the task poller. While the service cannot be reached it keeps trying, with
   * backoff, and logs so; it fails only on what retrying cannot mend (a rejected token, an invalid registration).
   * A failure whose fix is known rejects with an error that names it, logged as one line: the service refused the
   * token (`ConnectorTokenRejectedError`), no service at the base URL (`ServiceNotFoundError`), a TLS mismatch
   * (`ProtocolMismatchError`), the operations port in use (`PortInUseError`).
   */
  start(): Promise<void> {
    if (this.#lifecycle !== 'idle') return Promise.reject(new LifecycleError('start', this.#lifecycle));
    this.#transition('starting');
    // The schedules' timers do not hold the process (nor do polling or the operations port when they are off): this
    // does, until stop(), so that a worker never ends by itself.
    this.#keepAlive = setInterval(() => {}, KEEP_ALIVE_INTERVAL_MS);
    this.#started = this.#start().catch((error: unknown) => {
      if (this.#stopping.signal.aborted) return;
      clearInterval(this.#keepAlive);
      this.#transition('failed');
      const failure = startFailure(error, this.#baseUrl);
      logStartFailure(this.#logger, failure);
      throw failure;
    });
    return this.#started;
  }

  /**
   * Stops the worker: readiness fails at once, polling, schedules and a sync run in progress stop, state is saved,
   * running tasks get the grace time to finish and are then aborted. It resolves within {@link stopDeadlineMs}
   * whatever the service and the handlers do. Idempotent: every call returns the same promise.
   */
  stop(): Promise<void> {
    if (this.#stopped !== undefined) return this.#stopped;
    if (this.#lifecycle === 'idle') {
      this.#transition('stopped');
      this.#stopped = this.#client.close();
      return this.#stopped;
    }
    this.#stopped = this.#stop();
    return this.#stopped;
  }

  /**
   * Runs a sync of the source now, as its declaration says (incremental or snapshot), after any run in progress,
   * and resolves with what it did. Runs never overlap. Only while `running`; otherwise it rejects with a
   * {@link LifecycleError}.
   */
  syncNow(): Promise<RunReport> {
    return this.#sync.sync(false);
  }

  /**
   * Runs a sync that reads the whole source, not only what changed since the cursor (which still never moves
   * backwards). For a snapshot source, the same as {@link syncNow}.
   */
  resync(): Promise<RunReport> {
    return this.#sync.sync(true);
  }

  /**
   * Runs a reconciliation now (the source's `lookup()` asked about every approval the service holds as open), after
   * any run in progress, and resolves with what it did. A connector whose source has no `lookup()` cannot be
   * reconciled: it rejects with an `InvalidConnectorError`, and no run starts.
   */
  reconcileNow(): Promise<RunReport> {
    return this.#sync.reconcile();
  }

  /** The author's own part of connector state, as last loaded or written. */
  readState(): AppStateOf<C> | undefined {
    return this.#state.app;
  }

  /**
   * Replaces the author's own part of connector state and saves it. The kit's part is kept. Only while `running`:
   * before the state is loaded, a write would replace the saved cursor.
   */
  writeState(state: AppStateOf<C>): Promise<void> {
    return this.#writeAppState(state, ['running']);
  }

  #writeAppState(state: AppStateOf<C>, allowed: readonly LifecycleState[]): Promise<void> {
    if (!allowed.includes(this.#lifecycle)) {
      return Promise.reject(new LifecycleError('write the state of', this.#lifecycle));
    }
    return this.#state.setApp(state, this.#deadline.signal);
  }

  async #start(): Promise<void> {
    const signal = this.#stopping.signal;
    const { connector } = this;
    // The probes answer from the first moment: a worker that cannot reach the service yet is alive, not ready.
    if (this.#settings.operations) {
      this.#operations = operationsServer(this.#settings.operations, {
        logger: this.#logger,
        metrics: this.metrics,
        lifecycle: () => this.#lifecycle,
        ready: () => this.ready,
        polling: () => this.#poller?.healthy,
      });
      this.#operationsUrl = (await this.#operations.start()).url;
      this.#logger.info({ url: this.#operationsUrl }, 'operations endpoints listening');
      // stop() may have begun while the port opened: it has stopped the schedules already, so schedule none.
      if (signal.aborted) return;
    }
    // Open from the start, so that a port in use fails the start; it answers 503 until the worker runs.
    await this.#push?.open();
    if (connector.authRequired) {
      this.#keyRing = await KeyRing.load(this.#settings.keyStore, {
        ...this.#settings.keys,
        now: this.#settings.now,
        onNewKey: announceNewKey(componentLogger(this.#logger, 'keys'), this.metrics),
      });
      await this.#keyRing.rotateIfDue();
    }
    await this.#untilReachable('load the connector state', () => this.#state.load(signal));
    await this.#untilReachable('register the connector', () => this.#register());
    await this.#untilReachable('publish the UI templates', () => this.#publishTemplates());
    if (signal.aborted) return;

    this.#transition('running');
    this.#scheduleJobs();
    this.#startLookups();
    if (this.#settings.poller.enabled) this.#startPolling();
    this.#logger.info(
      { taskTypes: Object.keys(connector.tasks), authRequired: connector.authRequired },
      'connector running',
    );
  }

  /** Starts the one queue of lookups, where tasks or the push path ask for any, and the push path with it. */
  #startLookups(): void {
    const { push, poller, sync } = this.#settings;
    if (this.#push === undefined && (sync.afterTaskMs === false || !poller.enabled)) return;
    this.#lookups = this.#sync.lookups(push === false ? LookupQueue.DEFAULT_CAPACITY : push.queueSize);
    if (this.#lookups !== undefined) this.#push?.begin(this.#lookups);
  }

  /** Starts the task poller; the approvals of the tasks it runs are looked up soon after (`sync.afterTaskMs`). */
  #startPolling(): void {
    const { connector } = this;
    const lookups = this.#lookups;
    const { afterTaskMs } = this.#settings.sync;
    const afterTask =
      lookups === undefined || afterTaskMs === false
        ? undefined
        : (task: Task) => lookups.request(approvalIdsOfTask(task), afterTaskMs);
    this.#poller = new TaskPoller(
      {
        client: this.#client,
        tasks: connector.tasks,
        keyRing: this.#keyRing,
        classifyFailure: connector.classifyFailure?.bind(connector),
        state: this.#appState as StateAccess<object>,
        logger: componentLogger(this.#logger, 'tasks'),
        metrics: this.metrics,
        random: this.#settings.random,
        onSourceState: afterTask,
        // The ready gauge is what /readyz answers: it falls while polling has stalled.
        onHealthChanged: () => this.metrics.ready(this.ready),
      },
      this.#settings.poller,
    );
    this.#poller.start();
  }

  async #stop(): Promise<void> {
    this.#transition('stopping');
    this.#stopping.abort(new StoppingError());
    for (const job of this.#jobs) job.stop();
    this.#lookups?.stop();
    const { graceMs, forceMs } = this.#settings.shutdown;
    const startedAt = performance.now();
    const left = () => this.stopDeadlineMs - (performance.now() - startedAt);
    const deadline = abortAfter(graceMs + forceMs, () => new ShutdownDeadlineError(), this.#deadline);
    const drained = (async () => {
      await this.#started?.catch(() => {});
      await Promise.all([
        this.#poller?.stop(graceMs, forceMs),
        this.#push?.close(this.#deadline.signal),
        this.#saveState(),
      ]);
    })();
    // Both bound themselves by the deadline; this only guards against a step that does not (a key store that hangs).
    if (!(await settlesWithin(drained, left() - SHUTDOWN_MARGIN_MS / 2))) {
      this.#logger.error('stopping passed its deadline; closing regardless');
    }
    deadline.cancel();
    const closed = Promise.all([this.#operations?.close(), this.#client.close()]);
    if (!(await settlesWithin(closed, left()))) await this.#client.destroy().catch(() => {});
    this.#operationsUrl = undefined;
    clearInterval(this.#keepAlive);
    this.#transition('stopped');
    this.#logger.info('connector stopped');
  }

  /**
   * The one place the worker's state changes: the move is checked against {@link LIFECYCLE_MOVES}, the ready gauge
   * follows ({@link ready}, as `/readyz` answers), and the move is logged.
   */
  #transition(to: LifecycleState): void {
    const from = this.#lifecycle;
    checkMove(from, to);
    this.#lifecycle = to;
    this.metrics.ready(this.ready);
    this.#logger.info({ from, to }, 'lifecycle state changed');
  }

  /** Saves the state once a sync run in progress has ended (at once: its calls carry the stopping signal). */
  async #saveState(): Promise<void> {
    await this.#sync.idle();
    await this.#state
      .flush(this.#deadline.signal)
      .catch((error: unknown) => this.#logger.error({ err: error }, 'saving the connector state failed'));
  }

  #scheduleJobs(): void {
    if (this.#keyRing !== undefined) {
      const rotation = new KeyRotation({
        ring: this.#keyRing,
        registered: this.#registeredKey,
        register: () => this.#register(),
        logger: componentLogger(this.#logger, 'keys'),
        metrics: this.metrics,
        now: this.#settings.now,
        random: this.#settings.random,
      });
      this.#jobs.push(rotation.start());
    }
    this.#jobs.push(...this.#sync.jobs());
  }

  async #register(): Promise<void> {
    const key = this.#keyRing?.current;
    await this.#client.registerConnector(
      {
        taskTypes: Object.keys(this.connector.tasks),
        authRequired: this.connector.authRequired,
        ...(key ? { publicKey: key.publicKey, publicKeyExpiredAt: key.expiresAt } : {}),
      },
      { signal: this.#stopping.signal },
    );
    this.#registeredKey = key;
    this.metrics.keyExpiresAt(key?.expiresAt);
  }

  /** Publishes each declared template whose content differs from what the service holds. */
  #publishTemplates(): Promise<void> {
    return publishTemplates(this.#client, this.connector.uiTemplates, this.#stopping.signal, this.#logger);
  }

  /** Runs a start-up step until it succeeds, or until the worker stops (see {@link untilReachable}). */
  #untilReachable(what: string, step: () => Promise<void>): Promise<void> {
    return untilReachable(what, step, {
      signal: this.#stopping.signal,
      random: this.#settings.random,
      logger: this.#logger,
      baseUrl: this.#baseUrl,
    });
  }
}

// The longest interval a timer takes (about 24 days): the keep-alive timer is there to exist, not to fire.
const KEEP_ALIVE_INTERVAL_MS = 2 ** 31 - 1;

function isLogger(value: ResolvedConnectorOptions['logger']): value is PinoLogger {
  return typeof (value as PinoLogger | undefined)?.child === 'function';
}
