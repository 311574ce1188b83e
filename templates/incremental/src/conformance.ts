import type {
  ConformanceSubject,
  ExpectedApproval,
  FailureScope,
  PushDriver,
  SourceDriver,
  SourceFailure,
} from 'approval-connector-kit/conformance';
import { MyConnector } from './connector.js';
import { Requests, signedEvent } from './source.js';

/**
 * Drives the example source for the kit's conformance battery (`test/conformance.test.ts`, `connector verify`): it
 * creates, changes, resolves and deletes requests as the battery asks, makes the source fail, and says what the
 * source holds. When you replace `Requests` with a client of your system, write the same driver for the test
 * double of that client.
 */
export class RequestsDriver implements SourceDriver {
  // The source's clock: one of its own, a second further at each change, until the battery sets one with
  // `setClock` (behind, equal to and ahead of the machine's); held still inside `sameInstant`.
  #time = Date.parse('2026-01-01T00:00:00.000Z');
  #clock: (() => number) | undefined;
  #held: number | undefined;
  #next = 1;
  readonly requests = new Requests([], () => this.#tick());

  #tick(): Date {
    if (this.#held !== undefined) return new Date(this.#held);
    if (this.#clock !== undefined) return new Date(Math.floor(this.#clock()));
    this.#time += 1000;
    return new Date(this.#time);
  }

  create({ approver, title }: { approver: string; title: string }): string {
    const id = `REQ-${this.#next++}`;
    this.requests.save({ id, approver, title, status: 'open', updatedAt: this.#tick() });
    return id;
  }

  change(id: string, { title }: { title: string }): void {
    const request = this.requests.get(id);
    if (request !== undefined) this.requests.save({ ...request, title, updatedAt: this.#tick() });
  }

  resolve(id: string): void {
    const request = this.requests.get(id);
    if (request !== undefined)
      this.requests.save({ ...request, status: 'approved', updatedAt: this.#tick() });
  }

  delete(id: string): void {
    this.requests.remove(id);
  }

  // The source's events, for the push checks: from `deliverTo` on, each change is posted, signed, where the battery
  // says, one after the other, as the system posts them to the worker's push ingress.
  #sending: Promise<void> = Promise.resolve();
  #unsent: unknown;

  readonly push: PushDriver = {
    deliverTo: ({ url, secret }) =>
      this.requests.onChange((event) => {
        const { body, headers } = signedEvent(event, secret);
        const post = async () => {
          const answer = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body,
          });
          await answer.arrayBuffer();
        };
        this.#sending = this.#sending.then(post).catch((error: unknown) => {
          this.#unsent ??= error;
        });
      }),
    sent: async () => {
      await this.#sending;
      if (this.#unsent !== undefined) throw this.#unsent;
    },
  };

  // The failures the example source can show: each error with the HTTP status a real client's error would carry,
  // and `slow`, a call that answers late unless the connector gives it up.
  readonly failures: readonly SourceFailure[] = ['unavailable', 'unauthorized', 'refused', 'slow'];

  // Until the battery passes a scope, a failure is of every call, until restored.
  fail(
    failure: SourceFailure,
    scope: FailureScope = { operation: 'any', times: 'until-restored' },
  ): () => void {
    const { operation, times, delayMs } = scope;
    // MyConnector has no `precheck`: it reads nothing of the source that could fail.
    if (operation === 'precheck') throw new RangeError('MyConnector makes no precheck call to fail');
    // Without a delay given, slower than any task's deadline.
    if (failure === 'slow') return this.requests.failWith({ operation, times, delayMs: delayMs ?? 60_000 });
    const status = { unavailable: 503, unauthorized: 401, refused: 409 }[failure as 'unavailable'];
    const error = Object.assign(new Error(`The source answered ${status}`), { status });
    return this.requests.failWith({ operation, times, error });
  }

  setClock(now: () => number): void {
    this.#clock = now;
  }

  // `shortPages` is left out: the example source answers in one call, without pages.

  async sameInstant<T>(changes: () => Promise<T>): Promise<T> {
    this.#held = this.#tick().getTime();
    try {
      return await changes();
    } finally {
      this.#held = undefined;
    }
  }

  holds(): ExpectedApproval[] {
    return this.requests.all().map((request) => ({
      id: request.id,
      approver: request.approver,
      resolved: request.status !== 'open',
      lastModified: request.updatedAt,
      data: { title: request.title },
    }));
  }
}

/** The connector and its driver, as the conformance battery takes them. */
export const conformance: ConformanceSubject<RequestsDriver> = {
  name: 'MyConnector',
  driver: () => new RequestsDriver(),
  connector: (driver) => new MyConnector(driver.requests),
};
