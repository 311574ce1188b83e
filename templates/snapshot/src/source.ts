/** An approval request as the source system holds it. */
export interface Request {
  id: string;
  /** Who decides it: the approver's id in the Approval Service. */
  approver: string;
  title: string;
  status: 'open' | 'approved' | 'rejected';
  comment?: string;
}

/**
 * Stands in for the source system: replace it with a client of the system's API. The connector needs two things of
 * it: the requests open now, and a way to record a decision. `save()`, `remove()` and `all()` are for tests (the
 * conformance driver in `src/conformance.ts`).
 */
export class Requests {
  readonly #requests = new Map<string, Request>();
  /** For tests: while set, every call fails with it, as the real system's client would fail. */
  failure: Error | undefined;

  constructor(requests: Iterable<Request> = []) {
    for (const request of requests) this.#requests.set(request.id, { ...request });
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

  /** Every request still waiting for a decision. */
  async *open(): AsyncIterable<Request> {
    if (this.failure !== undefined) throw this.failure;
    for (const request of this.#requests.values()) {
      if (request.status === 'open') yield { ...request };
    }
  }

  async decide(id: string, status: 'approved' | 'rejected', comment: string): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const request = this.#requests.get(id);
    // Statuses the kit recognises: a 404 or a 409 reports the task as a `systemError` (see the kit's failure mapping).
    if (request === undefined) throw Object.assign(new Error(`No request ${id}`), { status: 404 });
    if (request.status !== 'open')
      throw Object.assign(new Error(`${id} is already ${request.status}`), { status: 409 });
    this.#requests.set(id, { ...request, status, comment });
  }
}

/** A request to see the connector work end to end before the real source is wired in. */
export function exampleRequests(): Request[] {
  return [{ id: 'REQ-1', approver: 'ada', title: 'New laptop', status: 'open' }];
}
