import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sealCredentials, toBase64 } from '../../../src/api/index.js';
import { PageAssets } from '../../../src/backend/console/assets.js';
import { MAX_COMMENT_CHARS } from '../../../src/backend/console/limits.js';
import { HISTORY_APPROVALS, HISTORY_PER_APPROVAL } from '../../../src/backend/console/live.js';
import type { ReferenceBackend, Tenant } from '../../../src/backend/index.js';
import { call, createUsers, type ManualClock, mapUsers, registerTenant, start } from '../helpers.js';
import { type ConsoleSession, consoleCall, loginToken, signIn } from './support/session.js';

let backend: ReferenceBackend;
let clock: ManualClock;
let session: ConsoleSession;

beforeAll(async () => {
  ({ backend, clock } = await start());
  session = await signIn(backend, loginToken(backend.createConsoleLink()));
});
afterAll(() => backend.close());
afterEach(() => {
  vi.useRealTimers();
  backend.faults.clear();
});

/** A tenant whose connector has registered and pushed two purchase orders (one resolved) and a leave request. */
function tenantWithApprovals(registration: Record<string, unknown> = {}): Promise<Tenant> {
  return registerTenant(
    backend,
    [
      {
        id: 'PO-1',
        schemaId: 'po',
        approver: 'ada',
        lastModified: '2026-05-01T10:00:00Z',
        data: { title: 'Desks' },
      },
      { id: 'PO-2', schemaId: 'po', approver: 'grace', resolved: true, lastModified: '2026-05-01T11:00:00Z' },
      {
        id: 'LV-1',
        schemaId: 'leave',
        approver: 'ada',
        lastModified: '2026-05-01T12:00:00Z',
        data: { who: 'Alan' },
      },
    ],
    registration,
  );
}

describe('the page', () => {
  it('is served at /console with a policy that lets it load nothing from elsewhere', async () => {
    for (const path of ['/console', '/console/']) {
      const page = await call(backend, 'GET', path);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      // Every address the page names is its own.
      expect([...String(page.body).matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1])).toEqual([
        'data:,',
        '/console/app.css',
        '/console/app.js',
      ]);
    }
    const script = await call(backend, 'GET', '/console/app.js');
    expect(script).toMatchObject({
      status: 200,
      headers: { 'content-type': 'text/javascript; charset=utf-8' },
    });
    expect(String(script.body)).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    const style = await call(backend, 'GET', '/console/app.css');
    expect(style).toMatchObject({ status: 200, headers: { 'content-type': 'text/css; charset=utf-8' } });
    expect(String(style.body)).not.toMatch(/url\(|@import|@font-face/);
  });

  it('says how to build it when it has not been built', () => {
    const assets = new PageAssets(join(tmpdir(), 'no-console-page-here'));
    expect(() => assets.send(undefined as never, 'app.js')).toThrow(
      expect.objectContaining({ status: 503, message: expect.stringContaining('npm run build') }),
    );
  });
});

describe('signing in', () => {
  it('exchanges a login link for an HttpOnly, SameSite=Strict cookie, once', async () => {
    const token = loginToken(backend.createConsoleLink());
    const first = await call(backend, 'POST', '/console/api/session', { body: { token } });
    expect(first.status).toBe(200);
    expect(first.headers['set-cookie']).toMatch(
      /^console-session-\d+=[\w-]{43}; Path=\/console; HttpOnly; SameSite=Strict$/,
    );
    expect(first.body).toEqual({ csrfToken: expect.stringMatching(/^[\w-]{43}$/) });
    const again = await call(backend, 'POST', '/console/api/session', { body: { token } });
    expect(again).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized', message: expect.stringContaining('used already') } },
    });
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it('says that a link this backend never issued was never valid', async () => {
    const never = await call(backend, 'POST', '/console/api/session', {
      body: { token: 'a-token-this-backend-never-issued' },
    });
    expect(never).toMatchObject({
      status: 401,
      body: { error: { message: expect.stringContaining('neither a login link of this backend') } },
    });
  });

  it('refuses a link nobody opened within an hour, by the monotonic clock', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const token = loginToken(backend.createConsoleLink());
    vi.advanceTimersByTime(60 * 60 * 1000);
    expect(await call(backend, 'POST', '/console/api/session', { body: { token } })).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized', message: expect.stringContaining('expired') } },
    });
  });

  it('takes the admin token too, and nothing else', async () => {
    await expect(signIn(backend, backend.adminToken)).resolves.toMatchObject({ cookie: expect.any(String) });
    const tenant = backend.createTenant();
    for (const token of [tenant.connectorToken, tenant.managementToken, `${backend.adminToken}x`]) {
      expect((await call(backend, 'POST', '/console/api/session', { body: { token } })).status).toBe(401);
    }
  });

  it('gives a new link for the admin token, and none without it', async () => {
    const answer = await call(backend, 'POST', '/console/links', { token: backend.adminToken });
    expect(answer.body.url).toMatch(new RegExp(`^${backend.url}/console/#login=[\\w-]{43}$`));
    await expect(signIn(backend, loginToken(answer.body.url))).resolves.toBeDefined();
    expect(await call(backend, 'POST', '/console/links')).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized' } },
    });
  });

  it('never puts the login token where a request line or a log would carry it', () => {
    const link = backend.createConsoleLink();
    // A fragment is not sent to the server, nor in a Referer.
    expect(new URL(link).pathname).toBe('/console/');
    expect(new URL(link).search).toBe('');
  });

  it('refuses a sign-in sent by a page of another origin', async () => {
    const token = loginToken(backend.createConsoleLink());
    const answer = await call(backend, 'POST', '/console/api/session', {
      body: { token },
      headers: { origin: 'http://evil.example' },
    });
    expect(answer).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    // The token was not spent by the refused request.
    await expect(signIn(backend, token)).resolves.toBeDefined();
  });

  it('ends the session on sign-out', async () => {
    const own = await signIn(backend, backend.adminToken);
    expect((await consoleCall(backend, own, 'DELETE', '/session')).status).toBe(200);
    expect((await consoleCall(backend, own, 'GET', '/organizations')).status).toBe(401);
  });
});

describe('a request without the session cookie', () => {
  it.each([
    ['GET', '/console/api/session'],
    ['DELETE', '/console/api/session'],
    ['GET', '/console/api/organizations'],
    ['GET', '/console/api/systems/x'],
    ['GET', '/console/api/systems/x/approvals'],
    ['GET', '/console/api/systems/x/tasks'],
    ['POST', '/console/api/systems/x/tasks'],
    ['GET', '/console/api/faults'],
    ['POST', '/console/api/faults'],
    ['DELETE', '/console/api/faults'],
    ['DELETE', '/console/api/faults/1'],
    ['POST', '/console/api/leases/expire'],
    ['GET', '/console/api/events'],
  ] as const)('is refused: %s %s', async (method, path) => {
    const variants: Record<string, string>[] = [
      {},
      { cookie: `console-session-${new URL(backend.url).port}=forged` },
      { authorization: `Bearer ${backend.adminToken}` },
    ];
    for (const headers of variants) {
      const answer = await call(backend, method, path, { headers, body: method === 'POST' ? {} : undefined });
      expect(answer).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    }
  });
});

describe('the CSRF defence', () => {
  const rule = { path: '/v2/*', fault: { type: 'status', status: 503 } };

  it('refuses a change without the session’s CSRF token, and changes nothing', async () => {
    for (const headers of [{ 'x-console-csrf': '' }, { 'x-console-csrf': 'wrong' }]) {
      const answer = await call(backend, 'POST', '/console/api/faults', {
        body: rule,
        headers: { cookie: session.cookie, ...headers },
      });
      expect(answer).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    }
    const bare = await call(backend, 'POST', '/console/api/faults', {
      body: rule,
      headers: { cookie: session.cookie },
    });
    expect(bare.status).toBe(403);
    expect(backend.faults.list()).toEqual([]);
  });

  it('refuses a change from another origin even with the token', async () => {
    const answer = await consoleCall(backend, session, 'POST', '/faults', {
      body: rule,
      headers: { origin: 'http://127.0.0.1:1' },
    });
    expect(answer).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(backend.faults.list()).toEqual([]);
  });

  it('lets the console’s own change through', async () => {
    const answer = await consoleCall(backend, session, 'POST', '/faults', {
      body: rule,
      headers: { origin: backend.url },
    });
    expect(answer).toMatchObject({ status: 200, body: { id: expect.any(Number) } });
    expect(backend.faults.list()).toHaveLength(1);
  });
});

describe('what the pages read', () => {
  it('lists organizations with their systems, users and user mappings', async () => {
    const tenant = backend.createTenant({ organizationName: 'Initech' });
    const [user] = createUsers(backend, tenant, [['peter@initech.example', 'Peter', 'Gibbons']]);
    await mapUsers(backend, tenant, [{ userId: user.id, systemUserId: 'pg' }]);
    const answer = await consoleCall(backend, session, 'GET', '/organizations');
    expect(answer.body.find((org: { id: string }) => org.id === tenant.organization.id)).toEqual({
      ...tenant.organization,
      users: [user],
      systems: [
        { ...tenant.system, mappings: [{ systemId: tenant.system.id, userId: user.id, systemUserId: 'pg' }] },
      ],
    });
  });

  it('lists a system’s approvals newest first, filtered and searched, with their writes', async () => {
    const tenant = await tenantWithApprovals();
    const list = async (query: string) =>
      (await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}/approvals${query}`)).body;
    expect((await list('')).approvals.map((approval: { id: string }) => approval.id)).toEqual([
      'LV-1',
      'PO-2',
      'PO-1',
    ]);
    expect(await list('?resolved=true')).toMatchObject({ total: 1, approvals: [{ id: 'PO-2' }] });
    expect(await list('?resolved=false&search=desk')).toMatchObject({
      total: 1,
      approvals: [{ id: 'PO-1' }],
    });
    expect(await list('?search=GRACE')).toMatchObject({ total: 1, approvals: [{ id: 'PO-2' }] });
    expect(await list('?limit=1')).toMatchObject({ total: 3, approvals: [{ id: 'LV-1' }] });

    const put = (lastModified: string) =>
      call(backend, 'PUT', '/v2/rawapprovals/PO-1', {
        token: tenant.connectorToken,
        body: { approval: { lastModified } },
      });
    const before = new Date(clock.now()).toISOString();
    await put('2026-05-01T09:00:00Z');
    clock.advance(1000);
    await put('2026-05-02T09:00:00Z');
    const [po1] = (await list('?search=PO-1')).approvals;
    expect(po1.history).toEqual([
      { lastModified: '2026-05-01T10:00:00.000Z', applied: true, at: before },
      { lastModified: '2026-05-01T09:00:00.000Z', applied: false, at: before },
      { lastModified: '2026-05-02T09:00:00.000Z', applied: true, at: new Date(clock.now()).toISOString() },
    ]);
  });

  it('keeps the last writes of an approval only', async () => {
    const tenant = await tenantWithApprovals();
    for (let day = 2; day < 2 + HISTORY_PER_APPROVAL + 5; day++) {
      await call(backend, 'PUT', '/v2/rawapprovals/PO-1', {
        token: tenant.connectorToken,
        body: { approval: { lastModified: new Date(Date.UTC(2026, 5, day)).toISOString() } },
      });
    }
    const [po1] = (
      await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}/approvals?search=PO-1`)
    ).body.approvals;
    expect(po1.history).toHaveLength(HISTORY_PER_APPROVAL);
    expect(po1.history.at(-1).lastModified).toBe(
      new Date(Date.UTC(2026, 5, 1 + HISTORY_PER_APPROVAL + 5)).toISOString(),
    );
  });

  it('forgets the writes of the approval written longest ago, past the approvals it keeps', async () => {
    const tenant = backend.createTenant();
    const ids = Array.from({ length: HISTORY_APPROVALS + 1 }, (_, index) => `H-${index}`);
    for (let start = 0; start < ids.length; start += 100) {
      const answer = await call(backend, 'PUT', '/v2/rawapprovals', {
        token: tenant.connectorToken,
        body: {
          approvals: ids.slice(start, start + 100).map((id) => ({ id, schemaId: 'po', approver: 'ada' })),
        },
      });
      expect(answer.status).toBe(200);
    }
    const history = async (id: string) =>
      (await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}/approvals?search=${id}`)).body
        .approvals[0].history;
    expect(await history('H-0')).toEqual([]);
    expect(await history('H-1')).toHaveLength(1);
    expect(await history(`H-${HISTORY_APPROVALS}`)).toHaveLength(1);
  });

  it('answers a system’s connector, templates and state, and 404 for an unknown system', async () => {
    const tenant = await tenantWithApprovals();
    const answer = await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}`);
    expect(answer.body).toMatchObject({
      system: tenant.system,
      organization: tenant.organization,
      connector: { taskTypes: ['approve', 'reject'], authRequired: false },
      templates: [],
      state: { state: {} },
      now: new Date(clock.now()).toISOString(),
    });
    expect(await consoleCall(backend, session, 'GET', '/systems/nope')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
  });
});

describe('an approval’s own page', () => {
  it('answers the approval with its approver as the organization knows them, and its tasks’ timelines', async () => {
    const tenant = await tenantWithApprovals();
    const [ada] = createUsers(backend, tenant, [['ada@example.com', 'Ada', 'Lovelace']]);
    await mapUsers(backend, tenant, [{ userId: ada.id, systemUserId: 'ada' }]);
    const created = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    clock.advance(1_000);
    await call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
    backend.expireLeases({ taskId: created.id });
    clock.advance(1_000);
    await call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
    await call(backend, 'PATCH', `/v2/connector/tasks/${created.id}`, {
      token: tenant.connectorToken,
      body: { taskResult: { status: 'systemError', meta: { reason: 'locked' } } },
    });

    const answer = await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}/approvals/PO-1`);
    expect(answer.status).toBe(200);
    expect(answer.body.approval).toMatchObject({
      id: 'PO-1',
      approverUser: { id: ada.id, firstName: 'Ada' },
    });
    expect(answer.body.tasks).toHaveLength(1);
    expect(answer.body.tasks[0]).toMatchObject({ id: created.id, result: { status: 'systemError' } });
    const start = clock.now() - 2_000;
    const at = (ms: number) => new Date(start + ms).toISOString();
    expect(answer.body.tasks[0].timeline).toEqual([
      { type: 'created', at: at(0) },
      { type: 'delivered', at: at(1_000), delivery: 1, leaseExpiresAt: expect.any(String) },
      { type: 'leaseEnded', at: at(1_000) },
      { type: 'delivered', at: at(2_000), delivery: 2, leaseExpiresAt: expect.any(String) },
      { type: 'completed', at: at(2_000), resultStatus: 'systemError' },
    ]);
    const missing = await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}/approvals/NOPE`);
    expect(missing.status).toBe(404);
  });

  it('pages the list beyond its first 50', async () => {
    const tenant = backend.createTenant();
    await call(backend, 'PUT', '/v2/rawapprovals', {
      token: tenant.connectorToken,
      body: {
        approvals: Array.from({ length: 55 }, (_, n) => ({
          id: `P-${String(n).padStart(2, '0')}`,
          schemaId: 'po',
          approver: 'ada',
          lastModified: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
        })),
      },
    });
    const page = async (offset: number) =>
      (await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}/approvals?offset=${offset}`))
        .body;
    const first = await page(0);
    expect(first.total).toBe(55);
    expect(first.approvals).toHaveLength(50);
    const second = await page(50);
    expect(second.approvals.map((approval: { id: string }) => approval.id)).toEqual([
      'P-04',
      'P-03',
      'P-02',
      'P-01',
      'P-00',
    ]);
  });
});

describe('a system’s health', () => {
  it('says when its connector last polled, pushed and saved its state, and its failures by status', async () => {
    const tenant = await tenantWithApprovals();
    const other = backend.createTenant();
    backend.faults.inject({
      systemId: tenant.system.id,
      path: '/v2/connector/tasks',
      times: 2,
      fault: { type: 'status', status: 503 },
    });
    for (const token of [tenant.connectorToken, other.connectorToken]) {
      await call(backend, 'GET', '/v2/connector/tasks', { token });
    }
    await call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
    await call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
    await call(backend, 'PUT', '/v2/connector/state', { token: tenant.connectorToken, body: { state: {} } });
    await call(backend, 'PUT', '/v2/rawapprovals/PO-9', {
      token: tenant.connectorToken,
      body: { approval: { approver: 'ada' } },
    });

    const { health } = (await consoleCall(backend, session, 'GET', `/systems/${tenant.system.id}`)).body;
    expect(health.lastPoll).toMatchObject({ method: 'GET', path: '/v2/connector/tasks', status: 200 });
    expect(health.lastSync).toMatchObject({ path: '/v2/connector/state', status: 200 });
    expect(health.lastPush).toMatchObject({ path: '/v2/rawapprovals/:approvalId', status: 400 });
    expect(health.failuresByStatus).toEqual({ 400: 1, 503: 2 });
    expect(health.recentFailures.map((failure: { injected: boolean }) => failure.injected)).toEqual([
      false,
      true,
      true,
    ]);
    const quiet = (await consoleCall(backend, session, 'GET', `/systems/${other.system.id}`)).body.health;
    expect(quiet).toMatchObject({ lastPoll: { status: 200 }, failuresByStatus: {} });
  });

  it('refuses a fault scoped to a system that does not exist', async () => {
    const answer = await consoleCall(backend, session, 'POST', '/faults', {
      body: { systemId: 'no-such-system', fault: { type: 'drop' } },
    });
    expect(answer.status).toBe(404);
    expect(backend.faults.list()).toEqual([]);
  });
});

describe('creating a task', () => {
  it('creates one as an approver would, with comments', async () => {
    const tenant = await tenantWithApprovals();
    const answer = await consoleCall(backend, session, 'POST', `/systems/${tenant.system.id}/tasks`, {
      body: { type: 'approve', approvalId: 'PO-1', approveComments: 'fine' },
    });
    expect(answer).toMatchObject({ status: 200, body: { status: 'waiting', approveComments: 'fine' } });
    expect(backend.listTasks(tenant.system.id)).toHaveLength(1);
  });

  it('refuses an action on a resolved approval, or beside a task still on its way, and an overlong comment', async () => {
    const tenant = await tenantWithApprovals();
    const path = `/systems/${tenant.system.id}/tasks`;
    const resolved = await consoleCall(backend, session, 'POST', path, {
      body: { type: 'approve', approvalId: 'PO-2' },
    });
    expect(resolved).toMatchObject({
      status: 409,
      body: { error: { message: expect.stringContaining('resolved already') } },
    });
    const long = await consoleCall(backend, session, 'POST', path, {
      body: { type: 'approve', approvalId: 'PO-1', approveComments: 'x'.repeat(MAX_COMMENT_CHARS + 1) },
    });
    expect(long).toMatchObject({
      status: 400,
      body: { error: { message: expect.stringContaining(`at most ${MAX_COMMENT_CHARS} characters`) } },
    });
    expect(backend.listTasks(tenant.system.id)).toEqual([]);
    const first = await consoleCall(backend, session, 'POST', path, {
      body: { type: 'approve', approvalId: 'PO-1', approveComments: 'x'.repeat(MAX_COMMENT_CHARS) },
    });
    expect(first.status).toBe(200);
    const second = await consoleCall(backend, session, 'POST', path, {
      body: { type: 'reject', approvalId: 'PO-1' },
    });
    expect(second).toMatchObject({
      status: 409,
      body: { error: { message: expect.stringContaining('on its way') } },
    });
    expect(backend.listTasks(tenant.system.id)).toHaveLength(1);
  });

  it('takes credentials only sealed: plain ones are refused and nothing is stored', async () => {
    const pair = nacl.box.keyPair();
    const publicKey = toBase64(pair.publicKey);
    const tenant = await tenantWithApprovals({
      authRequired: true,
      publicKey,
      publicKeyExpiredAt: new Date(clock.now() + 3_600_000).toISOString(),
    });
    const path = `/systems/${tenant.system.id}/tasks`;
    const plain = await consoleCall(backend, session, 'POST', path, {
      body: { type: 'approve', approvalId: 'PO-1', credentials: { password: 'plain' } },
    });
    expect(plain).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
    expect(backend.listTasks(tenant.system.id)).toEqual([]);

    const sealed = await consoleCall(backend, session, 'POST', path, {
      body: {
        type: 'approve',
        approvalId: 'PO-1',
        sealedCredentials: sealCredentials({ password: 'p' }, publicKey),
      },
    });
    expect(sealed).toMatchObject({ status: 200, body: { encrypted: true } });
  });
});

describe('faults and leases', () => {
  it('switches faults on and off, and ends leases, as the admin API does', async () => {
    const rule = {
      method: 'GET',
      path: '/v2/connector/tasks',
      times: 9007199254740991,
      fault: { type: 'duplicateTask' },
    };
    const added = await consoleCall(backend, session, 'POST', '/faults', { body: rule });
    expect(added).toMatchObject({ status: 200, body: { id: expect.any(Number), remaining: rule.times } });
    expect((await consoleCall(backend, session, 'GET', '/faults')).body).toEqual([added.body]);
    expect(
      (await consoleCall(backend, session, 'POST', '/faults', { body: { fault: { type: 'nope' } } })).body,
    ).toMatchObject({ error: { code: 'bad_request' } });
    await consoleCall(backend, session, 'DELETE', `/faults/${added.body.id}`);
    expect(backend.faults.list()).toEqual([]);

    const tenant = await tenantWithApprovals();
    backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    await call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
    const expired = await consoleCall(backend, session, 'POST', '/leases/expire', {
      body: { systemId: tenant.system.id },
    });
    expect(expired.body).toEqual({ expired: 1 });
    expect(backend.listTasks(tenant.system.id)).toMatchObject([{ status: 'waiting' }]);
  });
});

describe('the event stream', () => {
  it('tells the page which parts of which system changed', async () => {
    const tenant = await tenantWithApprovals();
    const controller = new AbortController();
    const stream = await request(`${backend.url}/console/api/events`, {
      headers: { cookie: session.cookie },
      signal: controller.signal,
    });
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const received: string[] = [];
    const reading = (async () => {
      for await (const chunk of stream.body) {
        received.push(String(chunk));
        if (received.join('').includes('"kind":"task"')) return;
      }
    })().catch(() => {});
    backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    await reading;
    controller.abort();
    const frames = received
      .join('')
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '));
    expect(frames.map((frame) => JSON.parse(frame.slice(6)))).toContainEqual({
      changes: [{ kind: 'task', systemId: tenant.system.id }],
    });
  });

  it('tells a batch of writes as one event', async () => {
    const tenant = await tenantWithApprovals();
    const controller = new AbortController();
    const stream = await request(`${backend.url}/console/api/events`, {
      headers: { cookie: session.cookie },
      signal: controller.signal,
    });
    let text = '';
    const reading = (async () => {
      for await (const chunk of stream.body) {
        text += String(chunk);
        if (text.includes('"kind":"state"')) return;
      }
    })().catch(() => {});
    await call(backend, 'PUT', '/v2/rawapprovals', {
      token: tenant.connectorToken,
      body: {
        approvals: ['A-1', 'A-2', 'A-3'].map((id) => ({ id, schemaId: 'po', approver: 'ada', data: {} })),
      },
    });
    // A later write of another kind, so that the stream has surely sent the batch's event before it.
    await call(backend, 'PUT', '/v2/connector/state', {
      token: tenant.connectorToken,
      body: { state: { n: 1 } },
    });
    await reading;
    controller.abort();
    const events = text
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '))
      .map((frame) => JSON.parse(frame.slice(6)));
    type Change = { kind: string; systemId?: string };
    const withApprovals = events.filter((event: { changes: Change[] }) =>
      event.changes.some((change) => change.kind === 'approval'),
    );
    expect(withApprovals).toHaveLength(1);
    expect(withApprovals[0].changes.filter((change: Change) => change.kind === 'approval')).toEqual([
      { kind: 'approval', systemId: tenant.system.id },
    ]);
  });

  it('ends when the session signs out', async () => {
    const own = await signIn(backend, backend.adminToken);
    const stream = await request(`${backend.url}/console/api/events`, { headers: { cookie: own.cookie } });
    const ended = stream.body.text();
    await consoleCall(backend, own, 'DELETE', '/session');
    await expect(ended).resolves.toContain('retry:');
  });
});

describe('a backend on every interface', () => {
  it('gives a link a browser can open', async () => {
    const wide = await start({ host: '0.0.0.0' });
    try {
      expect(wide.backend.url).toMatch(/^http:\/\/0\.0\.0\.0:/);
      expect(wide.backend.createConsoleLink()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/#login=/);
    } finally {
      await wide.backend.close();
    }
  });
});
