import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startReferenceBackend } from '../../src/backend/index.js';
import { call } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'reference-backend-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a data file', () => {
  it('keeps everything across a restart, and stores tokens hashed', async () => {
    const dataFile = join(dir, 'data.sqlite');
    const first = await startReferenceBackend({ dataFile });
    const tenant = first.createTenant({
      managementToken: 'plain-management-token',
      connectorToken: 'plain-connector-token',
    });
    const user = first.createUser(tenant.organization.id, {
      email: 'a@x.example',
      firstName: 'A',
      lastName: 'B',
    });
    await call(first, 'PATCH', '/v2/connector', {
      token: tenant.connectorToken,
      body: { taskTypes: ['approve'] },
    });
    await call(first, 'PUT', '/v2/rawapprovals/A', {
      token: tenant.connectorToken,
      body: { approval: { schemaId: 's', approver: 'u', lastModified: '2026-01-01T00:00:00Z' } },
    });
    await call(first, 'PUT', '/v2/connector/state', {
      token: tenant.connectorToken,
      body: { state: { cursor: 7 } },
    });
    const task = first.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'A' });
    await first.close();

    const bytes = [dataFile, `${dataFile}-wal`]
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file).toString('latin1'))
      .join('');
    expect(bytes).not.toContain('plain-management-token');
    expect(bytes).not.toContain('plain-connector-token');

    const second = await startReferenceBackend({ dataFile });
    try {
      const users = await call(second, 'GET', '/v1/users', { token: tenant.managementToken });
      expect(users.body.map((u: { id: string }) => u.id)).toEqual([user.id]);
      const approval = await call(second, 'GET', '/v2/rawapprovals/A', { token: tenant.connectorToken });
      expect(approval.body.data.approval.lastModified).toBe('2026-01-01T00:00:00.000Z');
      expect(second.getState(tenant.system.id).state).toEqual({ cursor: 7 });
      const delivered = await call(second, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
      expect(delivered.body.data.task.id).toBe(task.id);
    } finally {
      await second.close();
    }
  });

  it('applies a seed only to an empty store, so a restart with the same seed duplicates nothing', async () => {
    const dataFile = join(dir, 'seeded.sqlite');
    const seed = {
      organizations: [
        {
          name: 'Acme',
          managementTokens: ['seeded-management'],
          users: [{ email: 'a@x.example', firstName: 'A', lastName: 'B' }],
        },
      ],
    };
    for (let run = 0; run < 2; run++) {
      const backend = await startReferenceBackend({ dataFile, seed });
      const users = await call(backend, 'GET', '/v1/users', { token: 'seeded-management' });
      expect(users.body).toHaveLength(1);
      await backend.close();
    }
  });
});
