import { classifyFailure } from 'approval-connector-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JiraArgumentError, JiraHttpError, JiraResponseError } from '../src/errors.js';
import { JiraClient } from '../src/jira-client.js';
import { fixtureText } from './fixtures.js';
import { BASE, MockJira, type Sent } from './mock-jira.js';

// The client's webhook calls against answers shaped as Atlassian documents them (fixtures/README.md): the admin
// webhooks an account with Jira administrator rights manages, and the dynamic webhooks only apps may manage.
const EMAIL = 'jira-sync@example.com';
const TOKEN = 'ATATT3xFfGF0-unit-test-token-value';
const ACCESS_TOKEN = 'eyJ-an-oauth-access-token';
const TARGET = 'https://connector.example.com/push';
const ADMIN = '/rest/webhooks/1.0/webhook';
const DYNAMIC = '/rest/api/3/webhook';

let site: MockJira;
let sent: Sent[];

beforeEach(() => {
  site = new MockJira();
  sent = site.sent;
});

afterEach(() => {
  site.done();
});

const asAccount = () => new JiraClient({ baseUrl: BASE, email: EMAIL, apiToken: TOKEN });
// As through Atlassian's gateway, https://api.atlassian.com/ex/jira/<cloud id>: a path after the host is kept.
const asApp = () => new JiraClient({ baseUrl: `${BASE}/ex/jira/6e8a3b2c`, accessToken: ACCESS_TOKEN });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

const webhook = {
  name: 'Approval Service connector: project = ITSM',
  url: TARGET,
  events: ['jira:issue_created', 'jira:issue_updated', 'jira:issue_deleted'],
  jql: 'project = ITSM',
  secret: 'a-shared-secret-0123',
};

describe('JiraClient: admin webhooks', () => {
  it('registers one with its name, URL, events, JQL filter and secret, and reads its id from self', async () => {
    site.answer('POST', ADMIN, 201, fixtureText('admin-webhook.json'));

    const created = await asAccount().registerAdminWebhook(webhook);

    expect(JSON.parse(sent[0]!.body!)).toEqual({
      name: webhook.name,
      url: TARGET,
      events: webhook.events,
      filters: { 'issue-related-events-section': 'project = ITSM' },
      excludeBody: false,
      secret: 'a-shared-secret-0123',
    });
    expect(sent[0]!.headers['content-type']).toBe('application/json');
    expect(created).toEqual({
      id: '5',
      name: 'my first webhook via rest',
      url: 'https://www.example.com/webhooks',
      events: ['jira:issue_created', 'jira:issue_updated'],
      jql: 'Project = JRA AND resolution = Fixed',
      enabled: true,
    });
  });

  it('lists, reads, updates and deletes them by id; a webhook gone is undefined, or false', async () => {
    const answer = JSON.parse(fixtureText('admin-webhook.json'));
    site.answer('GET', ADMIN, 200, [answer]);
    site.answer('GET', `${ADMIN}/5`, 200, answer);
    site.answer('GET', `${ADMIN}/6`, 404, { errorMessages: ['Not found'] });
    site.answer('PUT', `${ADMIN}/5`, 200, answer);
    site.answer('DELETE', `${ADMIN}/5`, 204, undefined);
    site.answer('DELETE', `${ADMIN}/6`, 404, { errorMessages: ['Not found'] });
    const jira = asAccount();

    expect((await jira.listAdminWebhooks()).map(({ id }) => id)).toEqual(['5']);
    expect((await jira.getAdminWebhook('5'))?.id).toBe('5');
    expect(await jira.getAdminWebhook('6')).toBeUndefined();
    expect((await jira.updateAdminWebhook('5', webhook)).id).toBe('5');
    expect(await jira.deleteAdminWebhook('5')).toBe(true);
    expect(await jira.deleteAdminWebhook('6')).toBe(false);
    expect(sent.map(({ method, path }) => `${method} ${path}`)).toEqual([
      `GET ${ADMIN}`,
      `GET ${ADMIN}/5`,
      `GET ${ADMIN}/6`,
      `PUT ${ADMIN}/5`,
      `DELETE ${ADMIN}/5`,
      `DELETE ${ADMIN}/6`,
    ]);
  });

  it("is refused to an account that is no administrator: a 403, the kit's authenticationError", async () => {
    site.answer('POST', ADMIN, 403, { errorMessages: ['You must be a Jira administrator.'], errors: {} });

    const error = await rejection(asAccount().registerAdminWebhook(webhook));

    expect(error).toBeInstanceOf(JiraHttpError);
    expect(classifyFailure(error).status).toBe('authenticationError');
  });

  it('refuses an answer whose self names no id', async () => {
    site.answer('POST', ADMIN, 201, { self: `${BASE}/rest/webhooks/1.0/webhook/`, url: TARGET, events: [] });

    expect(await rejection(asAccount().registerAdminWebhook(webhook))).toBeInstanceOf(JiraResponseError);
  });

  it('checks what it is given before anything is sent, and never repeats the secret', async () => {
    const jira = asAccount();
    const refusals = await Promise.all([
      rejection(jira.registerAdminWebhook({ ...webhook, name: ' ' })),
      rejection(jira.registerAdminWebhook({ ...webhook, url: 'ftp://connector.example.com' })),
      rejection(
        jira.registerAdminWebhook({ ...webhook, url: 'https://user:a-shared-secret-0123@x.example' }),
      ),
      rejection(jira.registerAdminWebhook({ ...webhook, events: [] })),
      rejection(jira.registerAdminWebhook({ ...webhook, jql: 'project = ITSM ORDER BY key' })),
      rejection(jira.registerAdminWebhook({ ...webhook, secret: '' })),
      rejection(jira.getAdminWebhook('../5')),
    ]);

    for (const error of refusals) expect(error).toBeInstanceOf(JiraArgumentError);
    expect(refusals.map((error) => (error as Error).message).join()).not.toContain('a-shared-secret-0123');
    expect(sent).toEqual([]);
  });
});

describe('JiraClient: dynamic webhooks, an OAuth 2.0 app', () => {
  it("signs in with the app's access token, keeping the gateway's path", async () => {
    site.answer(
      'GET',
      '/ex/jira/6e8a3b2c/rest/api/3/webhook',
      200,
      fixtureText('dynamic-webhooks-page.json'),
    );

    const listed = [];
    for await (const each of asApp().listDynamicWebhooks()) listed.push(each);

    expect(sent[0]!.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
    expect(Object.fromEntries(sent[0]!.query)).toEqual({ startAt: '0', maxResults: '100' });
    expect(listed.map(({ id }) => id)).toEqual([10000, 10001, 10002]);
    // The description types expirationDate as epoch milliseconds; its example writes a date-time: both are read.
    expect(listed[0]!.expiresAt).toEqual(new Date('2019-06-01T12:42:30.000Z'));
  });

  it('gives each webhook of a registration its id, or the errors Jira answered inside its 200', async () => {
    const app = new JiraClient({ baseUrl: BASE, accessToken: ACCESS_TOKEN });
    site.answer('POST', DYNAMIC, 200, fixtureText('registered-webhooks.json'));

    const results = await app.registerDynamicWebhooks(TARGET, [
      { events: ['jira:issue_updated'], jqlFilter: 'project = ITSM' },
      { events: ['jira:issue_updated'], jqlFilter: 'watchCount > 1' },
      { events: ['jira:issue_deleted'], jqlFilter: 'project = ITSM', fieldIdsFilter: ['summary'] },
    ]);

    expect(JSON.parse(sent[0]!.body!)).toEqual({
      url: TARGET,
      webhooks: [
        { events: ['jira:issue_updated'], jqlFilter: 'project = ITSM' },
        { events: ['jira:issue_updated'], jqlFilter: 'watchCount > 1' },
        { events: ['jira:issue_deleted'], jqlFilter: 'project = ITSM', fieldIdsFilter: ['summary'] },
      ],
    });
    expect(results).toEqual([
      { ok: true, id: 1000 },
      { ok: false, errors: ['The clause watchCount is unsupported'] },
      { ok: true, id: 1001 },
    ]);
  });

  it('refreshes them, answering when they now expire, and deletes them by id', async () => {
    const app = new JiraClient({ baseUrl: BASE, accessToken: ACCESS_TOKEN });
    site.answer('PUT', `${DYNAMIC}/refresh`, 200, fixtureText('webhooks-expiration.json'));
    site.answer('DELETE', DYNAMIC, 202, undefined);

    expect(await app.refreshDynamicWebhooks([1000, 1001])).toEqual(new Date('2019-06-01T12:42:30.000Z'));
    await app.deleteDynamicWebhooks([1000]);

    expect(sent.map(({ method, body }) => [method, JSON.parse(body!)])).toEqual([
      ['PUT', { webhookIds: [1000, 1001] }],
      ['DELETE', { webhookIds: [1000] }],
    ]);
  });

  it('is refused to an account signing in with an API token: 403', async () => {
    site.answer('POST', DYNAMIC, 403, {
      errorMessages: ['Only Connect and OAuth 2.0 apps can use this operation.'],
      errors: {},
    });

    const error = await rejection(
      asAccount().registerDynamicWebhooks(TARGET, [
        { events: ['jira:issue_updated'], jqlFilter: 'project = X' },
      ]),
    );

    expect(error).toMatchObject({ status: 403 });
    expect((error as Error).message).toContain('Only Connect and OAuth 2.0 apps');
  });

  it('checks what it is given before anything is sent', async () => {
    const app = new JiraClient({ baseUrl: BASE, accessToken: ACCESS_TOKEN });
    const refusals = await Promise.all([
      rejection(app.registerDynamicWebhooks(TARGET, [])),
      rejection(app.registerDynamicWebhooks(TARGET, [{ events: [], jqlFilter: 'project = X' }])),
      rejection(app.registerDynamicWebhooks(TARGET, [{ events: ['jira:issue_updated'], jqlFilter: '' }])),
      rejection(app.refreshDynamicWebhooks([])),
      rejection(app.deleteDynamicWebhooks([1.5])),
    ]);

    for (const error of refusals) expect(error).toBeInstanceOf(JiraArgumentError);
    expect(() => new JiraClient({ baseUrl: BASE, accessToken: 'two words' })).toThrow(JiraArgumentError);
    expect(sent).toEqual([]);
  });
});
