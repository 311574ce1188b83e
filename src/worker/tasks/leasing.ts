import type { IntegrationClient, LeasedTask } from '../../client/index.js';
import { backoffDelay } from '../../internal/backoff.js';
import { spanClock } from '../../internal/tracing.js';
import { sleep, untilAborted } from '../../internal/wait.js';
import type { ConnectorMetrics, PinoLogger } from '../operations/index.js';
import type { LeaseTiming } from './task-trace.js';

/** How the leasing runs. Every field is required here; `PollerOptions` documents the defaults. */
export interface LeasingSettings {
  concurrency: number;
  idleMinMs: number;
  idleMaxMs: number;
  watchdogMs: number;
}

/** What the leasing needs from the worker and the rest of the task runtime. */
export interface LeasingParts {
  client: Pick<IntegrationClient, 'leaseTask'>;
  logger: PinoLogger;
  metrics: ConnectorMetrics | undefined;
  random: () => number;
  /** Runs a leased task, given when it was asked for and received: its slot is held until the promise settles. */
  run: (leased: LeasedTask, lease: LeaseTiming) => Promise<void>;
  /**
   * The results held outside the slots, not yet acknowledged: the tasks held (leasing, running, or with such a
   * result) never pass twice the concurrency. {@link Leasing.changed} must be called when it falls.
   */
  backlog: () => number;
  /** Told when {@link Leasing.healthy} changes: the watchdog found polling stalled, or a poll succeeded again. */
  onHealthChanged?: (() => void) | undefined;
}

/**
 * Leases tasks from the service into slots: keeps a lease request in flight for every free slot while the service has
 * tasks, and a single one, with the adaptive idle wait between them, while it has none. A slot is held from the lease
 * request until the task's run ends, so a task is never leased without one. A watchdog restarts polling that stalled.
 */
export class Leasing {
  readonly #parts: LeasingParts;
  readonly #settings: LeasingSettings;
  /**
   * The tasks' jobs (from a task's lease answered to its run's end), each of which never rejects. The poll loop
   * leases a task only for a free slot, so a job starts as soon as its task comes: no queue is needed.
   */
  readonly #jobs = new Set<Promise<void>>();
  /** Aborted when polling must stop. */
  readonly #stopPolling = new AbortController();
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
  /** When a lease request last succeeded (a task, or the answer that none waits); from start() to stop(). */
  #lastLeasedAt: number | undefined;
  #stalled = false;

  constructor(parts: LeasingParts, settings: LeasingSettings) {
    this.#parts = parts;
    this.#settings = settings;
    // One listener, rather than a signal per request combined with AbortSignal.any, which costs tens of microseconds
    // each time and more as the signals it tracks pile up.
    this.#stopPolling.signal.addEventListener(
      'abort',
      () => {
        for (const poll of this.#leases.keys()) poll.abort(this.#stopPolling.signal.reason);
        this.changed();
      },
      { once: true },
    );
  }

  /** False while the watchdog finds that polling has stalled. */
  get healthy(): boolean {
    return !this.#stalled;
  }

  /**
   * Milliseconds since a lease request last succeeded: the service answered with a task, or said that none waits
   * (counted from start() before the first). It grows while the requests fail, while none is sent (polling stalled,
   * or every slot held), and so while tasks may wait. `undefined` before start() and after stop().
   */
  get leaseAgeMs(): number | undefined {
    return this.#lastLeasedAt === undefined ? undefined : performance.now() - this.#lastLeasedAt;
  }

  start(): void {
    if (this.#loop !== undefined) return;
    this.#lastPollAt = performance.now();
    this.#lastLeasedAt = this.#lastPollAt;
    this.#loop = this.#pollLoop();
    this.#watchdog = setInterval(
      () => this.#checkPolling(),
      Math.max(1, Math.floor(this.#settings.watchdogMs / 2)),
    );
    this.#watchdog.unref();
  }

  /** Stops leasing: aborts the lease requests in flight and the watchdog. See {@link drained}. */
  stop(): void {
    this.#stopPolling.abort();
    clearInterval(this.#watchdog);
    this.#lastLeasedAt = undefined;
  }

  /**
   * Resolves once polling has stopped and every task's run has ended. Called only once stopped: the loop may still
   * start a job for a task it just received.
   */
  async drained(): Promise<void> {
    await this.#loop;
    await Promise.all(this.#jobs);
  }

  /** Resolves the poll loop's wait: a lease answered, a task's job or a result's report ended, or polling stopped. */
  changed(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /**
   * Keeps a lease request in flight for every free slot while the service has tasks, and a single one, with the
   * adaptive idle wait between them, while it has none: idle, the worker asks no more often than one poller would.
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
      await this.#changes();
    }
    // A lease that answered as polling stopped still starts its task's job, which drained() then waits for.
    while (this.#leases.size > 0) await this.#changes();
  }

  #changes(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
  }

  /**
   * The lease requests the leasing may send now: a slot free of tasks and of lease requests, within twice the
   * concurrency counting the results not yet acknowledged.
   */
  #freeSlots(): number {
    const { concurrency } = this.#settings;
    const held = this.#jobs.size + this.#leases.size;
    return Math.min(concurrency - held, 2 * concurrency - held - this.#parts.backlog());
  }

  /** One Get task request; `idle` is how many empty answers in a row the leasing had counted when it was sent. */
  async #lease(idle: number): Promise<void> {
    const { client, logger, metrics } = this.#parts;
    const poll = new AbortController();
    const { signal } = poll;
    this.#lastPollAt = performance.now();
    this.#leases.set(poll, this.#lastPollAt);
    if (this.#stopPolling.signal.aborted) poll.abort(this.#stopPolling.signal.reason);
    const sentAt = spanClock();
    try {
      // The watchdog's abort ends the wait even when the call itself ignores the signal (and would hang forever).
      const leased = await untilAborted(client.leaseTask({ signal }), signal);
      if (!this.#stopPolling.signal.aborted) this.#lastLeasedAt = performance.now();
      this.#setStalled(false);
      if (leased === null) {
        this.#quiet(idle);
        return;
      }
      this.#idle = 0;
      this.#startJob(leased, { sentAt, answeredAt: spanClock() });
    } catch (error) {
      if (signal.aborted) return; // polling stopped, or the watchdog cut a stuck poll short
      metrics?.pollError();
      logger.warn({ err: error, retryInMs: this.#quiet(idle) }, 'polling for tasks failed; retrying');
    } finally {
      this.#leases.delete(poll);
      this.changed();
    }
  }

  /** Runs a leased task in the slot its request held, until its run ends. */
  #startJob(leased: LeasedTask, lease: LeaseTiming): void {
    // The run catches what it expects; anything else is a bug, logged rather than left an unhandled rejection.
    const job: Promise<void> = this.#parts
      .run(leased, lease)
      .catch((error: unknown) =>
        this.#parts.logger.error(
          { err: error, taskId: (leased.valid ? leased.task : leased).id },
          'running the task failed unexpectedly',
        ),
      )
      .finally(() => {
        this.#jobs.delete(job);
        this.changed();
      });
    this.#jobs.add(job);
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
}
