import { createHmac } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { createTestHarness, type TestHarness } from 'approval-connector-kit/testing';
import type { ConnectorWorker } from 'approval-connector-kit/worker';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JiraSimulator } from '../simulator/simulator.js';
import { sourceApprovalId } from '../src/approvals.js';
import { JiraConnector } from '../src/connector.js';
import { JiraClient } from '../src/jira-client.js';

// The Jira example's push path end to end: the simulated Jira delivers its webhooks, over HTTP, to the push ingress
// of a worker of the connector, which registered the webhook itself; the worker pushes to the reference backend.
// Jira's deliveries come duplicated, out of order and dropped, as its retry policy allows, and the service ends
// equal to Jira all the same: at once for what was delivered, at the next scheduled run for what was dropped.
const SECRET = 'a-shared-secret-0123';

let harness: TestHarness;
let site: JiraSimulator;

beforeEach(async () => {
  harness = await createTestHarness();
  // Jira's clock is the wall clock: push health compares the changes' stamps with when push went live.
  site = await JiraSimulator.start({ seed: 13, requests: 6, behaviour: { webhookRetryDelayMs: 10 } });
});

afterEach(async () => {
  await harness.close();
  await site.close();
});

/** A port nothing listens on now: the worker's push port, so that its address is known before it starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A proxy in front of the simulated Jira that counts the calls through it, by method and path. */
async function countingProxy(): Promise<{ url: string; calls: string[]; server: Server }> {
  const calls: string[] = [];
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      calls.push(`${request.method} ${new URL(request.url ?? '/', site.url).pathname}`);
      const { host: _, connection: __, ...headers } = request.headers;
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
      fetch(new URL(request.url ?? '/', site.url), {
        method: request.method,
        headers: headers as Record<string, string>,
        body,
      }).then(
        async (answer) => {
          response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? '' });
          response.end(Buffer.from(await answer.arrayBuffer()));
        },
        () => response.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, calls, server };
}

/** A worker of the connector, which registers its webhook for its push address, after a first sync. */
async function startWorker(
  port?: number,
  missedGraceMs = 60_000,
  jiraUrl = site.url,
): Promise<ConnectorWorker<JiraConnector>> {
  port ??= await freePort();
  const connector = new JiraConnector({
    jira: new JiraClient({ baseUrl: jiraUrl, ...site.syncAccount }),
    jql: site.jql,
    requestTypes: ['10', '11', '12'],
    webhook: 'register',
  });
  const worker = await harness.start(connector, {
    push: { port, publicUrl: `http://127.0.0.1:${port}/push`, secret: SECRET, missedGraceMs },
  });
  await worker.syncNow();
  return worker;
}

/** Every delivery sent (retries included), then every lookup they asked for done. */
async function delivered(worker: ConnectorWorker<JiraConnector>): Promise<void> {
  await site.webhooksSettled();
  await worker.pushSettled();
}

/**
 * What the service should hold, from the site's records rather than through the connector's mapping: each approver
 * of each approval, resolved unless the approval waits for them.
 */
function heldInJira(): Map<string, boolean> {
  const expected = new Map<string, boolean>();
  for (const request of site.requests()) {
    for (const approval of request.approvals) {
      for (const { accountId, decision } of approval.approvers) {
        const id = sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId });
        expected.set(id, approval.finalDecision !== 'pending' || decision !== 'pending');
      }
    }
  }
  return expected;
}

/** Where the service differs from Jira: an approval missing, or resolved otherwise; one of a deleted request open. */
function differences(): string[] {
  const expected = heldInJira();
  const held = new Map(harness.approvals().map(({ id, resolved }) => [id, resolved]));
  const wrong: string[] = [];
  for (const [id, resolved] of expected) {
    if (held.get(id) !== resolved) wrong.push(`${id}: ${held.get(id) ?? 'missing'}, Jira ${resolved}`);
  }
  for (const [id, resolved] of held) {
    if (!expected.has(id) && !resolved) wrong.push(`${id}: open, its request gone from Jira`);
  }
  return wrong;
}

/** The value of a metric of the worker, by name and labels. */
async function metric(worker: ConnectorWorker<JiraConnector>, name: string, labels = ''): Promise<number> {
  const { body } = await worker.metrics.render();
  const line = body.split('\n').find((text) => text.startsWith(`approval_connector_${name}${labels} `));
  return Number(line?.split(' ')[1]);
}

/** A pending approval's approver, to decide it in Jira itself. */
function waiting() {
  for (const request of site.requests()) {
    for (const approval of request.approvals) {
      const approver = approval.approvers.find(({ decision }) => decision === 'pending');
      if (approval.finalDecision === 'pending' && approver !== undefined) {
        return { request, approval, accountId: approver.accountId };
      }
    }
  }
  throw new Error('no approval waits');
}

describe('the Jira example, pushed to', () => {
  it('shows a decision taken in Jira at once, without a sync run, from the webhook it registered itself', async () => {
    const worker = await startWorker();
    const { request, approval, accountId } = waiting();
    const id = sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId });
    expect(harness.approvals().find((held) => held.id === id)?.resolved).toBe(false);

    site.decideInSource(request.key, approval.id, accountId, 'approved');
    await delivered(worker);

    expect(harness.approvals().find((held) => held.id === id)?.resolved).toBe(true);
    expect(worker.pushHealth?.webhook).toMatchObject({ state: 'registered', id: expect.any(String) });
    expect(site.deliveries().map(({ outcome, status }) => [outcome, status])).toEqual([['delivered', 202]]);
  });

  it('ends equal to Jira with every delivery sent three times and in any order, before any sync run', async () => {
    const worker = await startWorker();
    site.behaviour.webhookDuplicates = 2;
    site.behaviour.webhookOrder = 'shuffled';

    for (let round = 0; round < 4; round++) {
      site.advance(5);
      const { request, approval, accountId } = waiting();
      site.decideInSource(request.key, approval.id, accountId, round % 2 === 0 ? 'approved' : 'declined');
    }
    await delivered(worker);

    expect(differences()).toEqual([]);
    // Each delivery taken once (202), its two copies answered as duplicates (200), whichever came first.
    const byIdentifier = Map.groupBy(site.deliveries(), ({ identifier }) => identifier);
    expect(byIdentifier.size).toBeGreaterThan(10);
    for (const attempts of byIdentifier.values()) {
      expect(attempts.map(({ status }) => status).sort()).toEqual([200, 200, 202]);
    }
  });

  it('ends equal to Jira with deliveries dropped, at the next scheduled run, which counts them missed', async () => {
    // Judged at once: no event is in flight once the deliveries have settled.
    const worker = await startWorker(undefined, 0);
    site.behaviour.webhookDropRate = 0.5;
    site.behaviour.webhookOrder = 'reversed';

    site.advance(20);
    await delivered(worker);
    const dropped = site.deliveries().filter(({ outcome }) => outcome === 'dropped');
    expect(dropped.length).toBeGreaterThan(0);
    expect(differences()).not.toEqual([]);

    await worker.syncNow();

    expect(differences()).toEqual([]);
    expect(worker.pushHealth?.missed).toBeGreaterThan(0);
    expect(await metric(worker, 'push_missed_total')).toBe(worker.pushHealth?.missed);
  });

  it('refuses a forged delivery (401), which changes nothing and is counted', async () => {
    const worker = await startWorker();
    const { request, approval, accountId } = waiting();
    const id = sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId });
    const body = JSON.stringify({
      timestamp: Date.now(),
      webhookEvent: 'jira:issue_updated',
      issue: { id: request.id, key: request.key, fields: {} },
    });
    // Decided in Jira, and its delivery lost: only a genuine one would tell the worker.
    site.behaviour.webhookDropRate = 1;
    site.decideInSource(request.key, approval.id, accountId, 'approved');
    await delivered(worker);

    const forged = `sha256=${createHmac('sha256', 'not-the-secret-4567').update(body).digest('hex')}`;
    const answers = [
      await harness.deliver(worker, { body, headers: { 'x-hub-signature': forged } }),
      await harness.deliver(worker, { body }),
    ];

    expect(answers).toEqual([401, 401]);
    expect(harness.approvals().find((held) => held.id === id)?.resolved).toBe(false);
    expect(await metric(worker, 'push_deliveries_total', '{outcome="refused"}')).toBe(2);
  });

  it("reads Jira four times for a change pushed: the request's approvals to name them, then the kit's lookup", async () => {
    const proxy = await countingProxy();
    try {
      const worker = await startWorker(undefined, undefined, proxy.url);
      const { request } = waiting();
      proxy.calls.length = 0;

      site.editRequest(request.key);
      await delivered(worker);

      expect(proxy.calls).toEqual([
        `GET /rest/servicedeskapi/request/${request.id}/approval`,
        `GET /rest/api/3/issue/${request.id}`,
        `GET /rest/servicedeskapi/request/${request.id}/approval`,
        `GET /rest/servicedeskapi/request/${request.id}`,
      ]);
    } finally {
      await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    }
  });

  it('keeps one webhook in Jira for its address, across a restart', async () => {
    const port = await freePort();
    const first = await startWorker(port);
    const registered = first.pushHealth?.webhook?.id;
    await first.stop();
    const again = await startWorker(port);

    const jira = new JiraClient({ baseUrl: site.url, ...site.syncAccount });
    expect((await jira.listAdminWebhooks()).map(({ id }) => id)).toEqual([registered]);
    expect(again.pushHealth?.webhook?.id).toBe(registered);
  });
});
