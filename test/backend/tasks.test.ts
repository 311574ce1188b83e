import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCredentials, sealCredentials, toBase64 } from '../../src/api/index.js';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, type ManualClock, registerTenant, start, UNKNOWN_ID } from './helpers.js';

let backend: ReferenceBackend;
let clock: ManualClock;
const LEASE = 30_000;

beforeAll(async () => {
  ({ backend, clock } = await start({ leaseMs: LEASE }));
});
afterAll(() => backend.close());

/** A tenant whose connector has registered and pushed two purchase orders, PO-1 with data. */
function registeredTenant(registration: Record<string, unknown> = {}): Promise<Tenant> {
  return registerTenant(
    backend,
    [
      { id: 'PO-1', schemaId: 'po', approver: 'u', data: { amount: 1 } },
      { id: 'PO-2', schemaId: 'po', approver: 'u' },
    ],
    registration,
  );
}

const getTask = (tenant: Tenant) =>
  call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
const report = (tenant: Tenant, taskId: string, taskResult: unknown) =>
  call(backend, 'PATCH', `/v2/connector/tasks/${taskId}`, {
    token: tenant.connectorToken,
    body: { taskResult },
  });

describe('Get task (13)', () => {
  it('answers task null when no task waits', async () => {
    const tenant = await registeredTenant();
    expect(await getTask(tenant)).toMatchObject({
      status: 200,
      body: { status: 'success', data: { task: null } },
    });
  });

  it('hands out the oldest waiting task with its approval as stored and its comments', async () => {
    const tenant = await registeredTenant();
    const first = backend.createTask({
      systemId: tenant.system.id,
      type: 'approve',
      approvalId: 'PO-1',
      approveComments: 'ok',
    });
    backend.createTask({ systemId: tenant.system.id, type: 'reject', approvalId: 'PO-2' });
    const answer = await getTask(tenant);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      status: 'success',
      data: {
        task: {
          id: first.id,
          type: 'approve',
          data: {
            approval: {
              id: 'PO-1',
              schemaId: 'po',
              approver: 'u',
              resolved: false,
              lastModified: new Date(clock.now()).toISOString(),
              data: { amount: 1 },
            },
            approveComments: 'ok',
          },
        },
      },
    });
    expect(backend.getTask(first.id)).toMatchObject({
      status: 'leased',
      deliveries: 1,
      leaseExpiresAt: new Date(clock.now() + LEASE).toISOString(),
    });
    expect((await getTask(tenant)).body.data.task).toMatchObject({
      type: 'reject',
      data: { approveComments: '' },
    });
    expect((await getTask(tenant)).body.data.task).toBeNull();
  });

  it('offers a task again when its lease ends without a result', async () => {
    const tenant = await registeredTenant();
    const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    expect((await getTask(tenant)).body.data.task.id).toBe(task.id);
    clock.advance(LEASE - 1);
    expect((await getTask(tenant)).body.data.task).toBeNull();
    expect(backend.getTask(task.id)?.status).toBe('leased');
    clock.advance(1);
    expect(backend.getTask(task.id)?.status).toBe('waiting');
    expect((await getTask(tenant)).body.data.task.id).toBe(task.id);
    expect(backend.getTask(task.id)).toMatchObject({ status: 'leased', deliveries: 2 });
  });

  it('hands out a task whose lease ended before the tasks created after it, past a lease still running', async () => {
    const tenant = await registeredTenant();
    const [first, second, third] = ['PO-1', 'PO-2', 'PO-1'].map(
      (approvalId) => backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId }).id,
    );
    const next = async () => (await getTask(tenant)).body.data.task?.id ?? null;
    expect(await next()).toBe(first);
    clock.advance(LEASE / 2);
    expect(await next()).toBe(second);
    clock.advance(LEASE / 2);
    // The first lease has ended, the second runs: the first comes again, before the third.
    expect(await next()).toBe(first);
    clock.advance(LEASE / 2);
    expect(await next()).toBe(second);
    expect(await next()).toBe(third);
    expect(await next()).toBeNull();
    expect(backend.listTasks(tenant.system.id).map((task) => [task.status, task.deliveries])).toEqual([
      ['leased', 2],
      ['leased', 2],
      ['leased', 1],
    ]);
  });
});

describe('Update task result (14)', () => {
  it('completes the task, also after its lease ended, and keeps the result', async () => {
    const tenant = await registeredTenant();
    const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    await getTask(tenant);
    clock.advance(LEASE * 2);
    expect(await report(tenant, task.id, { status: 'success', meta: { ref: 7 } })).toMatchObject({
      status: 200,
      body: { status: 'success' },
    });
    expect(backend.getTask(task.id)).toMatchObject({
      status: 'completed',
      result: { status: 'success', meta: { ref: 7 } },
      completedAt: new Date(clock.now()).toISOString(),
    });
    expect((await getTask(tenant)).body.data.task).toBeNull();
  });

  it('accepts a result for a task never handed out', async () => {
    const tenant = await registeredTenant();
    const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    expect((await report(tenant, task.id, { status: 'systemError' })).status).toBe(200);
  });

  it('answers 409 for a task already completed and keeps the first result', async () => {
    const tenant = await registeredTenant();
    const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    await report(tenant, task.id, { status: 'internalError' });
    expect(await report(tenant, task.id, { status: 'success' })).toMatchObject({
      status: 409,
      body: { status: 'failure' },
    });
    expect(backend.getTask(task.id)?.result).toEqual({ status: 'internalError' });
  });

  it("answers 404 for an unknown task and for another system's task", async () => {
    const tenant = await registeredTenant();
    const other = await registeredTenant();
    const foreign = backend.createTask({ systemId: other.system.id, type: 'approve', approvalId: 'PO-1' });
    for (const id of [UNKNOWN_ID, 'not-even-a-uuid', foreign.id]) {
      expect(await report(tenant, id, { status: 'success' })).toMatchObject({
        status: 404,
        body: { status: 'failure' },
      });
    }
    expect(backend.getTask(foreign.id)?.status).toBe('waiting');
  });

  it.each([[{}], [{ status: 'done' }], [{ status: 'success', meta: 'x' }]])(
    'answers 400 for the result %j',
    async (result) => {
      const tenant = await registeredTenant();
      const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
      expect(await report(tenant, task.id, result)).toMatchObject({
        status: 400,
        body: { status: 'failure' },
      });
      expect(backend.getTask(task.id)?.status).toBe('waiting');
    },
  );

  it.each(['success', 'internalError', 'authenticationError', 'serviceUnavailable', 'systemError'])(
    'accepts the status %s',
    async (status) => {
      const tenant = await registeredTenant();
      const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
      expect((await report(tenant, task.id, { status })).status).toBe(200);
    },
  );
});

describe('creating tasks', () => {
  it('refuses a task type the connector has not registered, and an unknown approval', async () => {
    const tenant = await registeredTenant();
    expect(() =>
      backend.createTask({ systemId: tenant.system.id, type: 'escalate', approvalId: 'PO-1' }),
    ).toThrow(expect.objectContaining({ code: 'service', kind: 'Conflict' }));
    expect(() =>
      backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-9' }),
    ).toThrow(expect.objectContaining({ code: 'service', kind: 'Not Found' }));
    expect(() => backend.createTask({ systemId: UNKNOWN_ID, type: 'approve', approvalId: 'PO-1' })).toThrow(
      expect.objectContaining({ code: 'service', kind: 'Not Found' }),
    );
  });

  it('seals credentials to the connector key when it registered authRequired', async () => {
    const pair = nacl.box.keyPair();
    const tenant = await registeredTenant({
      authRequired: true,
      publicKey: toBase64(pair.publicKey),
      publicKeyExpiredAt: new Date(clock.now() + 3_600_000).toISOString(),
    });
    const task = backend.createTask({
      systemId: tenant.system.id,
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { username: 'ada', password: 's3cret' },
    });
    expect(task.encrypted).toBe(true);
    const delivered = (await getTask(tenant)).body.data.task;
    expect(delivered.data.credentials).toMatchObject({
      algorithm: 'x25519-xsalsa20-poly1305',
      publicKey: toBase64(pair.publicKey),
    });
    expect(JSON.stringify(delivered)).not.toContain('s3cret');
    expect(openCredentials(delivered.data.credentials, pair.secretKey)).toEqual({
      username: 'ada',
      password: 's3cret',
    });
  });

  it('still delivers a task sealed to a key the connector has since replaced', async () => {
    const first = nacl.box.keyPair();
    const expiry = new Date(clock.now() + 3_600_000).toISOString();
    const tenant = await registeredTenant({
      authRequired: true,
      publicKey: toBase64(first.publicKey),
      publicKeyExpiredAt: expiry,
    });
    backend.createTask({
      systemId: tenant.system.id,
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { token: 't' },
    });
    await call(backend, 'PATCH', '/v2/connector', {
      token: tenant.connectorToken,
      body: {
        authRequired: true,
        publicKey: toBase64(nacl.box.keyPair().publicKey),
        publicKeyExpiredAt: expiry,
      },
    });
    const delivered = (await getTask(tenant)).body.data.task;
    expect(openCredentials(delivered.data.credentials, first.secretKey)).toEqual({ token: 't' });
  });

  it('refuses a task when the key has expired, or without credentials', async () => {
    const tenant = await registeredTenant({
      authRequired: true,
      publicKey: toBase64(nacl.box.keyPair().publicKey),
      publicKeyExpiredAt: new Date(clock.now() + 1000).toISOString(),
    });
    expect(() =>
      backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' }),
    ).toThrow(expect.objectContaining({ code: 'service', kind: 'Bad Request' }));
    clock.advance(1000);
    expect(() =>
      backend.createTask({
        systemId: tenant.system.id,
        type: 'approve',
        approvalId: 'PO-1',
        credentials: { a: 1 },
      }),
    ).toThrow(expect.objectContaining({ code: 'service', kind: 'Conflict' }));
    expect(backend.listTasks(tenant.system.id)).toEqual([]);
  });

  it('stores credentials sealed by the caller as they are, and only their format fields', async () => {
    const pair = nacl.box.keyPair();
    const tenant = await registeredTenant({
      authRequired: true,
      publicKey: toBase64(pair.publicKey),
      publicKeyExpiredAt: new Date(clock.now() + 3_600_000).toISOString(),
    });
    const sealed = sealCredentials(
      { username: 'ada', password: 'sealed-elsewhere' },
      toBase64(pair.publicKey),
    );
    const answer = await call(backend, 'POST', '/admin/tasks', {
      token: backend.adminToken,
      body: {
        systemId: tenant.system.id,
        type: 'approve',
        approvalId: 'PO-1',
        sealedCredentials: { ...sealed, extra: 'not stored' },
      },
    });
    expect(answer).toMatchObject({ status: 200, body: { encrypted: true } });
    const delivered = (await getTask(tenant)).body.data.task;
    expect(delivered.data.credentials).toEqual(sealed);
    expect(openCredentials(delivered.data.credentials, pair.secretKey)).toEqual({
      username: 'ada',
      password: 'sealed-elsewhere',
    });
  });

  it('refuses sealed credentials that are malformed, sealed to another key, or sent with plain ones', async () => {
    const pair = nacl.box.keyPair();
    const tenant = await registeredTenant({
      authRequired: true,
      publicKey: toBase64(pair.publicKey),
      publicKeyExpiredAt: new Date(clock.now() + 3_600_000).toISOString(),
    });
    const sealed = sealCredentials({ token: 't' }, toBase64(pair.publicKey));
    const create = (extra: Record<string, unknown>) => () =>
      backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1', ...extra });
    expect(create({ sealedCredentials: { ...sealed, nonce: 'AAAA' } })).toThrow(
      expect.objectContaining({
        code: 'service',
        kind: 'Bad Request',
        message: expect.stringContaining('sealedCredentials.nonce'),
      }),
    );
    expect(create({ sealedCredentials: { ...sealed, ciphertext: 'not base64!' } })).toThrow(
      expect.objectContaining({
        code: 'service',
        kind: 'Bad Request',
        message: expect.stringContaining('ciphertext'),
      }),
    );
    expect(create({ sealedCredentials: { ...sealed, algorithm: 'rot13' } })).toThrow(
      expect.objectContaining({ code: 'service', kind: 'Bad Request' }),
    );
    const other = sealCredentials({ token: 't' }, toBase64(nacl.box.keyPair().publicKey));
    expect(create({ sealedCredentials: other })).toThrow(
      expect.objectContaining({ code: 'service', kind: 'Conflict' }),
    );
    expect(create({ sealedCredentials: sealed, credentials: { token: 't' } })).toThrow(
      expect.objectContaining({ code: 'service', kind: 'Bad Request' }),
    );
    expect(backend.listTasks(tenant.system.id)).toEqual([]);
  });

  it('stores no credentials for a connector without authRequired', async () => {
    const tenant = await registeredTenant();
    const task = backend.createTask({
      systemId: tenant.system.id,
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { a: 1 },
    });
    expect(task.encrypted).toBe(false);
    expect((await getTask(tenant)).body.data.task.data).not.toHaveProperty('credentials');
  });

  it('ends a lease early on request', async () => {
    const tenant = await registeredTenant();
    const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    await getTask(tenant);
    expect(backend.expireLeases({ taskId: task.id })).toBe(1);
    expect((await getTask(tenant)).body.data.task.id).toBe(task.id);
    expect(backend.expireLeases({ systemId: tenant.system.id })).toBe(1);
    expect(backend.getTask(task.id)?.deliveries).toBe(2);
  });
});
