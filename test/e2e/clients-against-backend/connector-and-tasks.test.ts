/**
 * The connector and its tasks (12 to 14) through the client against the reference backend, over real HTTP:
 * registration, credentials sealed to the registered key, leases and results.
 * The setup the files of this folder share is in ./support.ts.
 */
import { randomUUID } from 'node:crypto';
import nacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import { openCredentials, toBase64 } from '../../../src/api/index.js';
import { ServiceError } from '../../../src/backend/index.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../../src/client/index.js';
import { ValidationError } from '../../../src/errors.js';
import { clientsAgainstBackend, expectV2, rejection } from './support.js';

const { backend, tenant } = clientsAgainstBackend();

describe('Integration API (v2)', () => {
  describe('connector and tasks (12 to 14)', () => {
    it('Update connector (12) merges, and what it registered decides what a task may be', async () => {
      const { v2, system } = tenant();
      await v2.registerConnector({ taskTypes: ['approve', 'reject', 'approve'], authRequired: false });
      expect(backend().getConnector(system.id)).toMatchObject({
        taskTypes: ['approve', 'reject'],
        authRequired: false,
      });
      await v2.registerConnector({ taskTypes: ['approve'] });
      expect(backend().getConnector(system.id)).toMatchObject({
        taskTypes: ['approve'],
        authRequired: false,
      });
      await v2.putApproval('PO-1', { schemaId: 's', approver: 'a' });
      expect(() => backend().createTask({ systemId: system.id, type: 'reject', approvalId: 'PO-1' })).toThrow(
        ServiceError,
      );
      expect(
        backend().createTask({ systemId: system.id, type: 'approve', approvalId: 'PO-1' }),
      ).toMatchObject({
        status: 'waiting',
      });
    });

    it('with authRequired, a task carries credentials sealed to the registered key', async () => {
      const { v2, system } = tenant();
      const keys = nacl.box.keyPair();
      const publicKey = toBase64(keys.publicKey);
      await v2.registerConnector({
        taskTypes: ['approve'],
        authRequired: true,
        publicKey,
        publicKeyExpiredAt: new Date(Date.now() + 3_600_000),
      });
      expect(backend().getConnector(system.id)).toMatchObject({ authRequired: true, publicKey });
      await v2.putApproval('PO-9', { schemaId: 's', approver: 'a' });
      backend().createTask({
        systemId: system.id,
        type: 'approve',
        approvalId: 'PO-9',
        credentials: { username: 'ada', password: 'hunter2' },
      });
      const task = await v2.getTask();
      expect(task?.data.credentials?.publicKey).toBe(publicKey);
      const sealed = task?.data.credentials;
      expect(sealed && openCredentials(sealed, keys.secretKey)).toEqual({
        username: 'ada',
        password: 'hunter2',
      });
    });

    it('an invalid or expired key is the backend’s 400; authRequired without a key is refused before sending', async () => {
      const { v2 } = tenant();
      expectV2(
        await rejection(
          v2.registerConnector({
            authRequired: true,
            publicKey: 'not-a-key',
            publicKeyExpiredAt: new Date(Date.now() + 60_000),
          }),
        ),
        BadRequestError,
        400,
      );
      expectV2(
        await rejection(
          v2.registerConnector({
            publicKey: toBase64(nacl.box.keyPair().publicKey),
            publicKeyExpiredAt: '2000-01-01T00:00:00Z',
          }),
        ),
        BadRequestError,
        400,
      );
      expect(await rejection(v2.registerConnector({ authRequired: true }))).toBeInstanceOf(ValidationError);
    });

    it('Get task (13) is null when none waits, leases one that does; Update task result (14) completes it', async () => {
      const { v2, system } = tenant();
      const other = tenant();
      expect(await v2.getTask()).toBeNull();

      await v2.registerConnector({ taskTypes: ['approve', 'reject'], authRequired: false });
      await v2.putApproval('PO-7', { schemaId: 'po', approver: 'jira-ada', data: { title: 'Old' } });
      const created = backend().createTask({
        systemId: system.id,
        type: 'approve',
        approvalId: 'PO-7',
        approveComments: 'Looks good',
      });
      // The task carries the approval as stored when it is handed out.
      await v2.putApproval('PO-7', { data: { title: 'New' } });
      expect(await other.v2.getTask()).toBeNull();

      const task = await v2.getTask();
      expect(task).toEqual({
        id: created.id,
        type: 'approve',
        data: { approval: await v2.getApproval('PO-7'), approveComments: 'Looks good' },
      });
      expect(task?.data.approval).toMatchObject({ data: { title: 'New' } });
      expect(backend().getTask(created.id)).toMatchObject({ status: 'leased', deliveries: 1 });
      expect(await v2.getTask()).toBeNull();

      // Another system's connector cannot report it.
      expectV2(
        await rejection(other.v2.reportTaskResult(created.id, { status: 'success' })),
        NotFoundError,
        404,
      );
      await v2.reportTaskResult(created.id, { status: 'success', meta: { sourceRef: 'JIRA-42' } });
      expect(backend().getTask(created.id)).toMatchObject({
        status: 'completed',
        result: { status: 'success', meta: { sourceRef: 'JIRA-42' } },
      });

      const second = await rejection(v2.reportTaskResult(created.id, { status: 'systemError' }));
      expectV2(second, ConflictError, 409);
      expect(second).toMatchObject({ code: 'conflict' });
      expect(backend().getTask(created.id)?.result).toEqual({
        status: 'success',
        meta: { sourceRef: 'JIRA-42' },
      });
      expectV2(await rejection(v2.reportTaskResult(randomUUID(), { status: 'success' })), NotFoundError, 404);
      expect(await v2.getTask()).toBeNull();
    });

    it('a task whose lease is ended is offered again, and its result is accepted once', async () => {
      const { v2, system } = tenant();
      await v2.registerConnector({ taskTypes: ['reject'] });
      await v2.putApproval('PO-8', { schemaId: 'po', approver: 'a' });
      const first = backend().createTask({ systemId: system.id, type: 'reject', approvalId: 'PO-8' });
      const second = backend().createTask({ systemId: system.id, type: 'reject', approvalId: 'PO-8' });
      expect((await v2.getTask())?.id).toBe(first.id);
      expect((await v2.getTask())?.id).toBe(second.id);
      backend().expireLeases({ taskId: first.id });
      expect((await v2.getTask())?.id).toBe(first.id);
      expect(backend().getTask(first.id)).toMatchObject({ deliveries: 2 });
      await v2.reportTaskResult(first.id, { status: 'internalError' });
      await v2.reportTaskResult(second.id, { status: 'authenticationError' });
      expect(
        backend()
          .listTasks(system.id)
          .map((task) => task.status),
      ).toEqual(['completed', 'completed']);
    });
  });
});
