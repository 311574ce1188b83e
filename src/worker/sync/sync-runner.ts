import type { IntegrationClient } from '../../client/index.js';
import type { Connector, StateAccess } from '../../connector/index.js';
import { OneAtATime } from '../../internal/one-at-a-time.js';
import { unreachable } from '../../internal/unreachable.js';
import { InvalidConnectorError } from '../errors.js';
import {
  type ConnectorMetrics,
  componentLogger,
  type PinoLogger,
  type SyncMode,
} from '../operations/index.js';
import { SyncHealth } from './health.js';
import { type LookupLinks, LookupQueue } from './lookup-queue.js';
import type { PushLimits } from './pusher.js';
import { recordedRun } from './recorded.js';
import {
  hasLookup,
  type RunContext,
  type RunReport,
  runIncremental,
  runLookup,
  runReconcile,
  runSnapshot,
} from './runs.js';
import { type ScheduledJob, type SyncSchedules, syncJobs } from './schedule.js';
import type { SourceRetryParts } from './source-retries.js';
import type { StateStore } from './state.js';

/** The sync options a {@link SyncRunner} uses: the resolved `sync` options of the worker. */
export interface SyncRunnerSettings extends SyncSchedules, PushLimits {
  afterTaskMs: number | false;
  overlapMs: number;
  frozenCursorMs: number;
  reconcileChunkSize: number;
  sourceRetry: SourceRetryParts['sourceRetry'];
}

/**
 * Watches the sync runs and reconciliations (not the lookups): `begin()` as one starts, answering what it is told of
 * each approval the run finds changed, and of how the run ended; `undefined` to watch none.
 */
export interface RunObserver {
  begin(
    mode: Exclude<SyncMode, 'lookup'>,
  ):
    | { changed(approvalId: string, lastModified: string | undefined): void; end(succeeded: boolean): void }
    | undefined;
}

/** What a {@link SyncRunner} works with: the worker's client, state, signals and instruments. */
export interface SyncRunnerParts {
  connector: Connector<object>;
  client: IntegrationClient;
  state: StateStore<object>;
  appState: StateAccess<object>;
  settings: SyncRunnerSettings;
  metrics: ConnectorMetrics;
  logger: PinoLogger;
  /** Aborted when the worker begins to stop: a run in progress stops, and none starts. */
  signal: AbortSignal;
  random: () => number;
  now: () => number;
  /** Why no run may start now (the worker is not running), or `undefined` when one may. */
  refusal: () => Error | undefined;
  /** Told of what each sync run and reconciliation finds changed: push health. */
  observer?: RunObserver | undefined;
}

/**
 * Every read of the source the worker makes, one at a time: sync runs (incremental or snapshot, as the source is
 * declared), reconciliations, and the lookups that follow tasks. Each is recorded ({@link recordedRun}). It also
 * makes the jobs that run them on their schedules.
 */
export class SyncRunner {
  readonly #parts: SyncRunnerParts;
  /** Runs, one at a time. */
  readonly #runs = new OneAtATime();
  /** How the runs ended, and whether the cursor keeps up: `/readyz` and the stall gauges read it. */
  readonly health: SyncHealth;

  constructor(parts: SyncRunnerParts) {
    this.#parts = parts;
    const { connector, settings, state, now } = parts;
    this.health = new SyncHealth({
      state,
      now,
      logger: componentLogger(parts.logger, 'sync'),
      frozenCursorMs: settings.frozenCursorMs,
      watchesCursor: settings.enabled && connector.source.kind === 'incremental',
      syncs: settings.enabled,
    });
  }

  /** Runs a sync as the source's declaration says; `full` reads the whole of an incremental source. */
  sync(full: boolean): Promise<RunReport> {
    return this.#exclusive(() => {
      const { source } = this.#parts.connector;
      switch (source.kind) {
        case 'snapshot':
          return this.#run('snapshot', (context) => runSnapshot(context, source));
        case 'incremental': {
          const { overlapMs } = this.#parts.settings;
          return this.#run('incremental', (context) => runIncremental(context, source, { overlapMs, full }));
        }
        default:
          return unreachable(source, 'source');
      }
    });
  }

  /**
   * Runs a reconciliation. A source without `lookup()` cannot be reconciled: it rejects with an
   * `InvalidConnectorError`, and no run starts.
   */
  reconcile(): Promise<RunReport> {
    return this.#exclusive(async () => {
      const { source } = this.#parts.connector;
      if (!hasLookup(source)) throw new InvalidConnectorError('The connector does not implement lookup()');
      const { reconcileChunkSize: chunkSize } = this.#parts.settings;
      return this.#run('reconcile', (context) => runReconcile(context, source, { chunkSize }));
    });
  }

  /** Resolves once no run is going on. */
  idle(): Promise<void> {
    return this.#runs.idle();
  }

  /** The jobs that sync and reconcile on the schedules the options give. */
  jobs(): ScheduledJob[] {
    return syncJobs(this.#parts.settings, {
      sync: () => this.sync(false),
      reconcile: hasLookup(this.#parts.connector.source) ? () => this.reconcile() : undefined,
    });
  }

  /**
   * The one queue of lookups that read approvals again soon: those of the tasks that succeed here, and those a
   * source's events name. With `lookup()`, its runs look up those approvals, in any role (leaving the cursor alone);
   * without, each is a sync run as the source declares, where this worker syncs (the tasks' requests only: a push
   * path requires `lookup()`). `undefined` when neither applies (a tasks-only worker of a source without `lookup()`:
   * the sync worker's next run shows them).
   */
  lookups(capacity: number): LookupQueue | undefined {
    const { enabled, reconcileChunkSize: chunkSize } = this.#parts.settings;
    const { source } = this.#parts.connector;
    if (hasLookup(source)) {
      return new LookupQueue({
        capacity,
        run: async (approvalIds, links) => {
          if (approvalIds.length === 0) return;
          await this.#exclusive(() =>
            this.#run('lookup', (context) => runLookup(context, source, approvalIds, { chunkSize }), links),
          );
        },
      });
    }
    return enabled ? new LookupQueue({ capacity, run: () => this.sync(false) }) : undefined;
  }

  /** Runs one read of the source, recorded; a lookup's span links to the push deliveries it serves. */
  async #run(
    mode: SyncMode,
    read: (context: RunContext) => Promise<RunReport>,
    links?: LookupLinks,
  ): Promise<RunReport> {
    const { client, state, appState, settings, metrics, signal, random, now } = this.#parts;
    const logger = componentLogger(this.#parts.logger, 'sync', { mode });
    const { connector } = this.#parts;
    const watch = mode === 'lookup' ? undefined : this.#parts.observer?.begin(mode);
    const context: RunContext = {
      client,
      state,
      sourceContext: { signal, logger, state: appState },
      limits: settings,
      sourceRetry: settings.sourceRetry,
      classifyFailure: connector.classifyFailure?.bind(connector),
      random,
      signal,
      logger,
      now,
      health: this.health,
      onChanged: watch && ((approvalId, lastModified) => watch.changed(approvalId, lastModified)),
    };
    let succeeded = false;
    try {
      const records = { metrics, state, health: this.health };
      const report = await recordedRun(mode, read, context, records, links);
      succeeded = true;
      return report;
    } finally {
      watch?.end(succeeded);
    }
  }

  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    // Before start the state is not loaded, and a run's state write would replace the author's part.
    const refusal = this.#parts.refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    return this.#runs.run(run);
  }
}
