/** An approval request as the source system holds it. */
export interface Request {
  id: string;
  /** Who decides it: the approver's id in the Approval Service. */
  approver: string;
  title: string;
  status: 'open' | 'approved' | 'rejected';
  comment?: string;
  updatedAt: Date;
}

/** What a call of the source may take besides its arguments: pass the kit's `signal`, so that it can be given up. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** The source's calls, as a test makes them fail: reading what changed, and recording a decision. */
export type Operation = 'changes' | 'action';

/** For tests: how the source fails its calls, as the real system's client would. */
export interface Failure {
  /** Whose calls fail: one operation's, or every call (`'any'`). */
  operation: Operation | 'any';
  /** How many calls fail before the source answers again by itself. @default 'until-restored' */
  times?: number | 'until-restored';
  /** What each call throws. Without it the calls are slow instead (`delayMs`). */
  error?: Error;
  /** How long each call takes before it answers and takes effect, unless its signal aborts it first. */
  delayMs?: number;
}

/**
 * Stands in for the source system: replace it with a client of the system's API. The connector needs two things of
 * it: the requests changed since a point in time, and a way to record a decision. `save()`, `remove()` and
 * `failWith()` are for tests (the conformance driver in `src/conformance.ts`); `now` is the source's clock. It
 * reads everything in one call: a source that pages must read on past a short page, up to the one that says it is
 * the last.
 */
export class Requests {
  readonly #requests = new Map<string, Request>();
  readonly #failures = new Set<Failure & { left: number }>();
  readonly #now: () => Date;

  constructor(requests: Iterable<Request> = [], now: () => Date = () => new Date()) {
    for (const request of requests) this.#requests.set(request.id, { ...request });
    this.#now = now;
  }

  save(request: Request): void {
    this.#requests.set(request.id, { ...request });
  }

  remove(id: string): void {
    this.#requests.delete(id);
  }

  all(): Request[] {
    return [...this.#requests.values()].map((request) => ({ ...request }));
  }

  get(id: string): Request | undefined {
    const request = this.#requests.get(id);
    return request && { ...request };
  }

  /** For tests: makes the source fail; returns what restores it, which also ends a count not used up. */
  failWith(failure: Failure): () => void {
    const times = failure.times ?? 'until-restored';
    const entry = { ...failure, left: times === 'until-restored' ? Number.POSITIVE_INFINITY : times };
    this.#failures.add(entry);
    return () => {
      this.#failures.delete(entry);
    };
  }

  /** Every request changed at or after `since`, every request when it is `undefined`. */
  async *changedSince(since: Date | undefined, { signal }: CallOptions = {}): AsyncIterable<Request> {
    await this.#call('changes', signal);
    for (const request of this.#requests.values()) {
      if (since === undefined || request.updatedAt >= since) yield { ...request };
    }
  }

  async decide(
    id: string,
    status: 'approved' | 'rejected',
    comment: string,
    { signal }: CallOptions = {},
  ): Promise<void> {
    // Nothing changes before the call is through: a call given up (its signal aborted) decides nothing.
    await this.#call('action', signal);
    const request = this.#requests.get(id);
    // Statuses the kit recognises: a 404 or a 409 reports the task as a `systemError` (see the kit's failure mapping).
    if (request === undefined) throw Object.assign(new Error(`No request ${id}`), { status: 404 });
    if (request.status !== 'open')
      throw Object.assign(new Error(`${id} is already ${request.status}`), { status: 409 });
    this.#requests.set(id, { ...request, status, comment, updatedAt: this.#now() });
  }

  /** Where each call starts, as a request over the network would: it meets the failure a test set for it, if any. */
  async #call(operation: Operation, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    const failure = [...this.#failures].find((set) => set.operation === operation || set.operation === 'any');
    if (failure === undefined) return;
    failure.left -= 1;
    if (failure.left <= 0) this.#failures.delete(failure);
    if (failure.error !== undefined) throw failure.error;
    await delay(failure.delayMs ?? 0, signal);
  }
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** A request to see the connector work end to end before the real source is wired in. */
export function exampleRequests(): Request[] {
  return [{ id: 'REQ-1', approver: 'ada', title: 'New laptop', status: 'open', updatedAt: new Date() }];
}
