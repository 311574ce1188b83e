import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IntegrationClient, ManagementClient } from '../../src/client/index.js';
import { type Reply, ScriptedServer } from './support/scripted-server.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const USER = '22222222-2222-4222-8222-222222222222';
const SYSTEM = '33333333-3333-4333-8333-333333333333';
const TASK = '44444444-4444-4444-8444-444444444444';
const STATE = '55555555-5555-4555-8555-555555555555';
const TEMPLATE = '66666666-6666-4666-8666-666666666666';
const TOKEN = 'tok-management-secret';
const AT = '2026-05-01T10:00:00.000Z';

const user = { id: USER, email: 'ada@example.com', firastName: 'Ada', lastName: 'Lovelace', orgId: ORG };
const mapping = { systemUserId: 'jira-ada', systemId: SYSTEM, userId: USER };
const approval = {
  id: 'PO-1',
  schemaId: 'po',
  approver: 'ada',
  resolved: false,
  lastModified: AT,
  data: { n: 1 },
};
const task = { id: TASK, type: 'approve', data: { approval, approveComments: 'ok' } };

interface Case {
  name: string;
  run: (clients: { management: ManagementClient; integration: IntegrationClient }) => Promise<unknown>;
  reply: Reply;
  method: string;
  url: string;
  body?: unknown;
  result: unknown;
}

const cases: Case[] = [
  {
    name: '1 Get users',
    run: ({ management }) =>
      management.getUsers({
        page: 2,
        limit: 5,
        search: 'ad a',
        searchableFields: 'firstName,email',
        filter: 'Lovelace',
        filterFields: 'lastName',
      }),
    reply: { json: [user] },
    method: 'GET',
    url: '/v1/users?page=2&limit=5&search=ad+a&searchableFields=firstName%2Cemail&filter=Lovelace&filterFields=lastName',
    result: [user],
  },
  {
    name: '2 Add users',
    run: ({ management }) =>
      management.addUsers(ORG, [{ email: 'ada@example.com', firstName: 'Ada', lastName: 'L' }]),
    reply: { json: [{ email: 'ada@example.com', status: 'success', id: USER }] },
    method: 'POST',
    url: `/v1/orgs/${ORG}/users/bulk`,
    body: [{ email: 'ada@example.com', firstName: 'Ada', lastName: 'L' }],
    result: [{ email: 'ada@example.com', status: 'success', id: USER }],
  },
  {
    name: '3 Delete users',
    run: ({ management }) => management.deleteUsers([USER]),
    reply: { json: { deleted: 1 } },
    method: 'DELETE',
    url: '/v1/users',
    body: [USER],
    result: undefined,
  },
  {
    name: '4 Get user mappings of a user',
    run: ({ management }) => management.getUserMappings(USER),
    reply: { json: [mapping] },
    method: 'GET',
    url: `/v1/users/${USER}/usermappings`,
    result: [mapping],
  },
  {
    name: '5 Get user mappings of a system',
    run: ({ management }) => management.getSystemUserMappings(SYSTEM, { page: 1 }),
    reply: { json: [mapping] },
    method: 'GET',
    url: `/v1/systems/${SYSTEM}/usermappings?page=1`,
    result: [mapping],
  },
  {
    name: '6 Add user mappings',
    run: ({ management }) =>
      management.addUserMappings(SYSTEM, [{ userId: USER, systemUserId: 'jira-ada', upsert: 1 }]),
    reply: { json: [mapping] },
    method: 'POST',
    url: `/v1/systems/${SYSTEM}/usermappings/bulk`,
    body: [{ userId: USER, systemUserId: 'jira-ada', upsert: 1 }],
    result: undefined,
  },
  {
    name: '7 Get systems',
    run: ({ management }) => management.getSystems(),
    reply: { json: [{ id: SYSTEM, name: 'Jira', orgId: ORG }] },
    method: 'GET',
    url: '/v1/systems',
    result: [{ id: SYSTEM, name: 'Jira', orgId: ORG }],
  },
  {
    name: '8 Get approval',
    run: ({ integration }) => integration.getApproval('PO 1/2'),
    reply: { json: { status: 'success', data: { approval } } },
    method: 'GET',
    url: '/v2/rawapprovals/PO%201%2F2',
    result: approval,
  },
  {
    name: '9 Update approval',
    run: ({ integration }) => integration.putApproval('PO-1', { resolved: true, lastModified: new Date(AT) }),
    reply: { json: { status: 'success' } },
    method: 'PUT',
    url: '/v2/rawapprovals/PO-1',
    body: { approval: { resolved: true, lastModified: AT } },
    result: undefined,
  },
  {
    name: '10 Get approvals',
    run: ({ integration }) =>
      integration.getApprovals({ modifiedAfter: AT, resolved: false, view: 'shallow' }),
    reply: { json: { status: 'success', data: { approvals: [approval] } } },
    method: 'GET',
    url: '/v2/rawapprovals?lastModified%5Bgt%5D=2026-05-01T10%3A00%3A00.000Z&resolved=false&view=shallow',
    result: [approval],
  },
  {
    name: '11 Update approvals',
    run: ({ integration }) => integration.putApprovals([approval]),
    reply: { json: { status: 'success' } },
    method: 'PUT',
    url: '/v2/rawapprovals',
    body: { approvals: [approval] },
    result: undefined,
  },
  {
    name: '12 Update connector',
    run: ({ integration }) =>
      integration.registerConnector({
        taskTypes: ['approve', 'reject'],
        authRequired: true,
        publicKey: 'pk',
        publicKeyExpiredAt: AT,
      }),
    reply: { json: { status: 'success' } },
    method: 'PATCH',
    url: '/v2/connector',
    body: { taskTypes: ['approve', 'reject'], authRequired: true, publicKey: 'pk', publicKeyExpiredAt: AT },
    result: undefined,
  },
  {
    name: '13 Get task',
    run: ({ integration }) => integration.getTask(),
    reply: { json: { status: 'success', data: { task } } },
    method: 'GET',
    url: '/v2/connector/tasks',
    result: task,
  },
  {
    name: '14 Update task result',
    run: ({ integration }) =>
      integration.reportTaskResult(TASK, { status: 'systemError', meta: { code: 'E1' } }),
    reply: { json: { status: 'success' } },
    method: 'PATCH',
    url: `/v2/connector/tasks/${TASK}`,
    body: { taskResult: { status: 'systemError', meta: { code: 'E1' } } },
    result: undefined,
  },
  {
    name: '15 Get connector state',
    run: ({ integration }) => integration.getState(),
    reply: {
      json: {
        status: 'success',
        data: { state: { id: STATE, createdAt: AT, updatedAt: AT, state: { c: 1 } } },
      },
    },
    method: 'GET',
    url: '/v2/connector/state',
    result: { id: STATE, createdAt: AT, updatedAt: AT, state: { c: 1 } },
  },
  {
    name: '16 Update connector state',
    run: ({ integration }) => integration.putState({ cursor: AT }),
    reply: { json: { status: 'success' } },
    method: 'PUT',
    url: '/v2/connector/state',
    body: { state: { cursor: AT } },
    result: undefined,
  },
  {
    name: '17 Get UI templates',
    run: ({ integration }) => integration.getUiTemplates(),
    reply: {
      json: {
        status: 'success',
        data: { uiTemplates: [{ id: TEMPLATE, type: 'card', uiTemplate: { po: { a: 1 } } }] },
      },
    },
    method: 'GET',
    url: '/v2/connector/ui-templates',
    result: [{ id: TEMPLATE, type: 'card', uiTemplate: { po: { a: 1 } } }],
  },
  {
    name: '18 Add or update UI templates (GET with a body, as published)',
    run: ({ integration }) =>
      integration.putUiTemplates([{ type: 'card', schemaId: 'po', template: { a: 1 } }]),
    reply: { json: { status: 'success' } },
    method: 'GET',
    url: '/v2/connector/uitemplates',
    body: { uiTemplates: [{ type: 'card', schemaId: 'po', template: { a: 1 } }] },
    result: undefined,
  },
];

describe('the wire format of each endpoint', () => {
  let server: ScriptedServer;
  let management: ManagementClient;
  let integration: IntegrationClient;

  beforeAll(async () => {
    server = await ScriptedServer.start();
    management = new ManagementClient({ baseUrl: server.url, token: TOKEN });
    integration = new IntegrationClient({ baseUrl: server.url, token: 'tok-connector-secret' });
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  afterAll(async () => {
    await Promise.all([management.close(), integration.close()]);
    await server.close();
  });

  it('covers all 18 endpoints', () => {
    expect(cases.map((c) => Number.parseInt(c.name, 10))).toEqual(
      Array.from({ length: 18 }, (_, i) => i + 1),
    );
  });

  it.each(cases)('$name', async ({ run, reply, method, url, body, result }) => {
    server.reply(reply);
    await expect(run({ management, integration })).resolves.toEqual(result);
    const sent = server.only();
    expect(sent.method).toBe(method);
    expect(sent.url).toBe(url);
    expect(sent.headers.accept).toBe('application/json');
    expect(sent.headers.authorization).toMatch(/^Bearer tok-(management|connector)-secret$/);
    if (body === undefined) {
      expect(sent.body).toBe('');
      expect(sent.headers['content-type']).toBeUndefined();
    } else {
      expect(sent.headers['content-type']).toBe('application/json');
      expect(JSON.parse(sent.body)).toEqual(body);
    }
  });

  it('sends the management token to v1 and the connector token to v2', async () => {
    await management.getSystems().catch(() => undefined);
    server.reply({ json: { status: 'success', data: { task: null } } });
    await integration.getTask();
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${TOKEN}`,
      'Bearer tok-connector-secret',
    ]);
  });
});

describe('authentication options', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await ScriptedServer.start();
    server.otherwise({ json: [] });
  });
  afterAll(() => server.close());

  it('sends the credential in a configured header, with or without a scheme, from a function if given', async () => {
    const custom = new ManagementClient({
      baseUrl: server.url,
      token: () => 'rotating',
      auth: { header: 'X-Api-Key', scheme: null },
    });
    const token = new ManagementClient({ baseUrl: server.url, token: 'abc', auth: { scheme: 'Token' } });
    await custom.getSystems();
    await token.getSystems();
    expect(server.requests[0]?.headers['x-api-key']).toBe('rotating');
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(server.requests[1]?.headers.authorization).toBe('Token abc');
    await Promise.all([custom.close(), token.close()]);
  });

  it('keeps a base URL path prefix', async () => {
    const client = new ManagementClient({ baseUrl: `${server.url}/api/approvals`, token: 't' });
    server.requests.length = 0;
    await client.getSystems();
    expect(server.only().url).toBe('/api/approvals/v1/systems');
    await client.close();
  });
});
