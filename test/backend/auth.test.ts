import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPath, endpoints, MANAGEMENT_BODY_LIMIT_BYTES } from '../../src/api/index.js';
import { BODY_LIMIT_BYTES } from '../../src/backend/http/server.js';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, start, UNAUTHORIZED, UNKNOWN_ID, V2_FAILURE } from './helpers.js';

let backend: ReferenceBackend;
let tenant: Tenant;

beforeAll(async () => {
  ({ backend } = await start({ adminToken: 'admin-token-for-tests' }));
  tenant = backend.createTenant();
});
afterAll(() => backend.close());

const all = Object.values(endpoints).map((endpoint) => ({
  ...endpoint,
  url: buildPath(endpoint.path, { id: 'x', approvalId: 'x', taskId: 'x' }),
}));
const v1 = all.filter((endpoint) => endpoint.api === 'v1');
const v2 = all.filter((endpoint) => endpoint.api === 'v2');

describe('authentication', () => {
  it.each(v1)(
    'v1 endpoint $number ($summary) answers 401 with the published message without a token',
    async (e) => {
      const answer = await call(backend, e.method, e.url);
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(UNAUTHORIZED);
    },
  );

  it.each(v2)('v2 endpoint $number ($summary) answers 401 {status: failure} without a token', async (e) => {
    const answer = await call(backend, e.method, e.url);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(V2_FAILURE);
  });

  it.each(v1)('v1 endpoint $number refuses a connector token', async (e) => {
    const answer = await call(backend, e.method, e.url, { token: tenant.connectorToken });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(UNAUTHORIZED);
  });

  it.each(v2)('v2 endpoint $number refuses a management token', async (e) => {
    const answer = await call(backend, e.method, e.url, { token: tenant.managementToken });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(V2_FAILURE);
  });

  it('refuses an unknown token, a malformed header and another scheme', async () => {
    for (const authorization of [
      'Bearer nope-nope-nope',
      'Bearer',
      `Basic ${tenant.managementToken}`,
      tenant.managementToken,
    ]) {
      const answer = await call(backend, 'GET', '/v1/systems', { headers: { authorization } });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(UNAUTHORIZED);
    }
  });

  it('accepts the bearer scheme in any case', async () => {
    const answer = await call(backend, 'GET', '/v1/systems', {
      headers: { authorization: `bearer ${tenant.managementToken}` },
    });
    expect(answer.status).toBe(200);
  });

  it('authenticates before validating, so a bad request without a token is a 401', async () => {
    const answer = await call(backend, 'GET', '/v1/users?page=zero');
    expect(answer.status).toBe(401);
  });

  describe('before reading the body', () => {
    const failure = (e: { api: 'v1' | 'v2' }) => (e.api === 'v1' ? UNAUTHORIZED : V2_FAILURE);
    const badTokens = () => [undefined, 'forged-token-0000', tenant.connectorToken, tenant.managementToken];
    const wrongKind = (e: { api: 'v1' | 'v2' }, token: string | undefined) =>
      token === (e.api === 'v1' ? tenant.managementToken : tenant.connectorToken) ? undefined : token;

    it.each(all)(
      'endpoint $number answers 401, not 400, to malformed JSON without a valid token',
      async (e) => {
        for (const token of badTokens().map((token) => wrongKind(e, token))) {
          const answer = await call(backend, e.method, e.url, { token, rawBody: '{"broken": [' });
          expect(answer.status).toBe(401);
          expect(answer.body).toEqual(failure(e));
        }
      },
    );

    it.each(all)(
      'endpoint $number answers 401, not 400, to a text/plain body without a valid token',
      async (e) => {
        for (const token of badTokens().map((token) => wrongKind(e, token))) {
          const answer = await call(backend, e.method, e.url, {
            token,
            rawBody: 'hello',
            headers: { 'content-type': 'text/plain' },
          });
          expect(answer.status).toBe(401);
          expect(answer.body).toEqual(failure(e));
        }
      },
    );

    it.each(
      [endpoints.addUsers, endpoints.deleteUsers].map((e) => ({ ...e, url: buildPath(e.path, { id: 'x' }) })),
    )('endpoint $number answers 401, not 413, to a body over 100K without a valid token', async (e) => {
      const rawBody = JSON.stringify(Array.from({ length: 4000 }, () => UNKNOWN_ID));
      expect(rawBody.length).toBeGreaterThan(MANAGEMENT_BODY_LIMIT_BYTES);
      for (const token of [undefined, 'forged-token-0000', tenant.connectorToken]) {
        const answer = await call(backend, e.method, e.url, { token, rawBody });
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual(UNAUTHORIZED);
      }
    });

    it('answers 401, not 413, to a v2 body over 5 MiB without a valid token', async () => {
      const rawBody = JSON.stringify({ state: { blob: 'x'.repeat(BODY_LIMIT_BYTES) } });
      const answer = await call(backend, 'PUT', '/v2/connector/state', { rawBody });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(V2_FAILURE);
    });
  });

  it('never opens v1 or v2 with the admin token', async () => {
    expect((await call(backend, 'GET', '/v1/systems', { token: backend.adminToken })).status).toBe(401);
    expect((await call(backend, 'GET', '/v2/connector/state', { token: backend.adminToken })).status).toBe(
      401,
    );
  });

  it('never opens the admin API with a service token', async () => {
    for (const token of [tenant.managementToken, tenant.connectorToken, undefined]) {
      const answer = await call(backend, 'POST', '/admin/tenants', { token, body: {} });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        error: { code: 'unauthorized', message: 'Unauthorized. [Authentication] failed to get token data' },
      });
    }
  });

  it('refuses to store a service token equal to the admin token', () => {
    expect(() =>
      backend.createManagementToken(tenant.organization.id, { token: 'admin-token-for-tests' }),
    ).toThrow(expect.objectContaining({ code: 'service', kind: 'Conflict' }));
  });

  it('accepts a chosen token and refuses one already in use', async () => {
    const token = backend.createConnectorToken(tenant.system.id, { token: 'chosen-connector-token' });
    expect((await call(backend, 'GET', '/v2/connector/state', { token })).status).toBe(200);
    expect(() => backend.createConnectorToken(tenant.system.id, { token })).toThrow(
      expect.objectContaining({ code: 'service', kind: 'Conflict' }),
    );
  });
});
