import nock from 'nock';
import { expect } from 'vitest';

/** The Jira site the unit tests talk to; nock answers for it, nothing reaches the network. */
export const BASE = 'https://your-domain.atlassian.net';

/** A call the client sent, as Jira received it. */
export interface Sent {
  method: string;
  path: string;
  query: URLSearchParams;
  /** By lower-case name. */
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * Jira behind nock, on the global `fetch` the client calls: each expected call is answered once, in order, and
 * every call is recorded, answered or not. Create one before each test and call {@link MockJira.done} after it,
 * which fails the test when an expected call was not made.
 */
export class MockJira {
  readonly sent: Sent[] = [];
  readonly #recordUnanswered = (request: Request) => {
    this.sent.push(sentOf(request, ''));
  };

  constructor() {
    nock.disableNetConnect();
    nock.emitter.on('no match', this.#recordUnanswered);
  }

  /**
   * Answers the next call to `method pathname` (whatever its query) with `status` and `body`: a fixture's text
   * (sent as HTML unless it is a JSON object) or a value sent as JSON.
   */
  answer(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    pathname: string,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    const data = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const type =
      typeof body === 'string' && !body.startsWith('{') ? 'text/html;charset=UTF-8' : 'application/json';
    nock(BASE)
      .intercept(pathname, method)
      .query(true)
      .reply(status, data, { 'content-type': type, ...headers })
      .on('request', (request: Request, _interceptor: unknown, requestBody: string) => {
        this.sent.push(sentOf(request, requestBody));
      });
  }

  /** Forgets every answer not given; fails when one was expected. */
  done(): void {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    nock.emitter.removeListener('no match', this.#recordUnanswered);
    expect(pending, 'calls expected but not made').toEqual([]);
  }
}

function sentOf(request: Request, body: string): Sent {
  const url = new URL(request.url);
  return {
    method: request.method,
    path: url.pathname,
    query: url.searchParams,
    headers: Object.fromEntries(request.headers),
    body: body === '' ? undefined : body,
  };
}
