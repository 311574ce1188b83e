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

/**
 * Stands in for the source system: replace it with a client of the system's API. The connector needs two things of
 * it: the requests changed since a point in time, and a way to record a decision. `save()` and `remove()` are for
 * tests (the conformance driver in `src/conformance.ts`); `now` is the source's clock.
 */
export class Requests {
  readonly #requests = new Map<string, Request>();
  /** For tests: while set, every call fails with it, as the real system's client would fail. */
  failure: Error | undefined;
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

  /** Every request changed at or after `since`, every request when it is `undefined`. */
  async *changedSince(since: Date | undefined): AsyncIterable<Request> {
    if (this.failure !== undefined) throw this.failure;
    for (const request of this.#requests.values()) {
      if (since === undefined || request.updatedAt >= since) yield { ...request };
    }
  }

  async decide(id: string, status: 'approved' | 'rejected', comment: string): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const request = this.#requests.get(id);
    // Statuses the kit recognises: a 404 or a 409 reports the task as a `systemError` (see the kit's failure mapping).
    if (request === undefined) throw Object.assign(new Error(`No request ${id}`), { status: 404 });
    if (request.status !== 'open')
      throw Object.assign(new Error(`${id} is already ${request.status}`), { status: 409 });
    this.#requests.set(id, { ...request, status, comment, updatedAt: this.#now() });
  }
}

/** A request to see the connector work end to end before the real source is wired in. */
export function exampleRequests(): Request[] {
  return [{ id: 'REQ-1', approver: 'ada', title: 'New laptop', status: 'open', updatedAt: new Date() }];
}
