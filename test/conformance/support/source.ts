import { createHmac, randomUUID } from 'node:crypto';
import type {
  ExpectedApproval,
  FailureScope,
  PushDriver,
  PushTarget,
  SourceDriver,
  SourceFailure,
  SourceOperation,
} from 'approval-connector-kit/conformance';
import { request } from 'undici';

/** A request as the fake source holds it. */
export interface FakeRequest {
  id: string;
  approver: string;
  title: string;
  status: 'open' | 'approved' | 'rejected';
  updatedAt: number;
}

/** One page of a listing: its records, and whether more follow (a short page does not say there are none). */
export interface FakePage {
  records: FakeRequest[];
  more: boolean;
}

const ALL_FAILURES: SourceFailure[] = [
  'unavailable',
  'rateLimited',
  'unreachable',
  'unauthorized',
  'forbidden',
  'refused',
  'hang',
  'slow',
];

const STATUS: Record<Exclude<SourceFailure, 'hang' | 'slow' | 'unreachable'>, number> = {
  unavailable: 503,
  rateLimited: 429,
  unauthorized: 401,
  forbidden: 403,
  refused: 409,
};

/** A failure switched on: which operation it strikes, and how many calls are left (`Infinity` until restored). */
interface ActiveFailure {
  failure: SourceFailure;
  operation: SourceOperation | 'any';
  left: number;
  delayMs: number;
}

const copy = (request: FakeRequest): FakeRequest => ({ ...request });
const byChange = (a: FakeRequest, b: FakeRequest) =>
  a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** What the fake source delivers for a change: what happened, and the request as it is after the change. */
export interface FakeEvent {
  event: 'created' | 'updated' | 'deleted';
  request: FakeRequest;
}

/** The header of the fake source's deliveries that carries their signature: `sha256=<HMAC of the body, in hex>`. */
export const SIGNATURE_HEADER = 'x-fake-signature';
/** The header that carries a delivery's id, the same on each of its retries. */
export const DELIVERY_HEADER = 'x-fake-delivery';

/**
 * The fake source's webhook: once told where, it posts each event as JSON (indented, as some sources write it),
 * signed with the secret it was given, one delivery after the other.
 */
export class FakeWebhook {
  #target: PushTarget | undefined;
  #sending: Promise<void> = Promise.resolve();
  #failure: unknown;

  deliverTo(target: PushTarget): void {
    this.#target = target;
  }

  send(event: FakeEvent): void {
    const target = this.#target;
    if (target === undefined) return;
    const body = JSON.stringify(event, null, 2);
    const signature = createHmac('sha256', target.secret).update(body).digest('hex');
    const headers = {
      'content-type': 'application/json',
      [DELIVERY_HEADER]: randomUUID(),
      [SIGNATURE_HEADER]: `sha256=${signature}`,
    };
    this.#sending = this.#sending
      .then(async () => {
        const answer = await request(target.url, { method: 'POST', headers, body });
        await answer.body.dump();
      })
      .catch((error: unknown) => {
        this.#failure ??= error;
      });
  }

  /** Resolves once every event so far has been delivered; rejects when one could not be. */
  async sent(): Promise<void> {
    await this.#sending;
    if (this.#failure !== undefined) throw this.#failure;
  }
}

/**
 * A source system for the battery's own tests: requests stamped by a clock of its own (a second a change, or the
 * clock the battery sets, held still inside `sameInstant`), pages that may come shorter than asked, a decision call
 * that honours an idempotency key, and every failure the battery knows, on each operation on its own.
 */
export class FakeSource {
  readonly requests = new Map<string, FakeRequest>();
  readonly actions = new Map<string, number>();
  readonly webhook = new FakeWebhook();
  readonly #keys = new Set<string>();
  #own = Date.parse('2026-01-01T00:00:00.000Z');
  #clock: (() => number) | undefined;
  #held: number | undefined;
  #next = 1;
  #failures: ActiveFailure[] = [];
  /** While set, every other page of a listing is shorter than asked. */
  shortPages = false;
  #pages = 0;

  setClock(now: () => number): void {
    this.#clock = now;
  }

  tick(): number {
    if (this.#held !== undefined) return this.#held;
    if (this.#clock !== undefined) return this.#clock();
    this.#own += 1000;
    return this.#own;
  }

  async atOneInstant<T>(changes: () => Promise<T>): Promise<T> {
    this.#held = this.tick();
    try {
      return await changes();
    } finally {
      this.#held = undefined;
    }
  }

  add(approver: string, title: string): string {
    const id = `REQ-${String(this.#next++).padStart(4, '0')}`;
    const request: FakeRequest = { id, approver, title, status: 'open', updatedAt: this.tick() };
    this.requests.set(id, request);
    this.webhook.send({ event: 'created', request: copy(request) });
    return id;
  }

  update(id: string, change: Partial<FakeRequest>): void {
    const request = this.requests.get(id);
    if (request === undefined) return;
    const updated = { ...request, ...change, updatedAt: this.tick() };
    this.requests.set(id, updated);
    this.webhook.send({ event: 'updated', request: copy(updated) });
  }

  remove(id: string): void {
    const request = this.requests.get(id);
    if (request === undefined) return;
    this.requests.delete(id);
    this.webhook.send({ event: 'deleted', request: copy(request) });
  }

  /** Makes calls of `scope.operation` fail; the function returned restores the source. */
  fail(failure: SourceFailure, scope: FailureScope): () => void {
    const active: ActiveFailure = {
      failure,
      operation: scope.operation,
      left: scope.times === 'until-restored' ? Number.POSITIVE_INFINITY : scope.times,
      delayMs: scope.delayMs ?? 1_000,
    };
    this.#failures.push(active);
    return () => {
      this.#failures = this.#failures.filter((each) => each !== active);
    };
  }

  /** Fails the way it was told to for this operation, if it was; `slow` answers late, unless the signal aborts. */
  async call(operation: SourceOperation, signal?: AbortSignal): Promise<void> {
    const active = this.#failures.find(
      (each) => each.left > 0 && (each.operation === 'any' || each.operation === operation),
    );
    if (active === undefined) return;
    active.left -= 1;
    const { failure } = active;
    if (failure === 'slow') return delay(active.delayMs, signal);
    if (failure === 'hang') {
      // Never answers: only the call's signal ends it.
      await new Promise((_, reject) => {
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    if (failure === 'unreachable') {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    }
    const status = STATUS[failure as 'refused'];
    throw Object.assign(new Error(`The source answered ${status}`), { status });
  }

  /** A page of `found` from `offset`: `limit` records, or fewer on every other page while short pages are on. */
  #page(found: FakeRequest[], offset: number, limit: number): FakePage {
    const short = this.shortPages && limit > 1 && this.#pages++ % 2 === 0;
    const size = short ? Math.max(1, Math.floor(limit / 2)) : limit;
    const records = found.slice(offset, offset + size).map(copy);
    return { records, more: offset + records.length < found.length };
  }

  /** Every request at or after `since`, in `(updatedAt, id)` order, as one listing. */
  async *changedSince(since: Date | undefined, signal?: AbortSignal): AsyncIterable<FakeRequest> {
    await this.call('changes', signal);
    const from = since?.getTime() ?? Number.NEGATIVE_INFINITY;
    const found = [...this.requests.values()].filter((request) => request.updatedAt >= from);
    for (const request of found.sort(byChange)) yield copy(request);
  }

  /** One page of the changes after `(at, id)`, in order. */
  async page(after: { at: number; id: string } | undefined, limit: number): Promise<FakePage> {
    await this.call('changes');
    const found = [...this.requests.values()].filter(
      (request) =>
        after === undefined ||
        request.updatedAt > after.at ||
        (request.updatedAt === after.at && request.id > after.id),
    );
    return this.#page(found.sort(byChange), 0, limit);
  }

  /** One page of the open requests, by id, from `offset`. */
  async openPage(offset: number, limit: number): Promise<FakePage> {
    await this.call('changes');
    const open = [...this.requests.values()].filter((request) => request.status === 'open');
    return this.#page(
      open.sort((a, b) => (a.id < b.id ? -1 : 1)),
      offset,
      limit,
    );
  }

  /** One page of the requests among `ids` the source still holds, from `offset`. */
  async find(ids: readonly string[], offset: number, limit: number): Promise<FakePage> {
    await this.call('lookup');
    const found = ids.flatMap((id) => {
      const request = this.requests.get(id);
      return request === undefined ? [] : [request];
    });
    return this.#page(found, offset, limit);
  }

  get(id: string): FakeRequest | undefined {
    const request = this.requests.get(id);
    return request && copy(request);
  }

  async isOpen(id: string, signal?: AbortSignal): Promise<boolean> {
    await this.call('precheck', signal);
    return this.requests.get(id)?.status === 'open';
  }

  async decide(
    id: string,
    status: 'approved' | 'rejected',
    key: string,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.call('action', signal);
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
/** How a {@link FakeDriver} differs from the usual one. */
export interface FakeDriverOptions {
  /** Whether {@link FakeDriver.holds} says when each request changed. @default true */
  lastModified?: boolean;
  /** The failures the driver says it can provoke. @default every one */
  failures?: readonly SourceFailure[];
}

export class FakeDriver implements SourceDriver {
  readonly source = new FakeSource();
  readonly failures: readonly SourceFailure[];
  /** Whether {@link holds} says when each request changed; without it, no check compares or reasons on it. */
  readonly #withLastModified: boolean;

  constructor(options: FakeDriverOptions = {}) {
    this.#withLastModified = options.lastModified ?? true;
    this.failures = options.failures ?? ALL_FAILURES;
  }

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
    this.source.remove(id);
  }

  readonly push: PushDriver = {
    deliverTo: (target) => this.source.webhook.deliverTo(target),
    sent: () => this.source.webhook.sent(),
  };

  sameInstant<T>(changes: () => Promise<T>): Promise<T> {
    return this.source.atOneInstant(changes);
  }

  setClock(now: () => number): void {
    this.source.setClock(now);
  }

  shortPages(enabled: boolean): void {
    this.source.shortPages = enabled;
  }

  holds(): ExpectedApproval[] {
    return [...this.source.requests.values()].map((request) => ({
      id: request.id,
      approver: request.approver,
      resolved: request.status !== 'open',
      schemaId: 'request',
      ...(this.#withLastModified ? { lastModified: new Date(request.updatedAt) } : {}),
      data: { title: request.title },
    }));
  }

  actions(id: string): number {
    return this.source.actions.get(id) ?? 0;
  }

  fail(failure: SourceFailure, scope: FailureScope): () => void {
    return this.source.fail(failure, scope);
  }
}
