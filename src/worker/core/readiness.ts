import {
  type ConnectorMetrics,
  componentLogger,
  type PinoLogger,
  type ReadinessCheck,
} from '../operations/index.js';
import type { PushReport } from '../push/index.js';
import type { SyncHealth } from '../sync/index.js';
import type { TaskPoller } from '../tasks/index.js';

/**
 * The parts of the connector that `/readyz` details, each by its name, in the order they joined: each part joins
 * with {@link set} and a function that reads its {@link ReadinessCheck} at each request. A part whose check throws
 * shows `{"status":"error"}`, and the error is logged: a fault of one part never hides the others, nor fails the
 * answer.
 */
export class ReadinessChecks {
  readonly #checks = new Map<string, () => ReadinessCheck>();
  readonly #logger: PinoLogger;

  constructor(logger: PinoLogger) {
    this.#logger = logger;
  }

  /** Adds a part, or replaces the part of that name. */
  set(name: string, check: () => ReadinessCheck): this {
    this.#checks.set(name, check);
    return this;
  }

  /** Every part's check now. */
  read(): Record<string, ReadinessCheck> {
    const read: Record<string, ReadinessCheck> = {};
    for (const [name, check] of this.#checks) {
      try {
        read[name] = check();
      } catch (error) {
        this.#logger.warn({ err: error, check: name }, 'a readiness check failed');
        read[name] = { status: 'error' };
      }
    }
    return read;
  }
}

/** What the worker's parts give `/readyz` and the stall gauges, each read at each request. */
export interface WatchedParts {
  metrics: ConnectorMetrics;
  logger: PinoLogger;
  /** How the sync runs end, and whether the cursor keeps up. */
  sync: SyncHealth;
  /** The task poller once it runs; `pollerEnabled` says whether one will. */
  poller: () => Pick<TaskPoller, 'check' | 'leaseAgeMs'> | undefined;
  pollerEnabled: boolean;
  /** The `keys` part, `undefined` when the connector has no keys. */
  keys: (() => ReadinessCheck) | undefined;
  /** The push path's report, `undefined` without one. */
  push: () => PushReport | undefined;
}

/**
 * Gives the stall gauges what they read, and makes the parts `/readyz` details: `sync`, `cursor`, `poller`, `keys`
 * and `push`, each `off` where that part does not run in this worker.
 */
export function watchStalls(parts: WatchedParts): ReadinessChecks {
  const { sync, poller, keys, push } = parts;
  parts.metrics.readStalls({
    syncFailuresInARow: () => sync.failuresInARow(),
    cursor: () => sync.cursor(),
    leaseAgeMs: () => poller()?.leaseAgeMs,
  });
  return new ReadinessChecks(componentLogger(parts.logger, 'operations'))
    .set('sync', () => sync.syncCheck())
    .set('cursor', () => sync.cursorCheck())
    .set('poller', () => poller()?.check() ?? { status: parts.pollerEnabled ? 'starting' : 'off' })
    .set('keys', () => keys?.() ?? { status: 'off' })
    .set('push', () => {
      const report = push();
      if (report === undefined) return { status: 'off' };
      const { state, ...detail } = report;
      return { status: state, ...detail };
    });
}
