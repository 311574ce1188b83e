import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend } from '../../src/backend/index.js';
import { call, type ManualClock, start, UNKNOWN_ID } from './helpers.js';

let backend: ReferenceBackend;
let clock: ManualClock;

beforeAll(async () => {
  ({ backend, clock } = await start());
});
afterAll(() => backend.close());

const admin = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) =>
  call(backend, method, `/admin${path}`, { token: backend.adminToken, body });

describe('admin API', () => {
  it('generates an admin token when none is given', () => {
    expect(backend.adminToken.length).toBeGreaterThanOrEqual(16);
  });

  it('builds a tenant step by step, each token opening its API', async () => {
    const org = await admin('POST', '/organizations', { name: 'Acme' });
    expect(org).toMatchObject({ status: 200, body: { id: expect.any(String), name: 'Acme' } });
    const management = await admin('POST', `/organizations/${org.body.id}/tokens`, {});
    const user = await admin('POST', `/organizations/${org.body.id}/users`, {
      email: 'a@x.example',
      firstName: 'A',
      lastName: 'B',
    });
    expect(user.body).toMatchObject({ email: 'a@x.example', firstName: 'A', orgId: org.body.id });
    const system = await admin('POST', `/organizations/${org.body.id}/systems`, { name: 'Jira' });
    const connector = await admin('POST', `/systems/${system.body.id}/tokens`, {
      token: 'chosen-admin-made-token',
    });
    expect(connector.body).toEqual({ token: 'chosen-admin-made-token' });

    const users = await call(backend, 'GET', '/v1/users', { token: management.body.token });
    expect(users.body.map((u: { id: string }) => u.id)).toEqual([user.body.id]);
    expect((await call(backend, 'GET', '/v2/connector/state', { token: connector.body.token })).status).toBe(
      200,
    );
  });

  it('creates a tenant in one call', async () => {
    const tenant = await admin('POST', '/tenants', { organizationName: 'One', systemName: 'Two' });
    expect(tenant.body).toMatchObject({
      organization: { name: 'One' },
      system: { name: 'Two' },
      managementToken: expect.any(String),
      connectorToken: expect.any(String),
    });
  });

  it('creates tasks, reads them, and ends their leases', async () => {
    const { body: tenant } = await admin('POST', '/tenants', {});
    const token = tenant.connectorToken;
    await call(backend, 'PATCH', '/v2/connector', { token, body: { taskTypes: ['approve'] } });
    await call(backend, 'PUT', '/v2/rawapprovals/A', {
      token,
      body: { approval: { schemaId: 's', approver: 'u' } },
    });
    const created = await admin('POST', '/tasks', {
      systemId: tenant.system.id,
      type: 'approve',
      approvalId: 'A',
      approveComments: 'fine',
    });
    expect(created.body).toMatchObject({ status: 'waiting', deliveries: 0, approveComments: 'fine' });
    await call(backend, 'GET', '/v2/connector/tasks', { token });
    expect((await admin('GET', `/tasks/${created.body.id}`)).body).toMatchObject({
      status: 'leased',
      deliveries: 1,
    });
    expect((await admin('POST', `/tasks/${created.body.id}/expire-lease`)).body).toEqual({ expired: 1 });
    expect((await admin('GET', `/tasks/${created.body.id}`)).body.status).toBe('waiting');
    await call(backend, 'GET', '/v2/connector/tasks', { token });
    expect((await admin('POST', '/leases/expire', { systemId: tenant.system.id })).body).toEqual({
      expired: 1,
    });
    expect((await admin('GET', `/systems/${tenant.system.id}/tasks`)).body).toHaveLength(1);
    expect((await admin('GET', `/systems/${tenant.system.id}/approvals`)).body).toEqual([
      expect.objectContaining({ id: 'A', data: {} }),
    ]);
    expect((await admin('GET', `/systems/${tenant.system.id}/connector`)).body).toMatchObject({
      taskTypes: ['approve'],
    });
    expect((await admin('GET', `/systems/${tenant.system.id}/state`)).body).toMatchObject({
      state: {},
      createdAt: new Date(clock.now()).toISOString(),
    });
  });

  it('answers errors as {error: {code, message}} with the fitting status', async () => {
    expect(await admin('GET', `/tasks/${UNKNOWN_ID}`)).toMatchObject({
      status: 404,
      body: {
        error: { code: 'not_found', message: `Not Found. Failed to find the an item tasks ${UNKNOWN_ID}` },
      },
    });
    expect((await admin('POST', `/organizations/${UNKNOWN_ID}/systems`, {})).status).toBe(404);
    expect((await admin('GET', `/systems/${UNKNOWN_ID}/state`)).status).toBe(404);
    expect(await admin('POST', '/organizations', { nmae: 'typo' })).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request' } },
    });
    const { body: tenant } = await admin('POST', '/tenants', {});
    expect(
      await admin('POST', '/tasks', { systemId: tenant.system.id, type: 'approve', approvalId: 'A' }),
    ).toMatchObject({
      status: 409,
      body: { error: { code: 'conflict' } },
    });
    const user = { email: 'dup@x.example', firstName: 'D', lastName: 'D' };
    await admin('POST', `/organizations/${tenant.organization.id}/users`, user);
    expect((await admin('POST', `/organizations/${tenant.organization.id}/users`, user)).status).toBe(409);
    expect(
      (await admin('POST', `/organizations/${tenant.organization.id}/users`, { ...user, email: 'bad' }))
        .status,
    ).toBe(400);
  });

  it('loads a seed, all or nothing', async () => {
    const ok = await admin('POST', '/seed', {
      organizations: [{ name: 'Seeded', managementTokens: ['seeded-by-admin'] }],
    });
    expect(ok).toMatchObject({ status: 200, body: { status: 'success' } });
    expect((await call(backend, 'GET', '/v1/systems', { token: 'seeded-by-admin' })).status).toBe(200);
    const bad = await admin('POST', '/seed', {
      organizations: [
        {
          name: 'Half',
          managementTokens: ['never-stored-token'],
          systems: [{ name: 'S', userMappings: [{ email: 'nobody@x.example', systemUserId: 'n' }] }],
        },
      ],
    });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
    expect(bad.body.error.message).toContain('organizations[0].systems[0].userMappings[0].email');
    expect((await call(backend, 'GET', '/v1/systems', { token: 'never-stored-token' })).status).toBe(401);
  });
});

describe('the handle', () => {
  it('finds the system a connector token opens, and none for another token', () => {
    const tenant = backend.createTenant({ connectorToken: 'token-of-the-handle-test' });
    expect(backend.systemOfToken('token-of-the-handle-test')).toEqual(tenant.system);
    expect(backend.systemOfToken(tenant.managementToken)).toBeUndefined();
    expect(backend.systemOfToken('a-token-nobody-made')).toBeUndefined();
  });

  it('tells a watcher each committed write until it stops watching, and never one that failed', async () => {
    const tenant = backend.createTenant();
    const heard: unknown[] = [];
    const unwatch = backend.watch((change) => heard.push(change));
    const token = tenant.connectorToken;
    await call(backend, 'PUT', '/v2/rawapprovals/W-1', {
      token,
      body: { approval: { schemaId: 's', approver: 'u', lastModified: '2026-05-01T09:00:00.000Z' } },
    });
    // Refused: nothing is written, nothing told.
    expect(
      (await call(backend, 'PUT', '/v2/rawapprovals/W-2', { token, body: { approval: { schemaId: 's' } } }))
        .status,
    ).toBe(400);
    await call(backend, 'PATCH', '/v2/connector', { token, body: { taskTypes: ['approve'] } });
    expect(heard).toEqual([
      {
        kind: 'approval',
        systemId: tenant.system.id,
        approvalId: 'W-1',
        lastModified: '2026-05-01T09:00:00.000Z',
        applied: true,
        at: expect.any(String),
      },
      { kind: 'connector', systemId: tenant.system.id },
    ]);
    unwatch();
    backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'W-1' });
    expect(heard).toHaveLength(2);
  });
});
