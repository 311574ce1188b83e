/**
 * Push health: whether the events of the source announce what the sync finds changed. A change a sync run or a
 * reconciliation found that no event named is a missed event, counted; push is degraded while it is quiet and the
 * sync keeps finding changes it never announced. Kept in connector state too, for the console. See `docs/push.md`,
 * "Push health".
 * @module
 */
import type { SavedPushHealth } from '../../internal/saved-push-health.js';
import type { PinoLogger, PushMetrics, SyncMode } from '../operations/index.js';
import type { RunObserver } from '../sync/index.js';

/** Push health as the worker reports it (`worker.pushHealth`). */
export interface PushHealthReport {
  /**
   * `healthy`, or `degraded`: at least `push.degradedAfterMissed` changes missed with no verified delivery since the
   * first of them.
   */
  state: 'healthy' | 'degraded';
  /** Changes the sync found that no event announced, since the worker started. */
  missed: number;
  /** Of those, the ones since the last verified delivery. */
  missedSinceLastDelivery: number;
  /** When the last verified delivery came (ISO 8601), or `undefined` before the first. */
  lastDeliveryAt: string | undefined;
}

/** What a {@link PushHealth} needs. */
export interface PushHealthParts {
  graceMs: number;
  degradedAfterMissed: number;
  metrics: PushMetrics;
  logger: PinoLogger;
  /** The wall clock: a change's `lastModified` is compared with when push went live. */
  now: () => number;
  /** Called as push turns degraded: the webhook is checked at once. */
  onDegraded: () => void;
  /**
   * Keeps push health in connector state as it changes: `writeNow` as its state changes (push live, degraded,
   * recovered), otherwise with the state's next write (a count, the last delivery).
   */
  save: (health: SavedPushHealth, writeNow: boolean) => void;
}

// Events remembered by approval at most: at 100 a second, a quarter of an hour of them.
const ANNOUNCED_LIMIT = 100_000;
// The ids named in a log line of missed changes, at most.
const LOGGED_IDS = 10;

type Kind = 'sync' | 'reconcile';

/** Watches the sync runs and reconciliations for changes no event announced. */
export class PushHealth implements RunObserver {
  readonly #parts: PushHealthParts;
  /** When an event last named each approval, on the monotonic clock; in the order they came. */
  readonly #announced = new Map<string, number>();
  /** When the last run of each kind started, on the monotonic clock: the next one's events count from there. */
  readonly #lastStart = new Map<Kind, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** When push went live, on the wall clock and on the monotonic one; `undefined` before. */
  #liveAt: number | undefined;
  #liveSince = 0;
  /** Whether a sync run that started after push went live has succeeded: from then on, every change is judged. */
  #caughtUp = false;
  #missed = 0;
  #missedSinceDelivery = 0;
  #lastDeliveryAt: number | undefined;
  #degraded = false;
  /** Since when push is in its state, on the wall clock: live, degraded or recovered. */
  #since = 0;

  constructor(parts: PushHealthParts) {
    this.#parts = parts;
  }

  /** Push is live: the ingress takes deliveries. */
  live(): void {
    if (this.#liveAt !== undefined) return;
    this.#liveAt = this.#parts.now();
    this.#liveSince = performance.now();
    this.#since = this.#liveAt;
    this.#save(true);
  }

  /** A verified delivery came: push is not quiet. */
  delivered(): void {
    this.#lastDeliveryAt = this.#parts.now();
    this.#missedSinceDelivery = 0;
    if (!this.#degraded) {
      this.#save(false);
      return;
    }
    this.#degraded = false;
    this.#since = this.#lastDeliveryAt;
    this.#parts.metrics.degraded(false);
    this.#parts.logger.info('push recovered: a verified delivery came');
    this.#save(true);
  }

  /** An event named these approvals. */
  announced(approvalIds: readonly string[]): void {
    const at = performance.now();
    for (const id of approvalIds) {
      // Moved to the end: the map stays in the order of the last announcement.
      this.#announced.delete(id);
      this.#announced.set(id, at);
    }
    for (const id of this.#announced.keys()) {
      if (this.#announced.size <= ANNOUNCED_LIMIT) break;
      this.#announced.delete(id);
    }
  }

  begin(mode: Exclude<SyncMode, 'lookup'>): ReturnType<RunObserver['begin']> {
    const liveAt = this.#liveAt;
    if (liveAt === undefined) return undefined;
    const kind: Kind = mode === 'reconcile' ? 'reconcile' : 'sync';
    const startedAt = performance.now();
    // Events count from the start of the previous run of this kind (or from when push went live), less the grace: a
    // change that run did not find came after.
    const since = (this.#lastStart.get(kind) ?? this.#liveSince) - this.#parts.graceMs;
    this.#lastStart.set(kind, startedAt);
    const caughtUp = this.#caughtUp;
    const suspects = new Set<string>();
    return {
      changed: (approvalId, lastModified) => {
        // Before a run after push went live has caught up, only what changed since then is judged.
        const judged = caughtUp || (lastModified !== undefined && Date.parse(lastModified) >= liveAt);
        if (judged && !this.#wasAnnounced(approvalId, since)) suspects.add(approvalId);
      },
      end: (succeeded) => {
        if (succeeded && kind === 'sync') this.#caughtUp = true;
        this.#judgeLater(suspects, since);
      },
    };
  }

  /** Push health now. */
  get report(): PushHealthReport {
    return {
      state: this.#degraded ? 'degraded' : 'healthy',
      missed: this.#missed,
      missedSinceLastDelivery: this.#missedSinceDelivery,
      lastDeliveryAt:
        this.#lastDeliveryAt === undefined ? undefined : new Date(this.#lastDeliveryAt).toISOString(),
    };
  }

  /**
   * Drops the judgements waiting for their grace, and, once push was live, keeps it `stopped` in connector state:
   * written with the state the worker saves as it stops.
   */
  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    if (this.#liveAt === undefined) return;
    this.#since = this.#parts.now();
    this.#parts.save(this.#saved('stopped'), false);
  }

  #save(writeNow: boolean): void {
    this.#parts.save(this.#saved(this.#degraded ? 'degraded' : 'healthy'), writeNow);
  }

  #saved(state: SavedPushHealth['state']): SavedPushHealth {
    const { lastDeliveryAt } = this.report;
    return {
      state,
      since: new Date(this.#since).toISOString(),
      missed: this.#missed,
      missedSinceLastDelivery: this.#missedSinceDelivery,
      ...(lastDeliveryAt === undefined ? {} : { lastDeliveryAt }),
    };
  }

  #wasAnnounced(approvalId: string, since: number): boolean {
    const at = this.#announced.get(approvalId);
    return at !== undefined && at >= since;
  }

  /** Once the grace is over, counts the suspects no event has named since, as missed. */
  #judgeLater(suspects: Set<string>, since: number): void {
    if (suspects.size === 0) return;
    const judge = () => {
      const missed = [...suspects].filter((id) => !this.#wasAnnounced(id, since));
      this.#count(missed);
    };
    if (this.#parts.graceMs === 0) {
      judge();
      return;
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      judge();
    }, this.#parts.graceMs);
    timer.unref();
    this.#timers.add(timer);
  }

  #count(missed: string[]): void {
    if (missed.length === 0) return;
    const { metrics, logger, degradedAfterMissed } = this.#parts;
    this.#missed += missed.length;
    this.#missedSinceDelivery += missed.length;
    metrics.missed(missed.length);
    logger.info(
      { missed: missed.length, approvalIds: missed.slice(0, LOGGED_IDS) },
      'the sync found changes no push event announced',
    );
    if (this.#degraded || this.#missedSinceDelivery < degradedAfterMissed) {
      this.#save(false);
      return;
    }
    this.#degraded = true;
    this.#since = this.#parts.now();
    metrics.degraded(true);
    logger.warn(
      { missedSinceLastDelivery: this.#missedSinceDelivery, lastDeliveryAt: this.report.lastDeliveryAt },
      'push degraded: no verified delivery while the sync keeps finding changes; the schedule carries them',
    );
    this.#save(true);
    this.#parts.onDegraded();
  }
}
