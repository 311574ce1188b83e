import { readFileSync } from 'node:fs';
import nock from 'nock';
import { expect } from 'vitest';

/** Where the mocked SAP system lives. */
export const ORIGIN = 'https://sap.example.com';
export const SERVICE_PATH = '/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/';
export const SERVICE_URL = `${ORIGIN}${SERVICE_PATH}`;

/** A fixture's text, as SAP sends it. */
export function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
}

/** A fixture parsed, to derive answers of the same shape from it. */
// biome-ignore lint/suspicious/noExplicitAny: fixtures are indexed freely; the client's parsing is what is tested.
export function fixtureJson(name: string): any {
  return JSON.parse(fixture(name));
}

/** The fixture's first task with another key (and title), for answers that need more tasks of the same shape. */
export function taskEntry(
  instanceId: string,
  changes: Record<string, unknown> = {},
): Record<string, unknown> {
  const [template] = fixtureJson('task-collection.json').d.results;
  const text = JSON.stringify(template).replaceAll('000001750567', instanceId);
  return { ...JSON.parse(text), TaskTitle: `Task ${instanceId}`, ...changes };
}

/** A collection answer: `{"d": {"results": [...]}}`. */
export function collection(results: readonly unknown[]): string {
  return JSON.stringify({ d: { results } });
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', dataserviceversion: '2.0' };

export interface Expectation {
  method?: 'GET' | 'POST';
  /** The resource below the service root: '' for the root, 'TaskCollection', 'DecisionOptions', 'Decision'. */
  resource: string;
  /** The query parameters exactly (decoded); a request with other ones does not match. */
  query?: Record<string, string>;
}

export interface Reply {
  status?: number;
  body?: string;
  headers?: Record<string, string | string[]>;
}

/** A request the client sent: method, resource below the service root, decoded query and headers. */
export interface Call {
  method: string;
  resource: string;
  query: Record<string, string>;
  /** By lower-case name. */
  headers: Record<string, string>;
}

/**
 * SAP behind nock, on the global `fetch` the client calls: every request must match an expectation, and every one
 * is recorded, answered or not. Create one before each test and call {@link MockSap.done} after it, which fails the
 * test when an expected request was not made.
 */
export class MockSap {
  readonly #calls: Call[] = [];
  readonly #recordUnanswered = (request: Request) => {
    // Requests let through to loopback (the reference backend, say) are not SAP's.
    if (new URL(request.url).origin === ORIGIN) this.#calls.push(callOf(request));
  };

  constructor() {
    nock.disableNetConnect();
    nock.emitter.on('no match', this.#recordUnanswered);
  }

  /** Answers the next request that matches `expectation` with `reply` (JSON unless headers say otherwise). */
  on(expectation: Expectation, reply: Reply): void {
    this.#record(
      this.#expect(expectation).reply(reply.status ?? 200, reply.body ?? '', {
        ...JSON_HEADERS,
        ...reply.headers,
      }),
    );
  }

  /**
   * Takes the next request that matches `expectation` and never answers it: the client has to give up. Resolves
   * once that request has come. With `optional`, a request that never comes does not fail the test.
   */
  hold(expectation: Expectation, { optional = false } = {}): Promise<void> {
    const { promise: taken, resolve } = Promise.withResolvers<void>();
    // nock's delay() holds the body back, and aborting a fetch while its body is held crashes Node's fetch
    // (an assertion in undici): hold the answer itself instead, until the request is aborted.
    this.#record(
      this.#expect(expectation)
        .optionally(optional)
        .reply(
          (request: Request) =>
            new Promise((_, reject) => {
              request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
              resolve();
            }),
        ),
    );
    return taken;
  }

  /** Lets requests to 127.0.0.1 through to the network, for a test that needs a real socket; until {@link done}. */
  allowLoopback(): void {
    nock.enableNetConnect((host) => host.startsWith('127.0.0.1:'));
  }

  /** The requests sent to SAP, in order. */
  calls(): Call[] {
    return [...this.#calls];
  }

  /** Forgets every expectation not met; fails when one was. */
  done(): void {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    nock.disableNetConnect();
    nock.emitter.removeListener('no match', this.#recordUnanswered);
    expect(pending, 'requests expected but not made').toEqual([]);
  }

  #expect({ method = 'GET', resource, query }: Expectation): nock.Interceptor {
    return nock(ORIGIN)
      .intercept((path) => decodeURIComponent(path) === `${SERVICE_PATH}${resource}`, method)
      .query(
        (sent: Record<string, string | string[]>) =>
          query === undefined || JSON.stringify(sortKeys(sent)) === JSON.stringify(sortKeys(query)),
      );
  }

  #record(scope: nock.Scope): void {
    scope.on('request', (request: Request) => {
      this.#calls.push(callOf(request));
    });
  }
}

function callOf(request: Request): Call {
  const url = new URL(request.url);
  return {
    method: request.method,
    resource: decodeURIComponent(url.pathname).slice(SERVICE_PATH.length),
    query: Object.fromEntries(url.searchParams),
    headers: Object.fromEntries(request.headers),
  };
}

function sortKeys(record: Record<string, string | string[]>): [string, string | string[]][] {
  return Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
}

/** The `Authorization` header of basic authentication with these credentials. */
export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}
