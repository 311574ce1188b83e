import { Agent, type Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceBackend, startReferenceBackend, type Tenant } from '../../src/backend/index.js';
import { ManagementClient } from '../../src/client/index.js';
import { syncUserMappings, type UserMappingEntry } from '../../src/worker/index.js';
import { ScriptedServer } from './support/scripted-server.js';

interface Sent {
  method: string;
  path: string;
  body: unknown;
}

let backend: ReferenceBackend;
let agent: Agent;
let sent: Sent[];
let recording: Dispatcher;
const clients: ManagementClient[] = [];

beforeAll(async () => {
  backend = await startReferenceBackend();
  agent = new Agent();
  // Records what the client sends, on its way to the real backend.
  recording = agent.compose((dispatch) => (options, handler) => {
    sent.push({
      method: options.method,
      path: options.path,
      body: typeof options.body === 'string' ? JSON.parse(options.body) : undefined,
    });
    return dispatch(options, handler);
  });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await agent.close();
  await backend.close();
});

/** A tenant with users of the given emails, and a client that records its requests. */
function setup(emails: string[]) {
  const tenant = backend.createTenant();
  const users = emails.map((email) =>
    backend.createUser(tenant.organization.id, { email, firstName: 'First', lastName: 'Last' }),
  );
  const client = new ManagementClient({
    baseUrl: backend.url,
    token: tenant.managementToken,
    dispatcher: recording,
  });
  clients.push(client);
  sent = [];
  return { tenant, users, client };
}

/** Users a@ and b@ of a new tenant, already mapped to `aId` and src-b, and nothing recorded as sent yet. */
async function mappedAB(aId: string) {
  const { tenant, users, client } = setup(['a@x.example', 'b@x.example']);
  await client.addUserMappings(tenant.system.id, [
    { userId: users[0]!.id, systemUserId: aId },
    { userId: users[1]!.id, systemUserId: 'src-b' },
  ]);
  sent = [];
  return { tenant, users, client };
}

async function storedMappings(client: ManagementClient, tenant: Tenant) {
  const mappings = await client.getSystemUserMappings(tenant.system.id);
  return Object.fromEntries(mappings.map((mapping) => [mapping.userId, mapping.systemUserId]));
}

function writes(): Sent[] {
  return sent.filter((request) => request.method === 'POST');
}

async function* stream(entries: UserMappingEntry[]): AsyncIterable<UserMappingEntry> {
  yield* entries;
}

describe('syncUserMappings', () => {
  it('maps source users to service users by email, without regard to case, with upsert', async () => {
    const { tenant, users, client } = setup(['ada@x.example', 'Grace.Hopper@x.example']);
    const report = await syncUserMappings(
      client,
      tenant.system.id,
      stream([
        { systemUserId: 'jira-ada', email: 'ADA@X.example' },
        { systemUserId: 'jira-grace', email: ' grace.hopper@x.example ' },
      ]),
    );

    expect(report).toEqual({
      mapped: 2,
      unchanged: 0,
      unknown: 0,
      unknownEmails: [],
      failed: 0,
      failures: [],
    });
    expect(await storedMappings(client, tenant)).toEqual({
      [users[0]!.id]: 'jira-ada',
      [users[1]!.id]: 'jira-grace',
    });
    expect(writes()).toEqual([
      {
        method: 'POST',
        path: `/v1/systems/${tenant.system.id}/usermappings/bulk`,
        body: [
          { userId: users[0]!.id, systemUserId: 'jira-ada', upsert: 1 },
          { userId: users[1]!.id, systemUserId: 'jira-grace', upsert: 1 },
        ],
      },
    ]);
  });

  it('sends nothing for mappings that already exist identically', async () => {
    const { tenant, client } = await mappedAB('src-a');

    const report = await syncUserMappings(client, tenant.system.id, [
      { systemUserId: 'src-a', email: 'A@x.example' },
      { systemUserId: 'src-b', email: 'b@x.example' },
    ]);

    expect(report).toMatchObject({ mapped: 0, unchanged: 2 });
    expect(writes()).toEqual([]);
    // One read of the mappings and one of the users, however many entries.
    expect(sent.map((request) => request.method)).toEqual(['GET', 'GET']);
  });

  it("replaces a user's changed id and sends only that one", async () => {
    const { tenant, users, client } = await mappedAB('old-a');

    const report = await syncUserMappings(client, tenant.system.id, [
      { systemUserId: 'new-a', email: 'a@x.example' },
      { systemUserId: 'src-b', email: 'b@x.example' },
    ]);

    expect(report).toMatchObject({ mapped: 1, unchanged: 1 });
    expect(writes().map((request) => request.body)).toEqual([
      [{ userId: users[0]!.id, systemUserId: 'new-a', upsert: 1 }],
    ]);
    expect(await storedMappings(client, tenant)).toEqual({
      [users[0]!.id]: 'new-a',
      [users[1]!.id]: 'src-b',
    });
  });

  it('reports unknown emails, listing at most maxListed of them', async () => {
    const { tenant, client } = setup(['known@x.example']);
    const report = await syncUserMappings(
      client,
      tenant.system.id,
      [
        { systemUserId: 'u1', email: 'nobody@x.example' },
        { systemUserId: 'u2', email: 'known@x.example' },
        { systemUserId: 'u3', email: 'ghost@x.example' },
        { systemUserId: 'u4', email: 'phantom@x.example' },
      ],
      { maxListed: 2 },
    );
    expect(report).toMatchObject({
      mapped: 1,
      unknown: 3,
      unknownEmails: ['nobody@x.example', 'ghost@x.example'],
    });
  });

  it('sends bounded batches, in the order of the source', async () => {
    const emails = Array.from({ length: 7 }, (_, i) => `user${i}@x.example`);
    const { tenant, users, client } = setup(emails);
    const report = await syncUserMappings(
      client,
      tenant.system.id,
      emails.map((email, i) => ({ systemUserId: `src-${i}`, email })),
      { batchSize: 3, pageSize: 2 },
    );

    expect(report).toMatchObject({ mapped: 7, failed: 0 });
    const batches = writes().map(
      (request) => request.body as Array<{ systemUserId: string; upsert: number }>,
    );
    expect(batches.map((batch) => batch.length)).toEqual([3, 3, 1]);
    expect(batches.flat().map((item) => item.systemUserId)).toEqual(emails.map((_, i) => `src-${i}`));
    expect(batches.flat().every((item) => item.upsert === 1)).toBe(true);
    // Users were read in pages of 2: 7 users take 4 pages.
    expect(sent.filter((request) => request.path.startsWith('/v1/users')).length).toBe(4);
    expect(Object.keys(await storedMappings(client, tenant)).sort()).toEqual(users.map((u) => u.id).sort());
  });

  it('isolates a refused mapping so the rest of its batch is still written', async () => {
    const emails = ['owner@x.example', ...Array.from({ length: 8 }, (_, i) => `user${i}@x.example`)];
    const { tenant, users, client } = setup(emails);
    // `taken` names the owner in this system; it cannot be given to another user.
    await client.addUserMappings(tenant.system.id, [{ userId: users[0]!.id, systemUserId: 'taken' }]);
    sent = [];

    const entries = emails
      .slice(1)
      .map((email, i) => ({ systemUserId: i === 5 ? 'taken' : `src-${i}`, email }));
    const report = await syncUserMappings(client, tenant.system.id, entries, { batchSize: 8 });

    expect(report).toMatchObject({ mapped: 7, failed: 1 });
    expect(report.failures).toEqual([
      { systemUserId: 'taken', email: 'user5@x.example', code: 'conflict', message: expect.any(String) },
    ]);
    // 8 refused; its first half written, its second refused; of that, [4, 5] refused, then 4 and 5 alone, then [6, 7].
    expect(writes().map((request) => (request.body as unknown[]).length)).toEqual([8, 4, 4, 2, 1, 1, 2]);
    const stored = await storedMappings(client, tenant);
    expect(stored[users[0]!.id]).toBe('taken');
    expect(stored[users[6]!.id]).toBeUndefined();
    expect(Object.keys(stored)).toHaveLength(8);
  });

  it('reports invalid entries and a second id for the same user, and counts a repeat as unchanged', async () => {
    const { tenant, users, client } = setup(['a@x.example']);
    const report = await syncUserMappings(client, tenant.system.id, [
      { systemUserId: 'first', email: 'a@x.example' },
      { systemUserId: 'first', email: 'A@x.example' },
      { systemUserId: 'second', email: 'a@x.example' },
      { systemUserId: '', email: 'a@x.example' },
    ]);

    expect(report).toMatchObject({ mapped: 1, unchanged: 1, failed: 2 });
    expect(report.failures.map((failure) => failure.code)).toEqual(['duplicate_user', 'invalid_entry']);
    expect(await storedMappings(client, tenant)).toEqual({ [users[0]!.id]: 'first' });
  });

  it('stops on an aborted signal with its reason, sending nothing more', async () => {
    const { tenant, client } = setup(['a@x.example', 'b@x.example']);
    const controller = new AbortController();
    async function* entries(): AsyncIterable<UserMappingEntry> {
      yield { systemUserId: 'src-a', email: 'a@x.example' };
      controller.abort(new Error('shutting down'));
      yield { systemUserId: 'src-b', email: 'b@x.example' };
    }

    await expect(
      syncUserMappings(client, tenant.system.id, entries(), { signal: controller.signal }),
    ).rejects.toThrow('shutting down');
    expect(writes()).toEqual([]);

    const aborted = AbortSignal.abort(new Error('already'));
    sent = [];
    await expect(syncUserMappings(client, tenant.system.id, [], { signal: aborted })).rejects.toThrow(
      'already',
    );
    expect(sent).toEqual([]);
  });

  it('refuses invalid options before sending anything, naming each', async () => {
    const { tenant, client } = setup([]);
    await expect(
      syncUserMappings(client, tenant.system.id, [], { batchSize: 0, pageSize: 5000 }),
    ).rejects.toMatchObject({
      code: 'validation',
      issues: [
        expect.objectContaining({ path: ['batchSize'] }),
        expect.objectContaining({ path: ['pageSize'] }),
      ],
    });
    expect(sent).toEqual([]);
  });

  it('rejects when the service refuses the credential, before writing anything', async () => {
    const { tenant } = setup(['a@x.example']);
    const client = new ManagementClient({
      baseUrl: backend.url,
      token: 'not-a-token',
      dispatcher: recording,
    });
    clients.push(client);
    await expect(
      syncUserMappings(client, tenant.system.id, [{ systemUserId: 'src-a', email: 'a@x.example' }]),
    ).rejects.toMatchObject({ code: 'unauthorized' });
    expect(writes()).toEqual([]);
  });

  it('reports an email that several service users share, without regard to case', async () => {
    // The reference backend keeps emails unique; a service that does not is scripted here.
    const server = await ScriptedServer.start();
    try {
      const orgId = '11111111-1111-4111-8111-111111111111';
      const user = (id: string, email: string) => ({ id, email, firastName: 'F', lastName: 'L', orgId });
      server.otherwise((request) =>
        request.url.startsWith('/v1/users')
          ? {
              json: [
                user('22222222-2222-4222-8222-222222222222', 'Ada@x.example'),
                user('33333333-3333-4333-8333-333333333333', 'ada@x.example'),
              ],
            }
          : { json: [] },
      );
      const client = new ManagementClient({ baseUrl: server.url, token: 'token' });
      clients.push(client);
      const report = await syncUserMappings(client, '44444444-4444-4444-8444-444444444444', [
        { systemUserId: 'src-ada', email: 'ADA@x.example' },
      ]);
      expect(report).toMatchObject({
        mapped: 0,
        failed: 1,
        failures: [expect.objectContaining({ code: 'ambiguous_email' })],
      });
      expect(server.requests.map((request) => request.method)).toEqual(['GET', 'GET']);
    } finally {
      await server.close();
    }
  });
});
