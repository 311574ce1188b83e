import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationClient, ManagementClient, PartialAddUsersError } from '../../src/client/index.js';
import { CLIENT_BODY_BUDGET_BYTES } from '../../src/client/management-client.js';
import { splitByBytes } from '../../src/client/split.js';
import { ValidationError } from '../../src/index.js';
import { ScriptedServer } from './support/scripted-server.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const SYSTEM = '33333333-3333-4333-8333-333333333333';

let server: ScriptedServer;
let management: ManagementClient;
let integration: IntegrationClient;

beforeAll(async () => {
  server = await ScriptedServer.start();
  management = new ManagementClient({ baseUrl: server.url, token: 't' });
  integration = new IntegrationClient({ baseUrl: server.url, token: 't' });
});
afterEach(() => {
  server.requests.length = 0;
  server.otherwise({ status: 200, json: { status: 'success' } });
});
afterAll(async () => {
  await Promise.all([management.close(), integration.close()]);
  await server.close();
});

function uuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
}

/** 3000 users to add, more than one request under the body limit carries (each last name is 20 bytes of UTF-8). */
function longUserList() {
  return Array.from({ length: 3000 }, (_, n) => ({
    email: `user-${n}@example.com`,
    firstName: `First ${n}`,
    lastName: 'Ł'.repeat(10),
  }));
}

describe('splitByBytes', () => {
  it('keeps every item, in order, in chunks whose JSON fits the limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40 }), { maxLength: 200 }),
        fc.integer({ min: 44, max: 600 }),
        (items, limit) => {
          const chunks = splitByBytes(items, limit, 'test');
          expect(chunks.flat()).toEqual(items);
          for (const chunk of chunks) {
            expect(chunk.length).toBeGreaterThan(0);
            expect(Buffer.byteLength(JSON.stringify(chunk))).toBeLessThanOrEqual(limit);
          }
        },
      ),
    );
  });

  it('measures bytes, not characters', () => {
    const chunks = splitByBytes(['ééé', 'ééé'], 2 + 8 + 1 + 8 - 1, 'test');
    expect(chunks).toEqual([['ééé'], ['ééé']]);
  });
});

describe('the 100K body limit', () => {
  it('sends a long Add users list as several requests under the limit, results in input order', async () => {
    const users = longUserList();
    let next = 0;
    // Answer each request with one result per user it carried, ids counting up across requests.
    server.otherwise((request) => ({
      json: (JSON.parse(request.body) as unknown[]).map(() => ({ status: 'success', id: uuid(next++) })),
    }));
    const results = await management.addUsers(ORG, users);

    expect(server.requests.length).toBeGreaterThan(1);
    for (const request of server.requests) {
      expect(Buffer.byteLength(request.body)).toBeLessThanOrEqual(CLIENT_BODY_BUDGET_BYTES);
    }
    const sent = server.requests.flatMap((request) => JSON.parse(request.body) as { email: string }[]);
    expect(sent).toEqual(users);
    expect(results).toHaveLength(3000);
    expect(results.map((result) => result.email)).toEqual(users.map((user) => user.email));
    expect(results.map((result) => result.id)).toEqual(users.map((_, n) => uuid(n)));
  });

  it('says which users were added, which are uncertain and which were not sent when a later request fails', async () => {
    const users = longUserList();
    let answered = 0;
    server.otherwise((request) =>
      answered++ === 0
        ? {
            json: (JSON.parse(request.body) as unknown[]).map((_, n) => ({ status: 'success', id: uuid(n) })),
          }
        : { status: 500, json: { Error: 'Internal Server Error. boom' } },
    );
    const error = await management.addUsers(ORG, users).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PartialAddUsersError);
    const partial = error as PartialAddUsersError;
    const [first, second] = server.requests.map((request) => (JSON.parse(request.body) as unknown[]).length);
    expect(server.requests).toHaveLength(2);
    expect(partial.code).toBe('partial_add_users');
    expect(partial.cause).toMatchObject({ code: 'server' });
    expect(partial.results.map((result) => result.email)).toEqual(
      users.slice(0, first).map((user) => user.email),
    );
    expect(partial.uncertain).toEqual(users.slice(first, (first ?? 0) + (second ?? 0)));
    expect(partial.notSent).toEqual(users.slice((first ?? 0) + (second ?? 0)));
  });

  it('sends a long Delete users list as several requests under the limit', async () => {
    const ids = Array.from({ length: 5000 }, (_, n) => uuid(n));
    await management.deleteUsers(ids);
    expect(server.requests.length).toBeGreaterThan(1);
    for (const request of server.requests)
      expect(Buffer.byteLength(request.body)).toBeLessThanOrEqual(100_000);
    expect(server.requests.flatMap((request) => JSON.parse(request.body) as string[])).toEqual(ids);
  });

  it('refuses a single user too large for any request, naming it, and sends nothing', async () => {
    const users = [
      { email: 'ok@example.com', firstName: 'A', lastName: 'B' },
      { email: 'big@example.com', firstName: 'x'.repeat(120_000), lastName: 'B' },
    ];
    const error = await management.addUsers(ORG, users).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]?.path).toEqual([1]);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses an invalid user anywhere in a long list before sending any request', async () => {
    const users = Array.from({ length: 3000 }, (_, n) => ({
      email: `u${n}@example.com`,
      firstName: 'A',
      lastName: 'B',
    }));
    (users[2999] as { lastName: unknown }).lastName = 7;
    await expect(management.addUsers(ORG, users)).rejects.toMatchObject({
      code: 'validation',
      issues: [{ path: [2999, 'lastName'] }],
    });
    expect(server.requests).toHaveLength(0);
  });
});

describe('paging iterators', () => {
  const user = (n: number) => ({
    id: uuid(n),
    email: `u${n}@x.io`,
    firastName: 'A',
    lastName: 'B',
    orgId: ORG,
  });

  it('walk Get users page by page until a short page', async () => {
    server.reply({ json: [user(1), user(2)] }, { json: [user(3), user(4)] }, { json: [user(5)] });
    const seen = [];
    for await (const found of management.iterateUsers(
      { filter: 'B', filterFields: 'lastName' },
      { pageSize: 2 },
    )) {
      seen.push(found.id);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5].map(uuid));
    expect(server.requests.map((request) => request.url)).toEqual([
      '/v1/users?page=1&limit=2&filter=B&filterFields=lastName',
      '/v1/users?page=2&limit=2&filter=B&filterFields=lastName',
      '/v1/users?page=3&limit=2&filter=B&filterFields=lastName',
    ]);
  });

  it('walk a system’s mappings and stop on an empty page', async () => {
    const mapping = (n: number) => ({ systemUserId: `s${n}`, systemId: SYSTEM, userId: uuid(n) });
    server.reply({ json: [mapping(1), mapping(2)] }, { json: [] });
    const seen = [];
    for await (const found of management.iterateSystemUserMappings(SYSTEM, { pageSize: 2 }))
      seen.push(found.systemUserId);
    expect(seen).toEqual(['s1', 's2']);
    expect(server.requests.map((request) => request.url)).toEqual([
      `/v1/systems/${SYSTEM}/usermappings?page=1&limit=2`,
      `/v1/systems/${SYSTEM}/usermappings?page=2&limit=2`,
    ]);
  });

  it('walk approvals forward by lastModified[gt], whatever order each page comes in', async () => {
    const approval = (n: number) => ({
      id: `A-${n}`,
      schemaId: 's',
      approver: 'a',
      resolved: false,
      lastModified: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
    });
    const first = Array.from({ length: 50 }, (_, n) => approval(n + 1)).reverse();
    server.reply(
      { json: { status: 'success', data: { approvals: first } } },
      {
        json: { status: 'success', data: { approvals: [approval(51)] } },
      },
    );
    const seen = [];
    for await (const found of integration.iterateApprovals({ resolved: false })) seen.push(found.id);
    expect(seen).toEqual(Array.from({ length: 51 }, (_, n) => `A-${n + 1}`));
    const queries = server.requests.map((request) => new URL(request.url, 'http://x').searchParams);
    expect(queries[0]?.get('lastModified[gt]')).toBe('1970-01-01T00:00:00.000Z');
    expect(queries[1]?.get('lastModified[gt]')).toBe(approval(50).lastModified);
    expect(queries[1]?.get('resolved')).toBe('false');
  });

  it('stop with an error instead of looping when a full page does not advance', async () => {
    const stuck = Array.from({ length: 50 }, (_, n) => ({
      id: `A-${n}`,
      schemaId: 's',
      approver: 'a',
      resolved: false,
      lastModified: '1970-01-01T00:00:00.000Z',
    }));
    server.reply({ json: { status: 'success', data: { approvals: stuck } } });
    const iterate = async () => {
      for await (const _ of integration.iterateApprovals()) {
        // drain
      }
    };
    await expect(iterate()).rejects.toMatchObject({ code: 'paging_stalled' });
  });
});
