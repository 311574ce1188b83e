/** A purchase request in the in-house system. */
export interface PurchaseRequest {
  id: string;
  approver: string;
  amount: number;
  status: 'open' | 'approved' | 'rejected';
  updatedAt: Date;
}

/** What the connector needs of the in-house system; a real one calls its HTTP API. */
export interface PurchaseRequests {
  changedSince(since: Date | undefined): AsyncIterable<PurchaseRequest>;
  /** The request's status now; `undefined` when there is no such request. */
  status(id: string): Promise<PurchaseRequest['status'] | undefined>;
  decide(id: string, decision: 'approved' | 'rejected', comment: string): Promise<void>;
}

/** The in-house system in memory, for tests. */
export class InMemoryPurchaseRequests implements PurchaseRequests {
  readonly #requests = new Map<string, PurchaseRequest>();

  constructor(requests: readonly PurchaseRequest[] = []) {
    for (const request of requests) this.#requests.set(request.id, { ...request });
  }

  get(id: string): PurchaseRequest | undefined {
    return this.#requests.get(id);
  }

  async *changedSince(since: Date | undefined): AsyncIterable<PurchaseRequest> {
    for (const request of this.#requests.values()) {
      if (since === undefined || request.updatedAt >= since) yield { ...request };
    }
  }

  async status(id: string): Promise<PurchaseRequest['status'] | undefined> {
    return this.#requests.get(id)?.status;
  }

  async decide(id: string, decision: 'approved' | 'rejected'): Promise<void> {
    const request = this.#requests.get(id);
    if (request === undefined) throw Object.assign(new Error(`No purchase request ${id}`), { status: 404 });
    this.#requests.set(id, { ...request, status: decision, updatedAt: new Date() });
  }
}
