import type { ExpectedApproval, SourceDriver, SourceFailure } from 'approval-connector-kit/conformance';

/** A request as the fake source holds it. */
export interface FakeRequest {
  id: string;
  approver: string;
  title: string;
  status: 'open' | 'approved' | 'rejected';
  updatedAt: number;
}

const ALL_FAILURES: SourceFailure[] = [
  'unavailable',
  'rateLimited',
  'unreachable',
  'unauthorized',
  'forbidden',
  'refused',
  'hang',
];

/**
 * A source system for the battery's own tests: requests stamped by a clock of its own (a second a change, held
 * still inside `sameInstant`), a decision call that honours an idempotency key, and every failure the battery
 * knows, on every call.
 */
export class FakeSource {
  readonly requests = new Map<string, FakeRequest>();
  readonly actions = new Map<string, number>();
  readonly #keys = new Set<string>();
  #clock = Date.parse('2026-01-01T00:00:00.000Z');
  #held = false;
  #next = 1;
  failure: SourceFailure | undefined;

  tick(): number {
    if (!this.#held) this.#clock += 1000;
    return this.#clock;
  }

  async atOneInstant<T>(changes: () => Promise<T>): Promise<T> {
    this.tick();
    this.#held = true;
    try {
      return await changes();
    } finally {
      this.#held = false;
    }
  }

  add(approver: string, title: string): string {
    const id = `REQ-${String(this.#next++).padStart(4, '0')}`;
    this.requests.set(id, { id, approver, title, status: 'open', updatedAt: this.tick() });
    return id;
  }

  update(id: string, change: Partial<FakeRequest>): void {
    const request = this.requests.get(id);
    if (request !== undefined) this.requests.set(id, { ...request, ...change, updatedAt: this.tick() });
  }

  /** Fails the way it was told to, if it was. */
  async call(signal?: AbortSignal): Promise<void> {
    const failure = this.failure;
    if (failure === undefined) return;
    if (failure === 'hang') {
      await new Promise((_, reject) => {
        if (signal === undefined) return;
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    const status: Record<Exclude<SourceFailure, 'hang' | 'unreachable'>, number> = {
      unavailable: 503,
      rateLimited: 429,
      unauthorized: 401,
      forbidden: 403,
      refused: 409,
    };
    if (failure === 'unreachable') {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    }
    throw Object.assign(new Error(`The source answered ${status[failure as 'refused']}`), {
      status: status[failure as 'refused'],
    });
  }

  /** Every request at or after `since`, in `(updatedAt, id)` order. */
  async *changedSince(since: Date | undefined, signal?: AbortSignal): AsyncIterable<FakeRequest> {
    await this.call(signal);
    const from = since?.getTime() ?? Number.NEGATIVE_INFINITY;
    const found = [...this.requests.values()].filter((request) => request.updatedAt >= from);
    found.sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : 1));
    for (const request of found) yield { ...request };
  }

  /** One page of the changes after `(at, id)`, in order; `inclusive` reads from `at` itself. */
  async page(after: { at: number; id: string } | undefined, limit: number): Promise<FakeRequest[]> {
    await this.call();
    const found = [...this.requests.values()].filter(
      (request) =>
        after === undefined ||
        request.updatedAt > after.at ||
        (request.updatedAt === after.at && request.id > after.id),
    );
    found.sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : 1));
    return found.slice(0, limit).map((request) => ({ ...request }));
  }

  get(id: string): FakeRequest | undefined {
    const request = this.requests.get(id);
    return request && { ...request };
  }

  async isOpen(id: string, signal?: AbortSignal): Promise<boolean> {
    await this.call(signal);
    return this.requests.get(id)?.status === 'open';
  }

  async decide(
    id: string,
    status: 'approved' | 'rejected',
    key: string,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.call(signal);
    if (this.#keys.has(key)) return;
    const request = this.requests.get(id);
    if (request === undefined) throw Object.assign(new Error(`No request ${id}`), { status: 404 });
    // Like many sources, it takes a decision on a decided request: checking first is the connector's job.
    this.#keys.add(key);
    this.actions.set(id, (this.actions.get(id) ?? 0) + 1);
    this.update(id, { status });
  }
}

/** The driver of a {@link FakeSource}. */
export class FakeDriver implements SourceDriver {
  readonly source = new FakeSource();
  readonly failures = ALL_FAILURES;

  create({ approver, title }: { approver: string; title: string }): string {
    return this.source.add(approver, title);
  }

  change(id: string, { title }: { title: string }): void {
    this.source.update(id, { title });
  }

  resolve(id: string): void {
    this.source.update(id, { status: 'approved' });
  }

  delete(id: string): void {
    this.source.requests.delete(id);
  }

  sameInstant<T>(changes: () => Promise<T>): Promise<T> {
    return this.source.atOneInstant(changes);
  }

  holds(): ExpectedApproval[] {
    return [...this.source.requests.values()].map((request) => ({
      id: request.id,
      approver: request.approver,
      resolved: request.status !== 'open',
      schemaId: 'request',
      lastModified: new Date(request.updatedAt),
      data: { title: request.title },
    }));
  }

  actions(id: string): number {
    return this.source.actions.get(id) ?? 0;
  }

  fail(failure: SourceFailure): () => void {
    this.source.failure = failure;
    return () => {
      this.source.failure = undefined;
    };
  }
}
