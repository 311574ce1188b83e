import type {
  ConformanceSubject,
  ExpectedApproval,
  FailureScope,
  SourceDriver,
  SourceFailure,
} from 'approval-connector-kit/conformance';
import { MyConnector } from './connector.js';
import { Requests } from './source.js';

/**
 * Drives the example source for the kit's conformance battery (`test/conformance.test.ts`, `connector verify`): it
 * creates, changes, resolves and deletes requests as the battery asks, makes the source fail, and says what the
 * source holds. It has no `setClock`: a snapshot has no time of last change. When you
 * replace `Requests` with a client of your system, write the same driver for the test double of that client.
 */
export class RequestsDriver implements SourceDriver {
  #next = 1;
  readonly requests = new Requests();

  create({ approver, title }: { approver: string; title: string }): string {
    const id = `REQ-${this.#next++}`;
    this.requests.save({ id, approver, title, status: 'open' });
    return id;
  }

  change(id: string, { title }: { title: string }): void {
    const request = this.requests.get(id);
    if (request !== undefined) this.requests.save({ ...request, title });
  }

  resolve(id: string): void {
    const request = this.requests.get(id);
    if (request !== undefined) this.requests.save({ ...request, status: 'approved' });
  }

  delete(id: string): void {
    this.requests.remove(id);
  }

  // The failures the example source can show: each error with the HTTP status a real client's error would carry,
  // and `slow`, a call that answers late unless the connector gives it up.
  readonly failures: readonly SourceFailure[] = ['unavailable', 'unauthorized', 'refused', 'slow'];

  // Until the battery passes a scope, a failure is of every call, until restored.
  fail(
    failure: SourceFailure,
    scope: FailureScope = { operation: 'any', times: 'until-restored' },
  ): () => void {
    const { operation, times, delayMs } = scope;
    // MyConnector has neither a `lookup` nor a `precheck`: they read nothing of the source that could fail.
    if (operation === 'lookup' || operation === 'precheck')
      throw new RangeError(`MyConnector makes no ${operation} call to fail`);
    // Without a delay given, slower than any task's deadline.
    if (failure === 'slow') return this.requests.failWith({ operation, times, delayMs: delayMs ?? 60_000 });
    const status = { unavailable: 503, unauthorized: 401, refused: 409 }[failure as 'unavailable'];
    const error = Object.assign(new Error(`The source answered ${status}`), { status });
    return this.requests.failWith({ operation, times, error });
  }

  // `shortPages` is left out: the example source lists in one call, without pages.

  // A snapshot lists what is open: every request it holds, as the service should show it once synced.
  holds(): ExpectedApproval[] {
    return this.requests.all().map((request) => ({
      id: request.id,
      approver: request.approver,
      resolved: request.status !== 'open',
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
