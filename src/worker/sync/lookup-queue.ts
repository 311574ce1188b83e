import type { Task } from '../../api/index.js';
import { SPAN_LINK_LIMIT, type TraceContext } from '../../internal/tracing.js';

/** What a {@link LookupQueue} answers a request. */
export interface LookupRequest {
  /** The ids left out because the queue was full: left to the scheduled sync. */
  overflow: string[];
  /**
   * Resolves `true` once the run that serves the request succeeded; `false` when it failed, or when the queue
   * stopped first. Never rejects.
   */
  served: Promise<boolean>;
}

/** The traces of the requests one run serves: each a link of the run's span (push deliveries carry one). */
export interface LookupLinks {
  /** The requests' trace contexts, at most {@link SPAN_LINK_LIMIT}: those a span links to. */
  contexts: readonly TraceContext[];
  /** The requests served that carried a trace, also those past the limit. */
  count: number;
}

/**
 * The one queue of lookups: approvals to read again soon, for the tasks that decided them (or found them decided in
 * the source) and for the events a source pushes. A request arms one timer, its delay away (an earlier request's
 * timer is moved sooner, never later); when it fires, one run serves every request made until then (the approvals
 * they name, together). A request made while that run goes on is served by one more run, armed when it ends. So
 * under any load there is at most one run going on and one waiting, and the schedules are left alone: a scheduled
 * run is neither moved nor skipped. At most `capacity` approvals wait; what a full queue cannot take is answered as
 * overflow, for the scheduled sync to catch.
 */
export class LookupQueue {
  /** The approvals a queue holds at most without a push path, which sets its own (`push.queueSize`). */
  static readonly DEFAULT_CAPACITY = 10_000;
  readonly #capacity: number;
  readonly #run: (approvalIds: string[], links: LookupLinks) => Promise<unknown>;
  readonly #approvalIds = new Set<string>();
  /** The traces of the requests the next run serves. */
  #links: TraceContext[] = [];
  #linked = 0;
  readonly #observers: ((approvalIds: readonly string[]) => void)[] = [];
  /** The requests the next run serves, or `undefined` when none waits. */
  #next: PromiseWithResolvers<boolean> | undefined;
  /** The shortest delay asked for by the requests waiting while a run goes on. */
  #delayMs: number | undefined;
  #running = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires, on the monotonic clock. */
  #dueAt = Number.POSITIVE_INFINITY;

  /**
   * @param options.capacity approvals that may wait at once
   * @param options.run reads the approvals given (every one requested since the last run), the traces of the
   *   requests it serves beside them; it handles its own failures, and a rejection only marks the requests it served
   *   as not served
   */
  constructor(options: {
    capacity: number;
    run: (approvalIds: string[], links: LookupLinks) => Promise<unknown>;
  }) {
    this.#capacity = options.capacity;
    this.#run = options.run;
  }

  /** Approvals waiting for a run. */
  get waiting(): number {
    return this.#approvalIds.size;
  }

  /**
   * Asks for a run within `delayMs`, for these approvals (none: a run all the same, which a source without
   * `lookup()` serves with a sync run). An approval already waiting is served by the same run. `link`, the trace of
   * what asked (a push delivery's span), is linked from the run that serves it, unless none of its approvals fit.
   */
  request(approvalIds: readonly string[], delayMs: number, link?: TraceContext): LookupRequest {
    for (const observer of this.#observers) observer(approvalIds);
    if (this.#stopped) return { overflow: [...approvalIds], served: Promise.resolve(false) };
    const overflow: string[] = [];
    for (const id of approvalIds) {
      if (this.#approvalIds.has(id)) continue;
      if (this.#approvalIds.size >= this.#capacity) overflow.push(id);
      else this.#approvalIds.add(id);
    }
    if (link !== undefined && (approvalIds.length === 0 || overflow.length < approvalIds.length)) {
      this.#linked += 1;
      if (this.#links.length < SPAN_LINK_LIMIT) this.#links.push(link);
    }
    this.#next ??= Promise.withResolvers<boolean>();
    if (this.#running) this.#delayMs = Math.min(this.#delayMs ?? delayMs, delayMs);
    else this.#arm(delayMs);
    return { overflow, served: this.#next.promise };
  }

  /** Tells `observer` of the approvals of every request from now on, those left out as overflow included. */
  observe(observer: (approvalIds: readonly string[]) => void): void {
    this.#observers.push(observer);
  }

  /** Drops what was requested (its requests answer not served); no run starts from now on. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#approvalIds.clear();
    this.#links = [];
    this.#linked = 0;
    this.#next?.resolve(false);
    this.#next = undefined;
  }

  #arm(delayMs: number): void {
    const dueAt = performance.now() + delayMs;
    if (this.#timer !== undefined && dueAt >= this.#dueAt) return;
    clearTimeout(this.#timer);
    this.#dueAt = dueAt;
    this.#timer = setTimeout(() => this.#fire(), delayMs);
    // The worker keeps its process alive; this timer alone does not.
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#dueAt = Number.POSITIVE_INFINITY;
    const approvalIds = [...this.#approvalIds];
    const links: LookupLinks = { contexts: this.#links, count: this.#linked };
    const served = this.#next;
    this.#approvalIds.clear();
    this.#links = [];
    this.#linked = 0;
    this.#next = undefined;
    this.#running = true;
    void this.#run(approvalIds, links)
      .then(
        () => served?.resolve(true),
        () => served?.resolve(false),
      )
      .finally(() => {
        this.#running = false;
        const delayMs = this.#delayMs;
        this.#delayMs = undefined;
        if (this.#next !== undefined && delayMs !== undefined && !this.#stopped) this.#arm(delayMs);
      });
  }
}

/** The approval a task names, as the lookup after it reads it: none when its data holds no string id. */
export function approvalIdsOfTask(task: Task): string[] {
  const id = task.data.approval.id;
  return typeof id === 'string' ? [id] : [];
}

/**
 * What asks for the lookup of a task's approval `afterTaskMs` after it succeeded (or found the approval decided in
 * the source); `undefined` when there is no queue, or lookups after tasks are off.
 */
export function lookupAfterTask(
  lookups: LookupQueue | undefined,
  afterTaskMs: number | false,
): ((task: Task) => void) | undefined {
  if (lookups === undefined || afterTaskMs === false) return undefined;
  return (task) => lookups.request(approvalIdsOfTask(task), afterTaskMs);
}
