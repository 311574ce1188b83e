import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBase64 } from '../../src/api/index.js';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, type ManualClock, start } from './helpers.js';

let backend: ReferenceBackend;
let clock: ManualClock;

beforeAll(async () => {
  ({ backend, clock } = await start());
});
afterAll(() => backend.close());

const key = () => toBase64(nacl.box.keyPair().publicKey);
const inAnHour = () => new Date(clock.now() + 3_600_000).toISOString();

function register(tenant: Tenant, body: unknown) {
  return call(backend, 'PATCH', '/v2/connector', { token: tenant.connectorToken, body });
}

describe('Update connector (12)', () => {
  it('stores task types and merges later updates', async () => {
    const tenant = backend.createTenant();
    expect(await register(tenant, { taskTypes: ['approve', 'reject'] })).toMatchObject({
      status: 200,
      body: { status: 'success' },
    });
    expect(backend.getConnector(tenant.system.id)).toMatchObject({
      taskTypes: ['approve', 'reject'],
      authRequired: false,
    });
    const publicKey = key();
    const publicKeyExpiredAt = inAnHour();
    await register(tenant, { authRequired: true, publicKey, publicKeyExpiredAt });
    expect(backend.getConnector(tenant.system.id)).toMatchObject({
      taskTypes: ['approve', 'reject'],
      authRequired: true,
      publicKey,
      publicKeyExpiredAt,
    });
    await register(tenant, { taskTypes: ['approve'] });
    expect(backend.getConnector(tenant.system.id)).toMatchObject({
      taskTypes: ['approve'],
      authRequired: true,
      publicKey,
    });
  });

  it('keeps earlier keys until their own expiry', async () => {
    const tenant = backend.createTenant();
    const first = key();
    const second = key();
    await register(tenant, { authRequired: true, publicKey: first, publicKeyExpiredAt: inAnHour() });
    await register(tenant, {
      authRequired: true,
      publicKey: second,
      publicKeyExpiredAt: new Date(clock.now() + 7_200_000).toISOString(),
    });
    expect(backend.getConnector(tenant.system.id).keys.map((k) => k.publicKey)).toEqual([second, first]);
    clock.advance(3_600_001);
    expect(backend.getConnector(tenant.system.id).keys.map((k) => k.publicKey)).toEqual([second]);
  });

  it.each([
    ['authRequired without a key', () => ({ authRequired: true })],
    ['authRequired without the expiry', () => ({ authRequired: true, publicKey: key() })],
    [
      'a key that is not 32 bytes of base64',
      () => ({ authRequired: true, publicKey: 'abc', publicKeyExpiredAt: inAnHour() }),
    ],
    [
      'an expiry in the past',
      () => ({
        authRequired: true,
        publicKey: key(),
        publicKeyExpiredAt: new Date(clock.now() - 1).toISOString(),
      }),
    ],
    ['a key without its expiry', () => ({ publicKey: key() })],
    ['an expiry without its key', () => ({ publicKeyExpiredAt: inAnHour() })],
    ['task types that are not strings', () => ({ taskTypes: [1] })],
    ['authRequired that is not a boolean', () => ({ authRequired: 'yes' })],
  ])('answers 400 {status: failure} for %s, changing nothing', async (_, body) => {
    const tenant = backend.createTenant();
    await register(tenant, { taskTypes: ['approve'] });
    const before = backend.getConnector(tenant.system.id);
    expect(await register(tenant, body())).toMatchObject({ status: 400, body: { status: 'failure' } });
    expect(backend.getConnector(tenant.system.id)).toEqual(before);
  });
});

describe('connector state (15, 16)', () => {
  it('answers an empty state before the first write, with its record fields', async () => {
    const tenant = backend.createTenant();
    const answer = await call(backend, 'GET', '/v2/connector/state', { token: tenant.connectorToken });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      status: 'success',
      data: {
        state: {
          id: expect.any(String),
          createdAt: new Date(clock.now()).toISOString(),
          updatedAt: new Date(clock.now()).toISOString(),
          state: {},
        },
      },
    });
  });

  it('replaces the whole state object on PUT and updates updatedAt', async () => {
    const tenant = backend.createTenant();
    const created = new Date(clock.now()).toISOString();
    const putState = (state: unknown) =>
      call(backend, 'PUT', '/v2/connector/state', { token: tenant.connectorToken, body: { state } });
    expect((await putState({ cursor: 'a', extra: 1 })).body).toEqual({ status: 'success' });
    clock.advance(1000);
    await putState({ cursor: 'b' });
    const answer = await call(backend, 'GET', '/v2/connector/state', { token: tenant.connectorToken });
    expect(answer.body.data.state).toMatchObject({
      createdAt: created,
      updatedAt: new Date(clock.now()).toISOString(),
      state: { cursor: 'b' },
    });
    expect(backend.getState(tenant.system.id).state).toEqual({ cursor: 'b' });
  });

  it('answers 400 for a state that is not an object and 413 for one over 1 MiB', async () => {
    const tenant = backend.createTenant();
    for (const body of [{}, { state: [1] }, { state: 'x' }]) {
      const answer = await call(backend, 'PUT', '/v2/connector/state', {
        token: tenant.connectorToken,
        body,
      });
      expect(answer).toMatchObject({ status: 400, body: { status: 'failure' } });
    }
    const big = await call(backend, 'PUT', '/v2/connector/state', {
      token: tenant.connectorToken,
      body: { state: { blob: 'x'.repeat(1024 * 1024) } },
    });
    expect(big).toMatchObject({ status: 413, body: { status: 'failure' } });
    expect(backend.getState(tenant.system.id).state).toEqual({});
  });
});

describe('UI templates (17, 18)', () => {
  it('writes with GET and a JSON body, as published, and reads them keyed by schema id', async () => {
    const tenant = backend.createTenant();
    const write = (uiTemplates: unknown) =>
      call(backend, 'GET', '/v2/connector/uitemplates', {
        token: tenant.connectorToken,
        body: { uiTemplates },
      });
    expect(
      await write([
        { type: 'detail', schemaId: 'po', template: { v: 1 } },
        { type: 'card', schemaId: 'po', template: { c: 1 } },
      ]),
    ).toMatchObject({ status: 200, body: { status: 'success' } });
    const read = () => call(backend, 'GET', '/v2/connector/ui-templates', { token: tenant.connectorToken });
    const first = await read();
    expect(first.body).toEqual({
      status: 'success',
      data: {
        uiTemplates: [
          { id: expect.any(String), type: 'card', uiTemplate: { po: { c: 1 } } },
          { id: expect.any(String), type: 'detail', uiTemplate: { po: { v: 1 } } },
        ],
      },
    });
    await write([{ type: 'detail', schemaId: 'po', template: { v: 2 } }]);
    const second = await read();
    expect(second.body.data.uiTemplates[1]).toEqual({
      id: first.body.data.uiTemplates[1].id,
      type: 'detail',
      uiTemplate: { po: { v: 2 } },
    });
  });

  it('answers 400 for a write without a body or with an invalid template', async () => {
    const tenant = backend.createTenant();
    for (const body of [
      undefined,
      {},
      { uiTemplates: [] },
      { uiTemplates: [{ type: 'x', schemaId: 'y', template: 1 }] },
    ]) {
      const answer = await call(backend, 'GET', '/v2/connector/uitemplates', {
        token: tenant.connectorToken,
        body,
      });
      expect(answer).toMatchObject({ status: 400, body: { status: 'failure' } });
    }
  });

  it('reads with a JSON content type and no body, as clients that always send it do', async () => {
    const tenant = backend.createTenant();
    const answer = await call(backend, 'GET', '/v2/connector/ui-templates', {
      token: tenant.connectorToken,
      headers: { 'content-type': 'application/json' },
    });
    expect(answer).toMatchObject({ status: 200, body: { data: { uiTemplates: [] } } });
  });
});
