import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, start, V2_FAILURE } from './helpers.js';

let backend: ReferenceBackend;
let tenant: Tenant;

beforeAll(async () => {
  ({ backend } = await start());
  tenant = backend.createTenant();
});
afterAll(() => backend.close());

/**
 * Sends bytes as they are, for requests no HTTP client would send, each part in a write of its own, and reads the
 * answer until the server closes the connection.
 */
async function raw(
  ...parts: string[]
): Promise<{ status: number; contentType: string | undefined; body: unknown }> {
  const { port, hostname } = new URL(backend.url);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {
    // The server may close while parts are still being written; the answer read so far is what counts.
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  for (const part of parts) {
    if (socket.destroyed) break;
    socket.write(part);
    // A pause, so that the server reads the parts one by one rather than as one chunk.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await closed;
  const answer = Buffer.concat(chunks).toString('utf8');
  const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
  return {
    status: Number(head.split(' ', 2)[1]),
    contentType: /^content-type: (.*)$/im.exec(head)?.[1],
    body: JSON.parse(body),
  };
}

const badPath = (prefix: string, encoded: string) =>
  ({
    v1: `/v1/users/${encoded}/usermappings`,
    v2: `/v2/rawapprovals/${encoded}`,
    admin: `/admin/tasks/${encoded}`,
  })[prefix] as string;

describe('answers in the API’s shape, never the framework’s', () => {
  it.each(['%C0%AF', '%FF', '%ED%A0%80'])(
    'answers a path with bad percent-encoding (%s) with 400 in the v1, v2 or admin shape, not FST_ERR_BAD_URL',
    async (encoded) => {
      const v1 = await call(backend, 'GET', badPath('v1', encoded), { token: tenant.managementToken });
      expect(v1).toMatchObject({
        status: 400,
        body: { Error: 'Bad Request. path: is not valid percent-encoded UTF-8' },
      });
      const v2 = await call(backend, 'GET', badPath('v2', encoded), { token: tenant.connectorToken });
      expect(v2.status).toBe(400);
      expect(v2.body).toEqual(V2_FAILURE);
      const admin = await call(backend, 'GET', badPath('admin', encoded), { token: backend.adminToken });
      expect(admin.status).toBe(400);
      expect(admin.body).toEqual({
        error: { code: 'bad_request', message: 'Bad Request. path: is not valid percent-encoded UTF-8' },
      });
    },
  );

  it('answers headers over 16 KB with 431 in the v1, v2 or admin shape, not the framework’s', async () => {
    const headers = { 'x-padding': 'a'.repeat(17 * 1024) };
    const v1 = await call(backend, 'GET', '/v1/systems', { token: tenant.managementToken, headers });
    expect(v1).toMatchObject({
      status: 431,
      body: { Error: 'Bad Request. headers: larger than 16384 bytes' },
    });
    expect(v1.headers['content-type']).toMatch(/^application\/json/);
    const v2 = await call(backend, 'GET', '/v2/connector/state', { token: tenant.connectorToken, headers });
    expect(v2.status).toBe(431);
    expect(v2.body).toEqual(V2_FAILURE);
    const admin = await call(backend, 'GET', '/admin/faults', { token: backend.adminToken, headers });
    expect(admin).toMatchObject({
      status: 431,
      body: { error: { code: 'bad_request', message: 'Bad Request. headers: larger than 16384 bytes' } },
    });
  });

  it('answers headers over 16 KB in the shape of their path even when the head arrives in pieces', async () => {
    const padding = `X-Padding: ${'a'.repeat(17 * 1024)}\r\n`;
    const pieces = (path: string) => [
      `GET ${path} HTTP/1.1\r\n`,
      'Host: x\r\nConnection: close\r\n',
      padding,
      '\r\n',
    ];
    expect(await raw(...pieces('/v1/systems'))).toEqual({
      status: 431,
      contentType: 'application/json; charset=utf-8',
      body: { Error: 'Bad Request. headers: larger than 16384 bytes' },
    });
    expect(await raw(...pieces('/admin/faults'))).toMatchObject({
      status: 431,
      body: { error: { code: 'bad_request', message: 'Bad Request. headers: larger than 16384 bytes' } },
    });
    expect(await raw(...pieces('/v2/connector/state'))).toMatchObject({ status: 431, body: V2_FAILURE });
  });

  it('answers a request the HTTP parser refuses with 400 in the shape of its path, not the framework’s', async () => {
    const invalidHeader = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n`;
    expect(await raw(invalidHeader('/v1/systems'))).toEqual({
      status: 400,
      contentType: 'application/json; charset=utf-8',
      body: { Error: 'Bad Request. request: is not valid HTTP' },
    });
    expect(await raw(invalidHeader('/v2/connector/state'))).toMatchObject({ status: 400, body: V2_FAILURE });
    expect(await raw(invalidHeader('/admin/faults'))).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request', message: 'Bad Request. request: is not valid HTTP' } },
    });
    expect(await raw('FOO /v1/users HTTP/1.1\r\n\r\n')).toMatchObject({
      status: 400,
      body: { Error: 'Bad Request. request: is not valid HTTP' },
    });
    // No path to read: the v2 shape, as for any path outside /v1 and /admin.
    expect(await raw('\u0000\u0001\u0002\r\n\r\n')).toMatchObject({ status: 400, body: V2_FAILURE });
  });

  it('answers /v1 and /admin themselves, with or without a query, in their own shapes, not the v2 one', async () => {
    for (const path of ['/v1', '/v1?page=1']) {
      const answer = await call(backend, 'GET', path, { token: tenant.managementToken });
      expect(answer).toMatchObject({ status: 404, body: { Error: 'Not Found. no endpoint GET /v1' } });
    }
    for (const path of ['/admin', '/admin?x=1']) {
      const answer = await call(backend, 'GET', path, { token: backend.adminToken });
      expect(answer).toMatchObject({
        status: 404,
        body: { error: { code: 'not_found', message: 'Not Found. no endpoint GET /admin' } },
      });
    }
    expect((await call(backend, 'GET', '/v1users')).body).toEqual(V2_FAILURE);
  });
});
