import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import nacl from 'tweetnacl';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openCredentials, toBase64 } from '../../../src/api/index.js';
import { startReferenceBackend } from '../../../src/backend/index.js';
import { call } from '../helpers.js';
import { launchBrowser, openPage, screenshots, WIDTHS } from './support/browser.js';
import { type RunningConnector, startConnector } from './support/running-connector.js';

// The console in a real browser (Debian's Chromium driven by playwright-core), against a running connector.

const HOUR = 60 * 60 * 1000;
let browser: Browser;
const running: RunningConnector[] = [];
const pages: Page[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());
afterEach(async ({ task }) => {
  // What a failing test's pages showed, whatever CONSOLE_SCREENSHOTS says.
  if (task.result?.state === 'fail') {
    const name = task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    for (const [index, page] of pages.entries()) {
      await screenshots(page, `failed-${name}-${index + 1}`, true).catch(() => {});
    }
  }
  // Pages first: an open event stream would hold the backend's close.
  await Promise.all(pages.splice(0).map((page) => page.context().close()));
  await Promise.all(running.splice(0).map((connector) => connector.close()));
});

async function connector(options: Parameters<typeof startConnector>[0] = {}): Promise<RunningConnector> {
  const started = await startConnector(options);
  running.push(started);
  return started;
}

/** A page signed in with a fresh login link, on the system's approvals. */
async function signedIn(rc: RunningConnector): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser);
  pages.push(opened.page);
  await opened.page.goto(rc.backend.createConsoleLink());
  await opened.page.getByRole('heading', { name: 'Organizations' }).waitFor();
  await opened.page.goto(`${rc.backend.url}/console/#/systems/${rc.systemId}/approvals`);
  await opened.page.locator('.approvals').waitFor({ state: 'attached' });
  return opened;
}

const card = (page: Page, approvalId: string) => page.locator(`article[data-approval-id="${approvalId}"]`);

/** Opens the approval's action form in the list (its *Act* button), and answers the row. */
async function act(page: Page, approvalId: string) {
  const row = card(page, approvalId);
  await row.getByRole('button', { name: 'Act' }).click();
  return row;
}

/** Waits until the last task shown on the approval's row has this status. */
async function taskShows(page: Page, approvalId: string, status: string): Promise<void> {
  await card(page, approvalId).locator('.row-task .task-status', { hasText: status }).waitFor();
}

/** Whether the page is wider than the window: something a phone's reader would have to scroll sideways to. */
const scrollsSideways = (page: Page) =>
  page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth');

describe('the console in a browser', { timeout: 60_000 }, () => {
  it('shows an approval a running connector pushes, as it arrives, with the connector’s template', async () => {
    const rc = await connector();
    const { page, errors } = await signedIn(rc);
    await page.getByText('No approval matches.').waitFor();

    // Beside the connector's `card` template for `po`, a `detail` one, which the console prefers; and for `raw`, a
    // template without anything the console can render.
    await call(rc.backend, 'GET', '/v2/connector/uitemplates', {
      token: rc.token,
      body: {
        uiTemplates: [
          {
            type: 'detail',
            schemaId: 'po',
            template: {
              title: 'Detail: {{title}}',
              subtitle: 'for {{approver}}',
              fields: [{ label: 'Amount', path: 'data.amount' }],
            },
          },
          { type: 'detail', schemaId: 'raw', template: { layout: 'two-columns' } },
        ],
      },
    });
    rc.source.put('PR-7', '2026-05-01T10:00:00.000Z', { data: { title: 'Standing desks', amount: 940 } });
    rc.source.put('RAW-1', '2026-05-01T08:00:00.000Z', { schemaId: 'raw', data: { note: 'as a tree' } });
    rc.source.put('PR-8', '2026-05-01T09:00:00.000Z', {
      data: { title: '<img src=x onerror="document.title=1">Chairs', amount: '<b>12</b>' },
    });
    await rc.sync();

    const arrived = card(page, 'PR-7');
    await arrived.waitFor();
    // A row each, titled by the template, with the approval's id; no form until Act is pressed.
    expect(await arrived.locator('.row-title').textContent()).toBe('Detail: Standing desks');
    expect(await arrived.locator('textarea').isVisible()).toBe(false);
    expect(await card(page, 'RAW-1').locator('.row-title').textContent()).toBe('RAW-1');
    // What a source sent is shown as text, never run or rendered as markup.
    const hostile = card(page, 'PR-8');
    expect(await hostile.locator('.row-title').textContent()).toBe(
      'Detail: <img src=x onerror="document.title=1">Chairs',
    );
    expect(await hostile.locator('img, b').count()).toBe(0);
    expect(await page.title()).toMatch(/^Approvals · .+ · Console · reference backend$/);
    await screenshots(page, 'approval-arrives');

    // Its own page, at its own address: the template renders it, label and value.
    await arrived.getByRole('link', { name: 'Detail: Standing desks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Detail: Standing desks' }).waitFor();
    expect(page.url()).toBe(`${rc.backend.url}/console/#/systems/${rc.systemId}/approvals/PR-7`);
    expect(await page.locator('.rendered-title').textContent()).toBe('Detail: Standing desks');
    expect(await page.locator('.rendered-subtitle').textContent()).toBe('for ada');
    expect(await page.locator('.rendered .fields dt').allTextContents()).toEqual(['Amount']);
    expect(await page.locator('.rendered .fields dd').allTextContents()).toEqual(['940']);
    await page.goto(`${rc.backend.url}/console/#/systems/${rc.systemId}/approvals/RAW-1`);
    await page.getByRole('heading', { level: 1, name: 'RAW-1' }).waitFor();
    // The data panel fills in after the heading: wait for it before reading it.
    await page.locator('.tree-leaf').first().waitFor();
    expect(await page.locator('.rendered').count()).toBe(0);
    expect(await page.locator('.tree-leaf').allTextContents()).toEqual(['note"as a tree"']);
    await page.goto(`${rc.backend.url}/console/#/systems/${rc.systemId}/approvals/PR-8`);
    await page.locator('.rendered-title').waitFor();
    expect(await page.locator('.approval-page img, .approval-page b').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('creates a task with Approve, which the connector runs, and shows its result live', async () => {
    const rc = await connector();
    rc.source.put('PR-1', '2026-05-01T10:00:00.000Z', { data: { title: 'Laptops', amount: 2400 } });
    await rc.sync();
    const { page, errors } = await signedIn(rc);

    // From the keyboard: Act opens the form with the focus in the comments, then Tab to Approve and Enter.
    await card(page, 'PR-1').getByRole('button', { name: 'Act' }).press('Enter');
    expect(await page.evaluate('document.activeElement.name')).toBe('comments');
    await page.keyboard.type('within budget');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Approve');
    await page.keyboard.press('Enter');
    await taskShows(page, 'PR-1', 'succeeded');
    expect(rc.ran).toEqual([{ type: 'approve', approvalId: 'PR-1', comments: 'within budget' }]);
    // The focus stays on what the action did, not on the page's body.
    expect(await page.evaluate('document.activeElement.getAttribute("role")')).toBe('status');
    // The source has not resolved it yet: the page says why it still waits.
    await card(page, 'PR-1').getByText('the approval resolves at its next sync').waitFor();
    await screenshots(page, 'approved');

    await page.getByRole('link', { name: 'Tasks' }).click();
    const row = page.locator('tr[data-task-id]');
    await row.locator('.task-status', { hasText: 'succeeded' }).waitFor();
    expect(await row.locator('.task-result').textContent()).toContain('success');
    expect(await row.textContent()).toContain('within budget');
    await screenshots(page, 'tasks');

    await page.getByRole('link', { name: 'State' }).click();
    const cursor = JSON.stringify(rc.backend.getState(rc.systemId).state).match(/"([^"]+)":/)?.[1];
    await page
      .locator('.tree-key', { hasText: cursor ?? 'no key' })
      .first()
      .waitFor();
    await screenshots(page, 'state');
    expect(errors).toEqual([]);
  });

  it('seals credentials in the browser: the backend holds only ciphertext, and the connector opens them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-credentials-'));
    try {
      const dataFile = join(dir, 'backend.sqlite');
      const logs: string[] = [];
      const logger = pino(
        { level: 'trace' },
        new Writable({
          write(chunk, _encoding, done) {
            logs.push(String(chunk));
            done();
          },
        }),
      );
      const rc = await connector({ authRequired: true, backend: { dataFile, logger } });
      rc.source.put('PR-2', '2026-05-01T10:00:00.000Z');
      await rc.sync();
      const { page, errors } = await signedIn(rc);
      const sent: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST' && request.url().endsWith('/tasks'))
          sent.push(request.postData() ?? '');
      });

      const username = 'console-user-4711';
      const password = 'correct horse battery staple';
      const form = await act(page, 'PR-2');
      await form.getByLabel('Username').fill(username);
      await form.getByLabel('Password').fill(password);
      await form.getByRole('button', { name: 'Approve' }).click();
      await taskShows(page, 'PR-2', 'succeeded');
      await screenshots(page, 'credentials');

      expect(rc.ran).toEqual([
        { type: 'approve', approvalId: 'PR-2', comments: '', credentials: { username, password } },
      ]);
      // What left the browser: sealed to the connector's current key, and nothing in plain form.
      expect(sent).toHaveLength(1);
      const body = JSON.parse(sent[0]!);
      expect(body.sealedCredentials).toMatchObject({
        algorithm: 'x25519-xsalsa20-poly1305',
        publicKey: rc.backend.getConnector(rc.systemId).publicKey,
      });
      expect(sent[0]).not.toContain(password);
      expect(sent[0]).not.toContain(username);
      // What the backend keeps (its data file, and the log) has the ciphertext and never the password.
      const stored = [dataFile, `${dataFile}-wal`]
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file).toString('latin1'))
        .join('');
      expect(stored).toContain(body.sealedCredentials.ciphertext);
      expect(stored).not.toContain(password);
      expect(logs.length).toBeGreaterThan(0);
      expect(logs.join('')).not.toContain(password);
      expect(errors).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the approver as the organization’s user, and fills in their demo sign-in with one click', async () => {
    const rc = await connector({ authRequired: true });
    const orgId = rc.backend.systemOfToken(rc.token)!.orgId;
    const user = rc.backend.createUser(orgId, {
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    await call(rc.backend, 'POST', `/v1/systems/${rc.systemId}/usermappings/bulk`, {
      token: rc.backend.createManagementToken(orgId),
      body: [{ userId: user.id, systemUserId: 'ada' }],
    });
    rc.backend.setConsoleDemoSignIns(rc.systemId, [
      { approver: 'ada', username: 'ada.demo', password: 'demo-pw' },
    ]);
    rc.source.put('PR-14', '2026-05-01T10:00:00.000Z');
    await rc.sync();
    const { page, errors } = await signedIn(rc);

    const row = card(page, 'PR-14');
    await row.getByText('Ada Lovelace').waitFor();
    const form = await act(page, 'PR-14');
    await form.getByRole('button', { name: 'Fill in ada.demo’s demo sign-in' }).click();
    expect(await form.getByLabel('Username').inputValue()).toBe('ada.demo');
    await form.getByRole('button', { name: 'Approve' }).click();
    await taskShows(page, 'PR-14', 'succeeded');
    expect(rc.ran).toEqual([
      {
        type: 'approve',
        approvalId: 'PR-14',
        comments: '',
        credentials: { username: 'ada.demo', password: 'demo-pw' },
      },
    ]);
    await screenshots(page, 'demo-sign-in');
    expect(errors).toEqual([]);
  });

  it('seals to the key the connector holds when Approve is clicked, and warns before that key expires', async () => {
    const rc = await connector({ authRequired: true });
    rc.source.put('PR-4', '2026-05-01T10:00:00.000Z');
    await rc.sync();
    const { page, errors } = await signedIn(rc);
    await card(page, 'PR-4').waitFor();
    expect(await page.locator('.notice-warn').count()).toBe(0);

    // A key registered after the page loaded, expiring in 30 hours: well inside the default rotation margin.
    const pair = nacl.box.keyPair();
    const publicKey = toBase64(pair.publicKey);
    await call(rc.backend, 'PATCH', '/v2/connector', {
      token: rc.token,
      body: {
        authRequired: true,
        publicKey,
        publicKeyExpiredAt: new Date(Date.now() + 30 * HOUR).toISOString(),
      },
    });
    await page.getByText(/public key expires in (29|30) hours/).waitFor();
    await screenshots(page, 'key-warning');
    await page.getByRole('link', { name: 'Connector' }).click();
    await page.getByText(publicKey, { exact: true }).first().waitFor();
    expect(await page.locator('[aria-labelledby="registration-title"] .fields').textContent()).toContain(
      'approvereject',
    );
    await screenshots(page, 'connector');
    await page.getByRole('link', { name: 'Approvals' }).click();

    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/tasks'))
        sent.push(request.postData() ?? '');
    });
    const form = await act(page, 'PR-4');
    await form.getByLabel('Username').fill('ada');
    await form.getByLabel('Password').fill('s3cret');
    await form.getByRole('button', { name: 'Approve' }).click();
    await card(page, 'PR-4').locator('.row-task').waitFor();
    const { sealedCredentials } = JSON.parse(sent[0] ?? '{}');
    expect(sealedCredentials.publicKey).toBe(publicKey);
    expect(openCredentials(sealedCredentials, pair.secretKey)).toEqual({
      username: 'ada',
      password: 's3cret',
    });
    expect(errors).toEqual([]);
  });

  it('shows a fault switched on in the connector’s results: a task delivered twice, run once', async () => {
    const rc = await connector();
    rc.source.put('PR-3', '2026-05-01T10:00:00.000Z');
    await rc.sync();
    const { page, errors } = await signedIn(rc);

    await page.getByRole('link', { name: 'Faults' }).click();
    const toggle = page.getByRole('button', { name: 'Duplicate delivery: switch' });
    await toggle.click();
    await page.locator('#duplicate-switch[aria-pressed="true"]').waitFor();
    await screenshots(page, 'faults');

    // The action waits until the task has been delivered again, so that the duplicate cannot come too late.
    const release = rc.hold();
    await page.goBack();
    await (await act(page, 'PR-3')).getByRole('button', { name: 'Approve' }).click();
    await card(page, 'PR-3').locator('.row-task').waitFor();
    const [task] = rc.backend.listTasks(rc.systemId);
    await expect.poll(() => rc.backend.getTask(task!.id)?.deliveries, { timeout: 10_000 }).toBeGreaterThan(1);
    release();

    await taskShows(page, 'PR-3', 'succeeded');
    await card(page, 'PR-3').getByRole('link', { name: 'PR-3' }).click();
    const shown = page.locator('article.task');
    await shown.locator('.task-status', { hasText: 'succeeded' }).waitFor();
    expect(Number((await shown.textContent())?.match(/(\d+) deliveries/)?.[1])).toBeGreaterThan(1);
    // Each delivery is in the timeline, the duplicate one without a lease.
    expect(
      await shown.locator('li[data-event="delivered"]', { hasText: 'without a lease' }).count(),
    ).toBeGreaterThan(0);
    expect(rc.ran).toHaveLength(1);
    await screenshots(page, 'delivered-twice');
    expect(errors).toEqual([]);
  });

  it('shows a task leased, then waiting again when its lease ends, with no write to tell it', async () => {
    const backend = await startReferenceBackend({ leaseMs: 1_500 });
    try {
      const tenant = backend.createTenant();
      await call(backend, 'PATCH', '/v2/connector', {
        token: tenant.connectorToken,
        body: { taskTypes: ['approve'] },
      });
      await call(backend, 'PUT', '/v2/rawapprovals/PR-5', {
        token: tenant.connectorToken,
        body: { approval: { schemaId: 'po', approver: 'ada', data: {} } },
      });
      const { page, errors } = await openPage(browser);
      pages.push(page);
      await page.goto(backend.createConsoleLink());
      await page.getByRole('heading', { name: 'Organizations' }).waitFor();
      await page.goto(`${backend.url}/console/#/systems/${tenant.system.id}/tasks`);
      await page.getByText('No task yet').waitFor();

      backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PR-5' });
      const status = page.locator('tr[data-task-id] .task-status');
      await status.getByText('waiting').waitFor();
      await call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
      await status.getByText('leased').waitFor();
      await screenshots(page, 'leased');
      await status.getByText('waiting').waitFor({ timeout: 10_000 });
      expect(backend.listTasks(tenant.system.id)).toMatchObject([{ status: 'waiting', deliveries: 1 }]);
      await page.context().close();
      expect(errors).toEqual([]);
    } finally {
      await backend.close();
    }
  });

  it('shows a fault in a banner on every page and in its system’s health, limited to one system, until it is off or spent', async () => {
    const rc = await connector();
    rc.source.put('PR-6', '2026-05-01T10:00:00.000Z');
    await rc.sync();
    const heard: string[] = [];
    rc.backend.faults.subscribe((event) => heard.push(event.type));
    const { page, errors } = await signedIn(rc);
    const banner = page.locator('.fault-banner');
    expect(await banner.isVisible()).toBe(false);

    await page.getByRole('link', { name: 'Faults' }).click();
    await page.locator(`#server-error-system option[value="${rc.systemId}"]`).waitFor({ state: 'attached' });
    // The fields are a form's: a status the switch does not take is refused in the page, and nothing is sent.
    await page.locator('#server-error-number').fill('404');
    await page.getByRole('button', { name: 'Server error (5xx): switch' }).click();
    expect(await page.locator('#server-error-number:invalid').count()).toBe(1);
    expect(rc.backend.faults.list()).toEqual([]);
    await page.locator('#server-error-number').fill('503');

    await page.locator('#server-error-system').selectOption(rc.systemId);
    await page.getByRole('button', { name: 'Server error (5xx): switch' }).click();
    await page.locator('#server-error-switch[aria-pressed="true"]').waitFor();
    expect(rc.backend.faults.list()).toMatchObject([{ systemId: rc.systemId, fault: { status: 503 } }]);
    // The running connector meets it at its next poll: the banner counts the requests it answered.
    await banner.getByText(/applied [1-9]\d* times?/).waitFor();
    expect(await banner.textContent()).toContain('503');
    expect(await banner.textContent()).toMatch(/for .+ only/);
    await screenshots(page, 'fault-banner');

    await page.goto(`${rc.backend.url}/console/#/systems/${rc.systemId}/connector`);
    await page.locator('[data-health="failures"]', { hasText: '503:' }).waitFor();
    await page.locator('[data-health="poll"]', { hasText: 'failed 503' }).waitFor();
    expect(await banner.isVisible()).toBe(true);
    await screenshots(page, 'health');

    await page.getByRole('link', { name: 'Faults' }).click();
    // Until the page has loaded the faults in force, the switch shows off, and a click would add a second fault.
    await page.locator('#server-error-switch[aria-pressed="true"]').waitFor();
    await page.getByRole('button', { name: 'Server error (5xx): switch' }).click();
    await banner.waitFor({ state: 'hidden' });

    // A fault for three requests is spent by the connector's polls: the switch turns off without a reload.
    await page.locator('#server-error-system').selectOption('');
    await page.locator('#server-error-times').fill('3');
    await page.getByRole('button', { name: 'Server error (5xx): switch' }).click();
    await expect.poll(() => heard.filter((type) => type === 'spent').length).toBe(1);
    await page.locator('#server-error-switch[aria-pressed="false"]').waitFor();
    await banner.waitFor({ state: 'hidden' });
    expect(rc.backend.faults.list()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('shows the push health the connector’s worker saved in its state, live, as it turns degraded', async () => {
    const rc = await connector();
    const { page, errors } = await signedIn(rc);
    await page.goto(`${rc.backend.url}/console/#/systems/${rc.systemId}/connector`);
    await page.locator('[data-health="poll"]').waitFor();
    // A connector without a push path saves none: the panel has no line for it.
    expect(await page.locator('[data-health="push-health"]').count()).toBe(0);

    // What a worker with a push path writes (docs/push.md), through the service's API, as it writes it.
    const save = (health: Record<string, unknown>) =>
      call(rc.backend, 'PUT', '/v2/connector/state', {
        token: rc.token,
        body: { state: { kit: { version: 1, sync: {}, push: { health } } } },
      });
    await save({
      state: 'healthy',
      since: '2026-05-01T10:00:00.000Z',
      missed: 0,
      missedSinceLastDelivery: 0,
    });
    const line = page.locator('[data-health="push-health"]');
    await line.getByText('push healthy').waitFor();
    expect(await line.textContent()).toContain('0 missed · no delivery since the worker started');
    await save({
      state: 'degraded',
      since: '2026-05-01T10:42:00.000Z',
      missed: 3,
      missedSinceLastDelivery: 3,
      lastDeliveryAt: '2026-05-01T09:58:04.120Z',
    });
    await line.getByText('push degraded').waitFor();
    expect(await line.textContent()).toMatch(
      /^push degraded since .+, 3 missed \(3 since the last delivery\) · last delivery .+$/,
    );
    expect(await line.locator('time').first().getAttribute('datetime')).toBe('2026-05-01T10:42:00.000Z');
    await screenshots(page, 'push-health');
    expect(errors).toEqual([]);
  });

  it('shows a task that failed as failed, counts it, and filters on it through the address', async () => {
    const backend = await startReferenceBackend();
    try {
      const tenant = backend.createTenant();
      const token = tenant.connectorToken;
      await call(backend, 'PATCH', '/v2/connector', { token, body: { taskTypes: ['approve'] } });
      for (const id of ['PR-11', 'PR-12']) {
        await call(backend, 'PUT', `/v2/rawapprovals/${id}`, {
          token,
          body: { approval: { schemaId: 'po', approver: 'ada', data: {} } },
        });
      }
      const failed = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PR-11' });
      const succeeded = backend.createTask({
        systemId: tenant.system.id,
        type: 'approve',
        approvalId: 'PR-12',
      });
      for (const [task, status] of [
        [failed, 'systemError'],
        [succeeded, 'success'],
      ] as const) {
        await call(backend, 'GET', '/v2/connector/tasks', { token });
        await call(backend, 'PATCH', `/v2/connector/tasks/${task.id}`, {
          token,
          body: { taskResult: { status, meta: { note: `${status} here` } } },
        });
      }
      const { page, errors } = await openPage(browser);
      pages.push(page);
      await page.goto(backend.createConsoleLink());
      await page.getByRole('heading', { name: 'Organizations' }).waitFor();
      await page.goto(`${backend.url}/console/#/systems/${tenant.system.id}/tasks`);
      const row = (id: string) => page.locator(`tr[data-task-id="${id}"]`);
      await row(failed.id).locator('.task-status', { hasText: 'failed' }).waitFor();
      expect(await row(succeeded.id).locator('.task-status').textContent()).toBe('succeeded');
      expect(await row(failed.id).locator('.task-result').textContent()).toContain('systemError');
      await page.getByText('2 tasks: 1 failed, 0 on their way.').waitFor();

      await page.getByLabel('Show').selectOption('failed');
      expect(page.url()).toContain('/tasks?show=failed');
      expect(await page.locator('tr[data-task-id]').count()).toBe(1);
      await page.reload();
      await row(failed.id).waitFor();
      expect(await page.getByLabel('Show').inputValue()).toBe('failed');
      expect(await page.locator('tr[data-task-id]').count()).toBe(1);
      await screenshots(page, 'failed-task');

      // And on its approval's page, with the result's meta.
      await row(failed.id).getByRole('link', { name: 'PR-11' }).click();
      const task = page.locator(`article.task[data-task-id="${failed.id}"]`);
      await task.locator('.task-status', { hasText: 'failed' }).waitFor();
      await task.locator('li[data-event="completed"]', { hasText: 'Failed' }).waitFor();
      expect(await task.textContent()).toContain('systemError here');
      await page.context().close();
      expect(errors).toEqual([]);
    } finally {
      await backend.close();
    }
  });

  it('offers no action on a resolved approval, gives a failed task’s reason on its card, and names the approver as the data does', async () => {
    const backend = await startReferenceBackend();
    try {
      const tenant = backend.createTenant();
      const token = tenant.connectorToken;
      await call(backend, 'PATCH', '/v2/connector', { token, body: { taskTypes: ['approve'] } });
      // PR-21 names its approver in its data; no user of the organization maps to `ada`.
      for (const [id, resolved, data] of [
        ['PR-21', true, { approverName: 'Grace Hopper' }],
        ['PR-22', false, {}],
      ] as const) {
        await call(backend, 'PUT', `/v2/rawapprovals/${id}`, {
          token,
          body: { approval: { schemaId: 'po', approver: 'ada', resolved, data } },
        });
      }
      const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PR-22' });
      await call(backend, 'GET', '/v2/connector/tasks', { token });
      const reason = 'PR-22: "Budget holders" was already declined in the source';
      await call(backend, 'PATCH', `/v2/connector/tasks/${task.id}`, {
        token,
        body: { taskResult: { status: 'systemError', meta: { code: 'already_decided', message: reason } } },
      });
      const { page, errors } = await openPage(browser);
      pages.push(page);
      await page.goto(backend.createConsoleLink());
      await page.getByRole('heading', { name: 'Organizations' }).waitFor();
      await page.goto(`${backend.url}/console/#/systems/${tenant.system.id}/approvals`);
      await taskShows(page, 'PR-22', 'failed');
      expect(await card(page, 'PR-22').locator('.row-note').textContent()).toBe(
        `The approve task failed: ${reason}`,
      );
      expect(await card(page, 'PR-22').getByRole('button', { name: 'Act' }).isEnabled()).toBe(true);
      const resolved = card(page, 'PR-21').getByRole('button', { name: 'Act' });
      expect(await resolved.isDisabled()).toBe(true);
      expect(await resolved.getAttribute('title')).toBe('Resolved: there is nothing left to act on.');
      // The approver by the name the source's data gives, where no user mapping names the account; else its id.
      expect(await card(page, 'PR-21').locator('.row-meta').textContent()).toContain('for Grace Hopper');
      expect(await card(page, 'PR-22').locator('.row-meta').textContent()).toContain('for ada');

      // A form open when its approval resolves closes, and its button goes off.
      await act(page, 'PR-22');
      await card(page, 'PR-22').locator('form:not([hidden])').waitFor();
      await call(backend, 'PUT', '/v2/rawapprovals/PR-22', {
        token,
        body: { approval: { resolved: true } },
      });
      await card(page, 'PR-22').getByRole('button', { name: 'Act' }).and(page.locator(':disabled')).waitFor();
      expect(await card(page, 'PR-22').locator('form').isHidden()).toBe(true);
      await page.context().close();
      expect(errors).toEqual([]);
    } finally {
      await backend.close();
    }
  });

  it('finds an approval by its title, opens its page, and fills its timeline in live until it resolves', async () => {
    const rc = await connector();
    rc.source.put('PR-9', '2026-05-01T10:00:00.000Z', { data: { title: 'Ergonomic chairs', amount: 700 } });
    rc.source.put('PR-10', '2026-05-01T11:00:00.000Z', { data: { title: 'Monitors', amount: 300 } });
    await rc.sync();
    const { page, errors } = await signedIn(rc);
    await card(page, 'PR-10').waitFor();

    await page.getByLabel('Search').fill('ergonomic');
    await page.waitForURL(/approvals\?q=ergonomic$/);
    await card(page, 'PR-10').waitFor({ state: 'detached' });
    await page.reload();
    await card(page, 'PR-9').waitFor();
    expect(await page.getByLabel('Search').inputValue()).toBe('ergonomic');
    expect(await page.locator('article[data-approval-id]').count()).toBe(1);

    await page.getByRole('link', { name: 'Ergonomic chairs' }).click();
    const heading = page.getByRole('heading', { level: 1, name: 'Ergonomic chairs' });
    await heading.waitFor();
    // The new view's heading has the focus, and names the page.
    await expect.poll(() => page.evaluate('document.activeElement.tagName')).toBe('H1');
    expect(await page.title()).toMatch(/^Ergonomic chairs · .+ · Console · reference backend$/);

    const release = rc.hold();
    await page.getByLabel('Comments').fill('for the new office');
    await page.getByRole('button', { name: 'Approve' }).click();
    const timeline = page.locator('article.task .timeline');
    await timeline.locator('li[data-event="created"]', { hasText: 'for the new office' }).waitFor();
    await timeline.locator('li[data-event="delivered"]', { hasText: 'Delivery 1' }).waitFor();
    // A task on its way closes the actions: a second one could only end as already answered.
    expect(await page.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
    await screenshots(page, 'approval-timeline');
    release();
    await timeline.locator('li[data-event="completed"]', { hasText: 'Succeeded' }).waitFor();
    await page.locator('article.task .task-status', { hasText: 'succeeded' }).waitFor();
    await page.getByText('the approval resolves at its next sync').first().waitFor();

    rc.source.put('PR-9', '2026-05-01T12:00:00.000Z', {
      resolved: true,
      data: { title: 'Ergonomic chairs' },
    });
    await rc.sync();
    await page.locator('.approval-meta .badge', { hasText: 'resolved' }).waitFor();
    await page.getByText('Resolved: there is nothing left to act on.').waitFor();
    expect(await page.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
    expect(await page.getByText('resolves at its next sync').count()).toBe(0);
    await screenshots(page, 'approval-resolved');
    expect(errors).toEqual([]);
  });

  it('shows on an approval’s page the trace its task was created in, to find that trace from what an approver saw', async () => {
    const adminToken = 'console-trace-admin-token';
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const rc = await connector({ backend: { adminToken } });
    rc.source.put('PR-7', '2026-05-01T10:00:00.000Z', { data: { title: 'Standing desks' } });
    await rc.sync();
    const created = await call(rc.backend, 'POST', '/admin/tasks', {
      token: adminToken,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: { systemId: rc.systemId, type: 'approve', approvalId: 'PR-7' },
    });
    expect(created.status).toBe(200);
    const { page, errors } = await signedIn(rc);
    await page.getByRole('link', { name: 'Standing desks' }).click();
    const shown = page.locator('article.task .task-trace-created');
    await shown.waitFor();
    expect(await shown.textContent()).toBe(traceId);
    expect(errors).toEqual([]);
  });

  it('fits a phone’s width on every view, without scrolling sideways', async () => {
    const rc = await connector({ authRequired: true });
    rc.source.put('PR-13', '2026-05-01T10:00:00.000Z', {
      data: { title: 'A title long enough to wrap on a phone’s narrow screen, twice over', amount: 1 },
    });
    await rc.sync();
    rc.backend.createTask({
      systemId: rc.systemId,
      type: 'approve',
      approvalId: 'PR-13',
      credentials: { username: 'ada', password: 'x' },
    });
    rc.backend.faults.inject({ path: '/v2/connector/state', systemId: rc.systemId, fault: { type: 'drop' } });
    const { page, errors } = await signedIn(rc);
    await page.setViewportSize(WIDTHS.phone);
    const base = `${rc.backend.url}/console/#`;
    const views: [string, string][] = [
      ['/', 'Organizations'],
      ['/faults', 'Faults'],
      [`/systems/${rc.systemId}/approvals`, 'System'],
      [`/systems/${rc.systemId}/approvals/PR-13`, 'A title long enough'],
      [`/systems/${rc.systemId}/tasks`, 'System'],
      [`/systems/${rc.systemId}/connector`, 'System'],
      [`/systems/${rc.systemId}/state`, 'System'],
    ];
    for (const [route, title] of views) {
      await page.goto(`${base}${route}`);
      await page
        .getByRole('heading', { level: 1, name: title === 'System' ? undefined : title })
        .first()
        .waitFor();
      await page.locator('main .panel').first().waitFor();
      expect({ route, sideways: await scrollsSideways(page) }).toEqual({ route, sideways: false });
    }
    await page.goto(`${base}/systems/${rc.systemId}/tasks`);
    await page.locator('tr[data-task-id]').waitFor();
    await page.setViewportSize(WIDTHS.laptop);
    await screenshots(page, 'phone-tasks');
    expect(errors).toEqual([]);
  });

  it('says what is wrong in plain words, not in the backend’s', async () => {
    const rc = await connector();
    const { page, errors } = await signedIn(rc);
    await page.goto(`${rc.backend.url}/console/#/systems/does-not-exist/approvals`);
    await page.getByText('There is no system “does-not-exist”.').first().waitFor();
    expect(await page.getByText('Failed to find the an item').count()).toBe(0);
    expect(errors.filter((error) => !error.includes('404'))).toEqual([]);
  });

  it('says when the backend cannot be reached, in plain words', async () => {
    const backend = await startReferenceBackend();
    let closed = false;
    try {
      const { page, errors } = await openPage(browser);
      pages.push(page);
      await page.goto(backend.createConsoleLink());
      await page.getByRole('heading', { name: 'Organizations' }).waitFor();
      await backend.close();
      closed = true;
      await page.getByText(/The backend cannot be reached: nothing on this page is current/).waitFor();
      await screenshots(page, 'disconnected');
      expect(errors.filter((error) => !error.includes('ERR_CONNECTION_REFUSED'))).toEqual([]);
    } finally {
      if (!closed) await backend.close();
    }
  });

  it('signs in with its link once, keeps the token out of the address bar, and refuses a request without the cookie', async () => {
    const rc = await connector();
    const link = rc.backend.createConsoleLink();

    const first = await openPage(browser);
    pages.push(first.page);
    await first.page.goto(link);
    await first.page.getByRole('heading', { name: 'Organizations' }).waitFor();
    expect(first.page.url()).toBe(`${rc.backend.url}/console/`);
    const [cookie] = await first.page.context().cookies();
    expect(cookie).toMatchObject({ path: '/console', httpOnly: true, sameSite: 'Strict' });
    expect(await first.page.evaluate('document.cookie')).toBe('');
    expect(await first.page.evaluate(async () => (await fetch('/console/api/organizations')).status)).toBe(
      200,
    );

    const second = await openPage(browser);
    pages.push(second.page);
    await second.page.goto(link);
    await second.page.getByText('The login link has been used already: a link signs in once').waitFor();
    // How to get in again: not the spent link, but the admin token, or a new link from a restart.
    expect(await second.page.locator('.sign-in-how').textContent()).toBe(
      'A login link works once. Sign in with the admin token instead: the one the command that runs the backend (npm run dev, npm start or connector backend) printed when it started, or the value of APPROVAL_ADMIN_TOKEN. Or restart that command: it prints a new link.',
    );
    expect(second.page.url()).toBe(`${rc.backend.url}/console/`);
    await screenshots(second.page, 'link-used');
    const refused = await second.page.evaluate(async () => {
      const answer = await fetch('/console/api/organizations');
      return { status: answer.status, body: await answer.json() };
    });
    expect(refused).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });

    await second.page.getByLabel('Admin token').fill(rc.backend.adminToken);
    await second.page.getByRole('button', { name: 'Sign in' }).click();
    await second.page.getByRole('heading', { name: 'Organizations' }).waitFor();

    await first.page.getByRole('button', { name: 'Sign out' }).click();
    await first.page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    expect(await first.page.evaluate(async () => (await fetch('/console/api/organizations')).status)).toBe(
      401,
    );
    expect(first.errors.filter((error) => !error.includes('401'))).toEqual([]);
  });
});
