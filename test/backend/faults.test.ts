import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, start } from './helpers.js';

let backend: ReferenceBackend;
let tenant: Tenant;

beforeAll(async () => {
  ({ backend } = await start());
  tenant = backend.createTenant();
  await call(backend, 'PATCH', '/v2/connector', {
    token: tenant.connectorToken,
    body: { taskTypes: ['approve'] },
  });
  await call(backend, 'PUT', '/v2/rawapprovals/A', {
    token: tenant.connectorToken,
    body: { approval: { schemaId: 's', approver: 'u' } },
  });
});
afterEach(() => backend.faults.clear());
afterAll(() => backend.close());

const state = () => call(backend, 'GET', '/v2/connector/state', { token: tenant.connectorToken });
const systems = () => call(backend, 'GET', '/v1/systems', { token: tenant.managementToken });

/** Injects a `status` fault on putting an approval and puts B: the answer is in the v2 shape, and B is not stored. */
async function expectPutOfBAnswered(status: number): Promise<void> {
  backend.faults.inject({
    method: 'PUT',
    path: '/v2/rawapprovals/:approvalId',
    fault: { type: 'status', status },
  });
  const put = await call(backend, 'PUT', '/v2/rawapprovals/B', {
    token: tenant.connectorToken,
    body: { approval: { schemaId: 's', approver: 'u' } },
  });
  expect(put).toMatchObject({ status, body: { status: 'failure' } });
  expect(put.headers['retry-after']).toBeUndefined();
  expect(backend.listApprovals(tenant.system.id).map((a) => a.id)).toEqual(['A']);
}

describe('faults', () => {
  it('are off unless asked', async () => {
    expect(backend.faults.list()).toEqual([]);
    expect((await state()).status).toBe(200);
  });

  it('answer the next N matching requests 429 with Retry-After, in the API shape, then stop', async () => {
    backend.faults.inject({
      method: 'GET',
      path: '/v2/connector/state',
      times: 2,
      fault: { type: 'status', status: 429, retryAfter: 3 },
    });
    expect((await systems()).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const answer = await state();
      expect(answer).toMatchObject({ status: 429, body: { status: 'failure' } });
      expect(answer.headers['retry-after']).toBe('3');
    }
    expect((await state()).status).toBe(200);
    expect(backend.faults.list()).toEqual([]);
  });

  it('answer a 5xx in the v1 shape on v1, before authentication and without doing anything', async () => {
    backend.faults.inject({ path: '/v1/*', fault: { type: 'status', status: 503, retryAfter: 1 } });
    const answer = await call(backend, 'GET', '/v1/systems');
    expect(answer).toMatchObject({ status: 503, body: { Error: 'Internal Server Error. injected fault' } });
    expect(answer.headers['retry-after']).toBe('1');
    await expectPutOfBAnswered(500);
  });

  it('answer a 4xx a proxy would send, in the shape of the path’s API, without doing anything', async () => {
    backend.faults.inject({ path: '/v1/*', fault: { type: 'status', status: 403 } });
    expect(await call(backend, 'GET', '/v1/systems')).toMatchObject({
      status: 403,
      body: { Error: 'Forbidden. injected fault' },
    });
    await expectPutOfBAnswered(431);
  });

  it('drop the connection before the request is handled', async () => {
    backend.faults.inject({ method: 'PUT', fault: { type: 'drop' } });
    await expect(
      call(backend, 'PUT', '/v2/rawapprovals/C', {
        token: tenant.connectorToken,
        body: { approval: { schemaId: 's', approver: 'u' } },
      }),
    ).rejects.toThrow();
    expect(backend.listApprovals(tenant.system.id).map((a) => a.id)).not.toContain('C');
    expect((await state()).status).toBe(200);
  });

  it('accept a write and drop its answer', async () => {
    backend.faults.inject({ method: 'PUT', path: '/v2/connector/state', fault: { type: 'dropAnswer' } });
    await expect(
      call(backend, 'PUT', '/v2/connector/state', {
        token: tenant.connectorToken,
        body: { state: { saved: true } },
      }),
    ).rejects.toThrow();
    expect(backend.getState(tenant.system.id).state).toEqual({ saved: true });
  });

  it('add latency and then answer normally', async () => {
    backend.faults.inject({ path: '/v2/connector/state', fault: { type: 'delay', ms: 5 } });
    expect((await state()).status).toBe(200);
    expect(backend.faults.list()).toEqual([]);
  });

  it('deliver a task twice', async () => {
    const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'A' });
    backend.faults.inject({ fault: { type: 'duplicateTask' } });
    // Other requests do not use up a duplicate-delivery fault.
    expect((await state()).status).toBe(200);
    const getTask = () => call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
    expect((await getTask()).body.data.task.id).toBe(task.id);
    expect((await getTask()).body.data.task.id).toBe(task.id);
    expect((await getTask()).body.data.task).toBeNull();
    expect(backend.getTask(task.id)).toMatchObject({ deliveries: 2, status: 'leased' });
    await call(backend, 'PATCH', `/v2/connector/tasks/${task.id}`, {
      token: tenant.connectorToken,
      body: { taskResult: { status: 'success' } },
    });
  });

  it('apply the first matching fault, and can be listed and removed one by one', () => {
    const a = backend.faults.inject({ path: '/v2/*', fault: { type: 'drop' } });
    const b = backend.faults.inject({ path: '/v1/*', times: 3, fault: { type: 'status', status: 502 } });
    expect(backend.faults.list()).toEqual([
      { id: a.id, path: '/v2/*', remaining: 1, hits: 0, fault: { type: 'drop' } },
      { id: b.id, path: '/v1/*', remaining: 3, hits: 0, fault: { type: 'status', status: 502 } },
    ]);
    backend.faults.clear(a.id);
    expect(backend.faults.list().map((fault) => fault.id)).toEqual([b.id]);
  });

  it('apply to one system’s connector only when scoped to it, and count the requests they answered', async () => {
    const other = backend.createTenant();
    const otherState = () => call(backend, 'GET', '/v2/connector/state', { token: other.connectorToken });
    const fault = backend.faults.inject({
      systemId: tenant.system.id,
      times: 10,
      fault: { type: 'status', status: 503 },
    });
    expect((await otherState()).status).toBe(200);
    expect((await systems()).status).toBe(200);
    expect((await state()).status).toBe(503);
    expect((await state()).status).toBe(503);
    expect(backend.faults.list()).toMatchObject([
      { id: fault.id, systemId: tenant.system.id, hits: 2, remaining: 8 },
    ]);
  });

  it('tell a listener when one is added, applied, spent or removed', async () => {
    const heard: string[] = [];
    const stop = backend.faults.subscribe((event) =>
      heard.push(`${event.type} ${'systemId' in event ? event.systemId : ''}`),
    );
    try {
      backend.faults.inject({
        path: '/v2/connector/state',
        times: 2,
        fault: { type: 'status', status: 503 },
      });
      await state();
      await state();
      expect(backend.faults.list()).toEqual([]);
      const kept = backend.faults.inject({ fault: { type: 'drop' } });
      backend.faults.clear(kept.id);
    } finally {
      stop();
    }
    expect(heard).toEqual([
      'added ',
      `applied ${tenant.system.id}`,
      `spent ${tenant.system.id}`,
      'added ',
      'removed ',
    ]);
  });

  it('refuse an invalid rule', () => {
    expect(() => backend.faults.inject({ fault: { type: 'status', status: 302 } } as never)).toThrow(
      expect.objectContaining({ code: 'service', kind: 'Bad Request' }),
    );
    expect(() => backend.faults.inject({ times: 0, fault: { type: 'drop' } })).toThrow();
    expect(() => backend.faults.inject({ path: 'no-slash', fault: { type: 'drop' } })).toThrow();
  });

  it('never touch the admin API', async () => {
    backend.faults.inject({ times: 5, fault: { type: 'drop' } });
    const answer = await call(backend, 'GET', '/admin/faults', { token: backend.adminToken });
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(1);
  });

  it('are driven through the admin API too', async () => {
    const admin = { token: backend.adminToken };
    const created = await call(backend, 'POST', '/admin/faults', {
      ...admin,
      body: { method: 'GET', path: '/v1/systems', fault: { type: 'status', status: 429 } },
    });
    expect(created).toMatchObject({ status: 200, body: { id: expect.any(Number), remaining: 1 } });
    const limited = await systems();
    expect(limited).toMatchObject({ status: 429, body: { Error: 'Too Many Requests. injected fault' } });
    expect(limited.headers['retry-after']).toBe('1');
    await call(backend, 'POST', '/admin/faults', { ...admin, body: { fault: { type: 'drop' } } });
    expect((await call(backend, 'GET', '/admin/faults', admin)).body).toHaveLength(1);
    expect((await call(backend, 'DELETE', '/admin/faults', admin)).status).toBe(200);
    expect((await call(backend, 'GET', '/admin/faults', admin)).body).toEqual([]);
    const invalid = await call(backend, 'POST', '/admin/faults', {
      ...admin,
      body: { fault: { type: 'explode' } },
    });
    expect(invalid).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
  });

  it('are refused through the admin API, as through the console, when scoped to a system that does not exist', async () => {
    const admin = { token: backend.adminToken };
    const answer = await call(backend, 'POST', '/admin/faults', {
      ...admin,
      body: { systemId: 'no-such-system', fault: { type: 'drop' } },
    });
    expect(answer).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(backend.faults.list()).toEqual([]);
    const scoped = await call(backend, 'POST', '/admin/faults', {
      ...admin,
      body: { systemId: tenant.system.id, fault: { type: 'drop' } },
    });
    expect(scoped.status).toBe(200);
    const one = await call(backend, 'DELETE', `/admin/faults/${scoped.body.id}`, admin);
    expect(one.status).toBe(200);
    expect(backend.faults.list()).toEqual([]);
  });
});
