import nock from 'nock';
import { expect } from 'vitest';

/** The instance the unit tests talk to; nock answers for it, nothing reaches the network. */
export const INSTANCE = 'https://example.service-now.com';

/** A call the client sent, as the instance received it. */
export interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  /** By lower-case name. */
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * The instance behind nock, on the global `fetch` the client calls: each answer set up with {@link reply} is given
 * once, in order, and every call is recorded, answered or not. {@link verify} fails the test when an answer was not
 * asked for.
 */
export function mockInstance(): {
  received: Received[];
  reply(
    method: 'GET' | 'PATCH',
    path: string,
    status: number,
    body: unknown,
    headers?: Record<string, string>,
  ): void;
  verify(): void;
} {
  const received: Received[] = [];
  const record = (request: Request, body: string) => {
    const url = new URL(request.url);
    received.push({
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      headers: Object.fromEntries(request.headers),
      body: body === '' ? undefined : body,
    });
  };
  const unmatched = (request: Request) => record(request, '');
  nock.disableNetConnect();
  nock.emitter.on('no match', unmatched);
  return {
    received,
    reply(method, path, status, body, headers = {}) {
      nock(INSTANCE)
        .intercept(path, method)
        .query(true)
        .reply(status, typeof body === 'string' ? body : JSON.stringify(body), {
          'content-type': 'application/json;charset=UTF-8',
          ...headers,
        })
        .on('request', (request: Request, _interceptor: unknown, body: string) => record(request, body));
    },
    verify() {
      const pending = nock.pendingMocks();
      nock.cleanAll();
      nock.emitter.removeListener('no match', unmatched);
      expect(pending, 'answers set up but not asked for').toEqual([]);
    },
  };
}
