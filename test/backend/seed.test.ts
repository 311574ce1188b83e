import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readSeedFile, startReferenceBackend } from '../../src/backend/index.js';
import { ValidationError } from '../../src/errors.js';
import { signIn } from './console/support/session.js';
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

describe("a seed's console sign-ins", () => {
  const signIns = [
    { approver: 'ada', username: 'ada@example.com', password: 'ada-demo' },
    { approver: 'grace', username: 'grace@example.com', password: 'grace-demo' },
  ];
  const seed = {
    organizations: [
      {
        name: 'Development',
        systems: [
          { name: 'With sign-ins', connectorTokens: ['dev-connector-with'], consoleSignIns: signIns },
          { name: 'Without', connectorTokens: ['dev-connector-without'] },
        ],
      },
    ],
  };

  /** The demo sign-ins the console's API answers for the system of `connectorToken`, signed in as the page is. */
  async function consoleSignInsOf(
    backend: Awaited<ReturnType<typeof startReferenceBackend>>,
    connectorToken: string,
  ): Promise<unknown> {
    const session = await signIn(backend, backend.adminToken);
    const systemId = backend.systemOfToken(connectorToken)!.id;
    const answer = await call(backend, 'GET', `/console/api/systems/${systemId}`, {
      headers: { cookie: session.cookie },
    });
    expect(answer.status).toBe(200);
    return answer.body.demoSignIns;
  }

  it('are answered by the console for their system, and again after a restart on the same data file', async () => {
    const dataFile = join(dir, 'sign-ins.db');
    for (const run of ['seeded', 'restarted']) {
      const backend = await startReferenceBackend({ seed, dataFile });
      try {
        expect(await consoleSignInsOf(backend, 'dev-connector-with'), run).toEqual(signIns);
        expect(await consoleSignInsOf(backend, 'dev-connector-without'), run).toEqual([]);
      } finally {
        await backend.close();
      }
    }
  });

  it('are read from a seed file, and are not stored with its data', async () => {
    const file = join(dir, 'sign-ins.json');
    writeFileSync(file, JSON.stringify(seed));
    const dataFile = join(dir, 'sign-ins-dropped.db');
    const seeded = await startReferenceBackend({ seed: file, dataFile });
    expect(await consoleSignInsOf(seeded, 'dev-connector-with')).toEqual(signIns);
    await seeded.close();
    const unseeded = await startReferenceBackend({ dataFile });
    try {
      expect(await consoleSignInsOf(unseeded, 'dev-connector-with')).toEqual([]);
    } finally {
      await unseeded.close();
    }
  });

  it('are taken from a seed loaded while running, through the admin API', async () => {
    const backend = await startReferenceBackend();
    try {
      const answer = await call(backend, 'POST', '/admin/seed', { token: backend.adminToken, body: seed });
      expect(answer.status).toBe(200);
      expect(await consoleSignInsOf(backend, 'dev-connector-with')).toEqual(signIns);
    } finally {
      await backend.close();
    }
  });

  it('are refused when malformed, with every problem named and nothing started', async () => {
    const seedWith = (consoleSignIns: unknown[]) =>
      ({ organizations: [{ name: 'A', systems: [{ name: 'S', consoleSignIns }] }] }) as never;
    const messageOf = (seed: never) =>
      startReferenceBackend({ seed }).then(
        () => expect.unreachable('the seed was accepted'),
        (error: unknown) => {
          expect(error).toBeInstanceOf(ValidationError);
          return (error as ValidationError).message;
        },
      );
    const shapes = await messageOf(
      seedWith([
        { approver: 'grace', username: 'grace@example.com' },
        { approver: 'alan', username: 'alan', password: 'x', label: 'Alan' },
        { approver: '', username: 'u', password: 'p' },
      ]),
    );
    expect(shapes).toMatch(/^Invalid seed: /);
    expect(shapes).toContain('organizations[0].systems[0].consoleSignIns[0].password');
    expect(shapes).toContain('organizations[0].systems[0].consoleSignIns[1]: Unrecognized key: "label"');
    expect(shapes).toContain('organizations[0].systems[0].consoleSignIns[2].approver');
    const twice = await messageOf(
      seedWith([
        { approver: 'ada', username: 'ada@example.com', password: 'one' },
        { approver: 'ada', username: 'ada@example.com', password: 'two' },
      ]),
    );
    expect(twice).toBe(
      'Invalid seed: organizations[0].systems[0].consoleSignIns[1].approver: approver ada has a sign-in already',
    );
  });
});
