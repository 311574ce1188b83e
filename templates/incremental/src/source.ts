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
 * it: the requests changed since a point in time, and a way to record a decision.
 */
export class Requests {
  readonly #requests = new Map<string, Request>();

  constructor(requests: Iterable<Request> = []) {
    for (const request of requests) this.#requests.set(request.id, { ...request });
  }

  get(id: string): Request | undefined {
    const request = this.#requests.get(id);
    return request && { ...request };
  }

  /** Every request changed at or after `since`, every request when it is `undefined`. */
  async *changedSince(since: Date | undefined): AsyncIterable<Request> {
    for (const request of this.#requests.values()) {
      if (since === undefined || request.updatedAt >= since) yield { ...request };
    }
  }

  async decide(id: string, status: 'approved' | 'rejected', comment: string): Promise<void> {
    const request = this.#requests.get(id);
    // A status the kit recognises: a 404 reports the task as a `systemError` (see the kit's failure mapping).
    if (request === undefined) throw Object.assign(new Error(`No request ${id}`), { status: 404 });
    this.#requests.set(id, { ...request, status, comment, updatedAt: new Date() });
  }
}

/** A request to see the connector work end to end before the real source is wired in. */
export function exampleRequests(): Request[] {
  return [{ id: 'REQ-1', approver: 'ada', title: 'New laptop', status: 'open', updatedAt: new Date() }];
}
