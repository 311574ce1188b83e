import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JiraSimulator } from '../simulator/simulator.js';
import { JiraClient } from '../src/jira-client.js';

// The simulated Jira's webhooks over HTTP, through the example's client: who may manage them, what a delivery
// carries, and each of the switches that make deliveries go wrong the ways Jira's may.
const START = Date.parse('2026-03-02T09:00:00.000Z');
const DAY = 24 * 3_600_000;
const SECRET = 'a-shared-secret-0123';
const EVENTS = ['jira:issue_created', 'jira:issue_updated', 'jira:issue_deleted'];

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** Where the site delivers: records each delivery, answering the statuses given in turn, then 204. */
async function receiver(
  statuses: number[] = [],
): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(statuses.shift() ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/push`, received, server };
}

let now: number;
let site: JiraSimulator;
let sink: Awaited<ReturnType<typeof receiver>>;
let jira: JiraClient;

beforeEach(async () => {
  now = START;
  site = await JiraSimulator.start({ seed: 5, now: () => now, requests: 3 });
  sink = await receiver();
  jira = new JiraClient({ baseUrl: site.url, ...site.syncAccount });
});

afterEach(async () => {
  await site.close();
  await new Promise<void>((resolve) => sink.server.close(() => resolve()));
});

async function adminWebhook(jql = site.jql, url = sink.url) {
  return await jira.registerAdminWebhook({ name: 'approvals', url, events: EVENTS, jql, secret: SECRET });
}

/** A delivery's body, as far as these tests read it. */
interface Payload {
  webhookEvent: string;
  issue: { key: string; fields: { summary: string } };
  matchedWebhookIds?: number[];
}

const payloads = () => sink.received.map(({ body }) => JSON.parse(body) as Payload);

function hardware(summary = 'New laptop') {
  const [ada] = site.approvers;
  return site.createRequest('10', { summary, approvers: [ada!.accountId] });
}

describe('the simulated Jira: admin webhooks', () => {
  it('are managed by a Jira administrator only: the sync account may, an approver gets 403', async () => {
    const ada = site.accounts.find(({ email }) => email === 'ada@example.com')!;
    const asAda = jira.withCredentials(ada);

    await expect(asAda.listAdminWebhooks()).rejects.toMatchObject({ status: 403 });
    const created = await adminWebhook();
    expect(await jira.listAdminWebhooks()).toEqual([created]);
    expect(await jira.deleteAdminWebhook(created.id)).toBe(true);
    expect(await jira.getAdminWebhook(created.id)).toBeUndefined();
  });

  it("delivers each change of an issue with Jira's headers, signed with the webhook's secret", async () => {
    await adminWebhook();
    const created = hardware();
    now += 60_000;
    site.editRequest(created.issueKey, { summary: 'New laptop, 16 GB' });
    site.deleteRequest(created.issueKey);
    await site.webhooksSettled();

    expect(payloads().map(({ webhookEvent }) => webhookEvent)).toEqual(EVENTS);
    for (const { headers, body } of sink.received) {
      expect(headers['content-type']).toMatch(/^application\/json/);
      expect(headers['x-atlassian-webhook-identifier']).toMatch(/^\d+$/);
      expect(headers['x-atlassian-webhook-flow']).toBe('Primary');
      expect(headers['x-atlassian-webhook-retry']).toBeUndefined();
      const digest = createHmac('sha256', SECRET).update(body).digest('hex');
      expect(headers['x-hub-signature']).toBe(`sha256=${digest}`);
    }
    const [, updated] = payloads();
    expect(updated).toMatchObject({
      timestamp: START + 60_000,
      issue_event_type_name: 'issue_updated',
      issue: { key: created.issueKey, fields: { summary: 'New laptop, 16 GB' } },
      changelog: { items: [{ fieldId: 'summary', fromString: 'New laptop', toString: 'New laptop, 16 GB' }] },
      user: { accountId: expect.any(String) },
    });
    expect(new Set(sink.received.map(({ headers }) => headers['x-atlassian-webhook-identifier'])).size).toBe(
      3,
    );
  });

  it('applies the filter to the issue after the change: a filter on the waiting status misses the decision', async () => {
    await adminWebhook(`${site.jql} AND status = "Waiting for approval"`);
    const created = hardware();
    const request = site.request(created.issueKey)!;
    const [approval] = request.approvals;
    site.decideInSource(created.issueKey, approval!.id, approval!.approvers[0]!.accountId, 'approved');
    await site.webhooksSettled();

    expect(site.request(created.issueKey)!.status).toBe('In progress');
    expect(payloads().map(({ webhookEvent }) => webhookEvent)).toEqual(['jira:issue_created']);
  });

  it('keeps the secret it has when an update sends none', async () => {
    const created = await adminWebhook();
    const { secret: _, ...withoutSecret } = {
      name: 'approvals',
      url: sink.url,
      events: EVENTS,
      jql: site.jql,
      secret: SECRET,
    };
    await jira.updateAdminWebhook(created.id, withoutSecret);
    hardware();
    await site.webhooksSettled();

    const [{ headers, body }] = sink.received as [Received];
    expect(headers['x-hub-signature']).toBe(
      `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    );
  });
});

describe('the simulated Jira: its clock', () => {
  it('is read no more often for a change with webhooks listening: a test clock that counts its reads keeps its steps', async () => {
    const reads = async (listening: boolean) => {
      let count = 0;
      const now = () => {
        count += 1;
        return START;
      };
      const counted = await JiraSimulator.start({ seed: 5, now, requests: 0 });
      try {
        const asSync = new JiraClient({ baseUrl: counted.url, ...counted.syncAccount });
        if (listening) {
          await asSync.registerAdminWebhook({
            name: 'approvals',
            url: sink.url,
            events: EVENTS,
            jql: counted.jql,
          });
        }
        const before = count;
        const [ada] = counted.approvers;
        const created = counted.createRequest('10', { approvers: [ada!.accountId] });
        counted.editRequest(created.issueKey, { summary: 'Edited' });
        const request = counted.request(created.issueKey)!;
        counted.decideInSource(created.issueKey, request.approvals[0]!.id, ada!.accountId, 'approved');
        await counted.webhooksSettled();
        return count - before;
      } finally {
        await counted.close();
      }
    };

    expect(await reads(true)).toBe(await reads(false));
  });
});

describe('the simulated Jira: deliveries that go wrong', () => {
  it("tries a delivery again after a 5xx, the same identifier with Jira's retry count, not after a 400", async () => {
    await site.close();
    site = await JiraSimulator.start({
      seed: 5,
      now: () => now,
      requests: 0,
      behaviour: { webhookRetryDelayMs: 5 },
    });
    jira = new JiraClient({ baseUrl: site.url, ...site.syncAccount });
    sink.received.length = 0;
    await new Promise<void>((resolve) => sink.server.close(() => resolve()));
    sink = await receiver([503, 429, 200, 400]);
    await adminWebhook();
    hardware('first');
    await site.webhooksSettled();
    hardware('second');
    await site.webhooksSettled();

    const attempts = sink.received.map(({ headers }) => [
      headers['x-atlassian-webhook-identifier'],
      headers['x-atlassian-webhook-retry'],
    ]);
    const [first, second] = [...new Set(attempts.map(([identifier]) => identifier))];
    expect(attempts).toEqual([
      [first, undefined],
      [first, '1'],
      [first, '2'],
      [second, undefined],
    ]);
    expect(site.deliveries().map(({ outcome, status }) => [outcome, status])).toEqual([
      ['failed', 503],
      ['failed', 429],
      ['delivered', 200],
      ['failed', 400],
    ]);
  });

  it('duplicates each delivery with webhookDuplicates, under one identifier', async () => {
    site.behaviour.webhookDuplicates = 2;
    await adminWebhook();
    hardware();
    await site.webhooksSettled();

    const copies = sink.received.map(({ headers, body }) => ({
      identifier: headers['x-atlassian-webhook-identifier'],
      retry: headers['x-atlassian-webhook-retry'],
      body,
    }));
    expect(copies.map(({ retry }) => retry)).toEqual([undefined, '1', '2']);
    expect(new Set(copies.map(({ identifier }) => identifier)).size).toBe(1);
    expect(new Set(copies.map(({ body }) => body)).size).toBe(1);
  });

  it('sends the deliveries waiting latest first with webhookOrder: reversed', async () => {
    site.behaviour.webhookOrder = 'reversed';
    await adminWebhook();
    const created = hardware('one');
    site.editRequest(created.issueKey, { summary: 'two' });
    site.editRequest(created.issueKey, { summary: 'three' });
    await site.webhooksSettled();

    expect(payloads().map(({ issue }) => issue.fields.summary)).toEqual(['three', 'two', 'one']);
  });

  it('drops deliveries with webhookDropRate, and says so', async () => {
    site.behaviour.webhookDropRate = 1;
    await adminWebhook();
    hardware();
    await site.webhooksSettled();

    expect(sink.received).toEqual([]);
    expect(site.deliveries().map(({ outcome, webhookEvent }) => [outcome, webhookEvent])).toEqual([
      ['dropped', 'jira:issue_created'],
    ]);
  });
});

describe('the simulated Jira: dynamic webhooks', () => {
  const app = () => new JiraClient({ baseUrl: site.url, accessToken: site.app.accessToken });

  async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
    const list: T[] = [];
    for await (const item of items) list.push(item);
    return list;
  }

  it('are refused to an account with an API token (403), and taken from the app', async () => {
    const webhooks = [{ events: EVENTS, jqlFilter: site.jql }];

    await expect(jira.registerDynamicWebhooks(sink.url, webhooks)).rejects.toMatchObject({ status: 403 });
    const [registered] = await app().registerDynamicWebhooks(sink.url, webhooks);
    expect(registered).toEqual({ ok: true, id: expect.any(Number) });
    expect(await all(app().listDynamicWebhooks())).toEqual([
      {
        id: (registered as { id: number }).id,
        events: EVENTS,
        jqlFilter: site.jql,
        url: sink.url,
        expiresAt: new Date(START + 30 * DAY),
      },
    ]);
  });

  it('answer a filter outside the supported JQL as an error inside the 200, and one URL per app', async () => {
    const results = await app().registerDynamicWebhooks(sink.url, [
      { events: EVENTS, jqlFilter: `${site.jql} AND updated > "2026-01-01"` },
      { events: EVENTS, jqlFilter: site.jql },
    ]);

    expect(results).toEqual([
      { ok: false, errors: ['The clause updated is unsupported'] },
      { ok: true, id: expect.any(Number) },
    ]);
    await expect(
      app().registerDynamicWebhooks('http://127.0.0.1:9/elsewhere', [
        { events: EVENTS, jqlFilter: site.jql },
      ]),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('deliver unsigned, naming the webhook, and expire 30 days on unless refreshed', async () => {
    const [registered] = await app().registerDynamicWebhooks(sink.url, [
      { events: EVENTS, jqlFilter: site.jql },
    ]);
    const id = (registered as { id: number }).id;
    hardware('before');
    await site.webhooksSettled();
    now += 29 * DAY;
    expect(await app().refreshDynamicWebhooks([id])).toEqual(new Date(now + 30 * DAY));
    now += 29 * DAY;
    hardware('refreshed');
    await site.webhooksSettled();
    now += 2 * DAY;
    hardware('expired');
    await site.webhooksSettled();

    expect(payloads().map(({ issue }) => issue.fields.summary)).toEqual(['before', 'refreshed']);
    expect(payloads()[0]).toMatchObject({ matchedWebhookIds: [id] });
    expect(sink.received[0]!.headers['x-hub-signature']).toBeUndefined();
    // An expired webhook is forgotten: the app registers it again.
    expect(await all(app().listDynamicWebhooks())).toEqual([]);
  });
});
