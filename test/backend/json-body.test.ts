import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend } from '../../src/backend/index.js';
import { call, start } from './helpers.js';

let backend: ReferenceBackend;

beforeAll(async () => {
  ({ backend } = await start());
});
afterAll(() => backend.close());

describe('JSON bodies', () => {
  it('drop __proto__ keys, so a body can never change an object’s prototype', async () => {
    const tenant = backend.createTenant();
    const rawBody =
      '{"approval":{"schemaId":"s","approver":"a","lastModified":"2026-01-01T00:00:00Z","data":{"__proto__":{"polluted":true},"x":1}}}';
    const put = await call(backend, 'PUT', '/v2/rawapprovals/P-1', { token: tenant.connectorToken, rawBody });
    expect(put.status).toBe(200);
    const got = await call(backend, 'GET', '/v2/rawapprovals/P-1', { token: tenant.connectorToken });
    expect(got.body.data.approval.data).toEqual({ x: 1 });
    expect(Object.hasOwn(got.body.data.approval.data, '__proto__')).toBe(false);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('parse a body without __proto__ as it is', async () => {
    const tenant = backend.createTenant();
    const rawBody =
      '{"approval":{"schemaId":"s","approver":"a","data":{"proto":{"y":2},"list":[1,{"z":3}]}}}';
    expect(
      (await call(backend, 'PUT', '/v2/rawapprovals/P-2', { token: tenant.connectorToken, rawBody })).status,
    ).toBe(200);
    const got = await call(backend, 'GET', '/v2/rawapprovals/P-2', { token: tenant.connectorToken });
    expect(got.body.data.approval.data).toEqual({ proto: { y: 2 }, list: [1, { z: 3 }] });
  });
});
