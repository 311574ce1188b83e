import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readSeedFile, startReferenceBackend } from '../../src/backend/index.js';
import { ValidationError } from '../../src/errors.js';
import { call } from './helpers.js';

const demo = fileURLToPath(new URL('../../examples/seed/demo.json', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'reference-backend-seed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('seeding', () => {
  it('loads the demo seed: every token opens its API and the data is there', async () => {
    const backend = await startReferenceBackend({ seed: demo });
    try {
      const users = await call(backend, 'GET', '/v1/users', { token: 'demo-management-acme' });
      expect(users.body.map((u: { email: string }) => u.email)).toEqual([
        'ada@acme.example',
        'alan@acme.example',
        'grace@acme.example',
      ]);
      const mappings = await call(
        backend,
        'GET',
        '/v1/users/0a1b2c3d-0001-4000-8000-000000000001/usermappings',
        {
          token: 'demo-management-acme',
        },
      );
      expect(mappings.body).toEqual([
        {
          systemUserId: 'jira-ada',
          systemId: '5e6f7a8b-1111-4222-8333-444455556666',
          userId: '0a1b2c3d-0001-4000-8000-000000000001',
        },
      ]);
      const approvals = await call(backend, 'GET', '/v2/rawapprovals', { token: 'demo-connector-jira' });
      expect(approvals.body.data.approvals.map((a: { id: string }) => a.id)).toEqual([
        'PO-1001',
        'PO-1002',
        'LV-2001',
      ]);
      const templates = await call(backend, 'GET', '/v2/connector/ui-templates', {
        token: 'demo-connector-jira',
      });
      expect(templates.body.data.uiTemplates).toHaveLength(1);
      expect(backend.getConnector('5e6f7a8b-1111-4222-8333-444455556666').taskTypes).toEqual([
        'approve',
        'reject',
      ]);
      expect(backend.getState('5e6f7a8b-1111-4222-8333-444455556666').state).toEqual({
        cursor: '2026-05-02T08:15:00.000Z',
      });
      for (const token of ['demo-connector-sap', 'demo-connector-servicenow']) {
        expect((await call(backend, 'GET', '/v2/connector/state', { token })).status).toBe(200);
      }
      const globex = await call(backend, 'GET', '/v1/users', { token: 'demo-management-globex' });
      expect(globex.body.map((u: { email: string }) => u.email)).toEqual(['hank@globex.example']);
      const task = backend.createTask({
        systemId: '5e6f7a8b-1111-4222-8333-444455556666',
        type: 'approve',
        approvalId: 'PO-1001',
      });
      expect(task.status).toBe('waiting');
    } finally {
      await backend.close();
    }
  });

  it('rejects an invalid seed with one readable error naming every problem', async () => {
    const seed = {
      organizations: [
        { name: '', users: [{ email: 'nope', firstName: 'A', lastName: 'B' }], managementTokens: ['short'] },
      ],
      extra: true,
    };
    const error = await startReferenceBackend({ seed: seed as never }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    const message = (error as ValidationError).message;
    expect(message).toMatch(/^Invalid seed: /);
    expect(message).toContain('organizations[0].name');
    expect(message).toContain('organizations[0].users[0].email');
    expect(message).toContain('organizations[0].managementTokens[0]');
    expect(message).toContain('Unrecognized key');
  });

  it('rejects a seed whose references do not resolve, naming the place', async () => {
    const seed = {
      organizations: [
        {
          name: 'A',
          users: [{ email: 'a@x.example', firstName: 'A', lastName: 'B' }],
          systems: [{ name: 'S', approvals: [{ id: 'X', schemaId: 's' }] }],
        },
      ],
    };
    await expect(startReferenceBackend({ seed })).rejects.toThrow(
      /organizations\[0\]\.systems\[0\]\.approvals\[0\]/,
    );
    const dup = {
      organizations: [
        { name: 'A', managementTokens: ['same-token'] },
        { name: 'B', managementTokens: ['same-token'] },
      ],
    };
    await expect(startReferenceBackend({ seed: dup })).rejects.toThrow(
      /organizations\[1\]\.managementTokens\[0\]: token: already in use/,
    );
  });

  it('reads a seed file and names the file when it is not JSON', () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{ "organizations": [');
    expect(() => readSeedFile(file)).toThrow(ValidationError);
    expect(() => readSeedFile(file)).toThrow(/^Invalid seed file .*broken\.json: cannot be read as JSON/);
    expect(readSeedFile(demo).organizations).toHaveLength(2);
  });
});
