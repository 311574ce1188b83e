import { createHmac } from 'node:crypto';

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

/** The source's calls, as a test makes them fail: reading what changed, reading requests by id, a decision. */
export type Operation = 'changes' | 'lookup' | 'action';

/**
 * What the source sends when requests change: the ids of the requests, nothing of their state (the connector reads
 * that with `lookup()`). Your system's own webhook or business rule sends its events; `Requests.onChange` stands in.
 */
export interface RequestEvent {
  /** The source's id of this event, the same on each retry of it: what the kit dedupes by. */
  deliveryId: string;
  requestIds: string[];
}

/** The headers of an event as the source sends it: its id, and the HMAC-SHA256 of its body under the secret. */
export const DELIVERY_HEADER = 'x-request-delivery';
export const SIGNATURE_HEADER = 'x-request-signature';

/** An event as the source posts it to the connector's push ingress: a JSON body, signed. */
export function signedEvent(
  event: RequestEvent,
  secret: string,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ requestIds: event.requestIds });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return { body, headers: { [DELIVERY_HEADER]: event.deliveryId, [SIGNATURE_HEADER]: signature } };
}

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
 * Stands in for the source system: replace it with a client of the system's API. The connector needs three things
 * of it: the requests changed since a point in time, the requests of some ids, and a way to record a decision; and,
 * for changes to show within seconds, the events the system sends when requests change (`onChange`). `save()`,
 * `remove()` and `failWith()` are for tests (the conformance driver in `src/conformance.ts`); `now` is the source's
 * clock. It reads everything in one call: a source that pages must read on past a short page, up to the one that
 * says it is the last.
 */
export class Requests {
  readonly #requests = new Map<string, Request>();
  readonly #failures = new Set<Failure & { left: number }>();
  readonly #listeners: ((event: RequestEvent) => void)[] = [];
  readonly #now: () => Date;
  #events = 0;

  constructor(requests: Iterable<Request> = [], now: () => Date = () => new Date()) {
    for (const request of requests) this.#requests.set(request.id, { ...request });
    this.#now = now;
  }

  save(request: Request): void {
    this.#requests.set(request.id, { ...request });
    this.#changed(request.id);
  }

  remove(id: string): void {
    this.#requests.delete(id);
    this.#changed(id);
  }

  /** Calls `listener` with an event after each change: as the system would call out to the connector. */
  onChange(listener: (event: RequestEvent) => void): void {
    this.#listeners.push(listener);
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

  /** The requests of these ids that the source holds: what the connector looks up. */
  async *byIds(ids: readonly string[], { signal }: CallOptions = {}): AsyncIterable<Request> {
    await this.#call('lookup', signal);
    for (const id of ids) {
      const request = this.#requests.get(id);
      if (request !== undefined) yield { ...request };
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
    this.#changed(id);
  }

  #changed(id: string): void {
    this.#events += 1;
    const event = { deliveryId: `event-${this.#events}`, requestIds: [id] };
    for (const listener of this.#listeners) listener(event);
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
