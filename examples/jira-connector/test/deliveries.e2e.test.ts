import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, type PushContext, type PushDelivery, Secret } from 'approval-connector-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JiraSimulator } from '../simulator/simulator.js';
import { sourceApprovalId } from '../src/approvals.js';
import {
  approvalIdsOfEvent,
  JiraDeliveryError,
  jiraDeliveryId,
  KnownApprovals,
  parseIssueEvent,
  verifyJiraDelivery,
} from '../src/deliveries.js';
import { JiraClient } from '../src/jira-client.js';
import { adminWebhookLifecycle, JiraWebhookSecretMissingError } from '../src/webhook-lifecycle.js';

// The connector's push path, each part on its own, against the simulated Jira over HTTP: deliveries as the site
// sends them, verified, identified and read into the approvals they concern, and the admin webhook's lifecycle.
const SECRET = 'a-shared-secret-0123';
const EVENTS = ['jira:issue_created', 'jira:issue_updated', 'jira:issue_deleted'];

/** Where the site delivers: each delivery as the kit's ingress hands it over (lower-case headers, raw body). */
async function receiver(): Promise<{ url: string; received: PushDelivery[]; server: Server }> {
  const received: PushDelivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ body: Buffer.concat(chunks), headers: headersOf(request.headers) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/push`, received, server };
}

function headersOf(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
  );
}

const silent: Logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  fatal() {},
  child: () => silent,
};

/** A push context as the kit gives it, with the worker's push secret, or none (`null`). */
function context(secret: string | null = SECRET): PushContext {
  return {
    signal: new AbortController().signal,
    logger: silent,
    state: { read: () => undefined, write: async () => {} },
    secret: secret === null ? undefined : new Secret(secret),
  };
}

let site: JiraSimulator;
let sink: Awaited<ReturnType<typeof receiver>>;
let jira: JiraClient;

beforeEach(async () => {
  site = await JiraSimulator.start({ seed: 11, requests: 2 });
  sink = await receiver();
  jira = new JiraClient({ baseUrl: site.url, ...site.syncAccount });
});

afterEach(async () => {
  await site.close();
  await new Promise<void>((resolve) => sink.server.close(() => resolve()));
});

/** Registers the connector's webhook as the kit would at start, and returns what one change delivered. */
async function delivered(change: () => void): Promise<PushDelivery[]> {
  await adminWebhookLifecycle(jira, site.jql).register({ url: sink.url }, context());
  const before = sink.received.length;
  change();
  await site.webhooksSettled();
  return sink.received.slice(before);
}

function travel() {
  const [ada, grace] = site.approvers;
  return site.createRequest('12', {
    summary: 'Conference travel',
    approvers: [ada!.accountId, grace!.accountId],
  });
}

describe('a delivery of the simulated Jira', () => {
  it('is genuine when its signature is the HMAC of its body under the push secret, and only then', async () => {
    const [delivery] = (await delivered(() => travel())) as [PushDelivery];
    const signature = delivery.headers['x-hub-signature']!;
    const tampered = Buffer.from(delivery.body.toString('utf8').replace('Conference', 'Holiday'));
    const forged = `sha256=${'0'.repeat(64)}`;

    expect(verifyJiraDelivery(delivery, new Secret(SECRET))).toBe(true);
    expect(verifyJiraDelivery({ ...delivery, body: tampered }, new Secret(SECRET))).toBe(false);
    expect(
      verifyJiraDelivery({ ...delivery, headers: { 'x-hub-signature': forged } }, new Secret(SECRET)),
    ).toBe(false);
    expect(verifyJiraDelivery({ ...delivery, headers: {} }, new Secret(SECRET))).toBe(false);
    expect(verifyJiraDelivery(delivery, new Secret('another-secret-4567'))).toBe(false);
    expect(verifyJiraDelivery(delivery, undefined)).toBe(false);
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('is identified by X-Atlassian-Webhook-Identifier; without one, it is not', async () => {
    const [delivery] = (await delivered(() => travel())) as [PushDelivery];

    expect(jiraDeliveryId(delivery)).toBe(delivery.headers['x-atlassian-webhook-identifier']);
    expect(jiraDeliveryId({ ...delivery, headers: {} })).toBeUndefined();
    expect(
      jiraDeliveryId({ ...delivery, headers: { 'x-atlassian-webhook-identifier': ' ' } }),
    ).toBeUndefined();
  });

  it('tells its issue event: created, updated and deleted; any other event tells none', async () => {
    const created = travel();
    const deliveries = await delivered(() => {
      site.editRequest(created.issueKey, { summary: 'Conference travel, by train' });
      site.deleteRequest(created.issueKey);
    });
    const events = deliveries.map(({ body }) => parseIssueEvent(body));

    expect(events.map((event) => [event?.webhookEvent, event?.issueKey])).toEqual([
      ['jira:issue_updated', created.issueKey],
      ['jira:issue_deleted', created.issueKey],
    ]);
    expect(events[0]?.issueId).toMatch(/^\d+$/);
    expect(
      parseIssueEvent(Buffer.from('{"webhookEvent":"sprint_started","sprint":{"id":1}}')),
    ).toBeUndefined();
  });

  it('that is not an issue event Jira documents is malformed: a JiraDeliveryError, which the kit counts', () => {
    const bodies = [
      'not json',
      '[]',
      '{"webhookEvent":"jira:issue_updated"}',
      '{"issue":{"id":"1","key":"A-1"}}',
    ];

    for (const body of bodies) expect(() => parseIssueEvent(Buffer.from(body))).toThrow(JiraDeliveryError);
    expect(() =>
      parseIssueEvent(Buffer.from('{"webhookEvent":"jira:issue_created","issue":{"id":"../1","key":"A-1"}}')),
    ).toThrow(JiraDeliveryError);
  });
});

describe('the approvals a delivery concerns', () => {
  it('of a created request: each approver of each approval Jira lists, read as the sync account', async () => {
    const [delivery] = (await delivered(() => travel())) as [PushDelivery];
    const event = parseIssueEvent(delivery.body)!;
    const request = site.request(event.issueId)!;
    const [approval] = request.approvals;

    const ids = await approvalIdsOfEvent(event, jira, new KnownApprovals());

    expect(ids.sort()).toEqual(
      approval!.approvers
        .map(({ accountId }) =>
          sourceApprovalId({ issueId: request.id, approvalId: approval!.id, accountId }),
        )
        .sort(),
    );
  });

  it('of a deleted request: those read of it before, as Jira can no longer be asked; none when none were', async () => {
    const created = travel();
    const request = site.request(created.issueKey)!;
    const [deletion] = (await delivered(() => site.deleteRequest(created.issueKey))) as [PushDelivery];
    const event = parseIssueEvent(deletion.body)!;
    const stale = sourceApprovalId({ issueId: request.id, approvalId: '999', accountId: 'gone' });
    const known = new KnownApprovals();
    known.read([{ id: stale }]);

    expect(await approvalIdsOfEvent(event, jira, known)).toEqual([stale]);
    expect(await approvalIdsOfEvent(event, jira, new KnownApprovals())).toEqual([]);
    // An update of a request deleted since: Jira answers 404, and the approvals read before are named.
    expect(await approvalIdsOfEvent({ ...event, webhookEvent: 'jira:issue_updated' }, jira, known)).toEqual([
      stale,
    ]);
  });

  it('of an updated request: what Jira lists now, and what was read of it before, such as an approver removed', async () => {
    const created = travel();
    const request = site.request(created.issueKey)!;
    const [edit] = (await delivered(() => site.editRequest(created.issueKey))) as [PushDelivery];
    const removed = sourceApprovalId({
      issueId: request.id,
      approvalId: request.approvals[0]!.id,
      accountId: 'x',
    });
    const known = new KnownApprovals();
    known.read([{ id: removed }]);

    const ids = await approvalIdsOfEvent(parseIssueEvent(edit.body)!, jira, known);

    expect(ids).toHaveLength(3);
    expect(ids).toContain(removed);
  });
});

describe('KnownApprovals', () => {
  const id = (issueId: number, accountId = 'a') =>
    sourceApprovalId({ issueId: String(issueId), approvalId: '1', accountId });

  it('keeps the approvals of the issues read last, as many issues as it is given', () => {
    const known = new KnownApprovals(2);
    known.read([{ id: id(1) }, { id: id(2) }, { id: id(1, 'b') }]);
    known.read([{ id: id(3) }]);

    expect(known.of('1')).toEqual([id(1), id(1, 'b')]);
    expect(known.of('2')).toEqual([]);
    expect(known.of('3')).toEqual([id(3)]);
  });

  it('keeps those of the last 10 000 issues by default, as the README says', () => {
    const known = new KnownApprovals();
    known.read(Array.from({ length: 10_001 }, (_, index) => ({ id: id(index + 1) })));

    expect(known.of('1')).toEqual([]);
    expect(known.of('2')).toEqual([id(2)]);
  });

  it('forgets the approvals Jira no longer has, and ids that are not of this connector', () => {
    const known = new KnownApprovals();
    known.read([{ id: id(1) }, { id: id(1, 'b') }, { id: 'not-a-jira-id' }]);
    known.gone([id(1, 'b'), 'not-a-jira-id']);

    expect(known.of('1')).toEqual([id(1)]);
  });
});

describe("the connector's admin webhook", () => {
  const lifecycle = () => adminWebhookLifecycle(jira, site.jql);

  it('is registered once, whatever the restarts and replicas, with the events, the JQL and the secret', async () => {
    const first = await lifecycle().register({ url: sink.url }, context());
    const again = await lifecycle().register({ url: sink.url }, context());
    const racing = await Promise.all(
      [1, 2, 3].map(() => lifecycle().register({ url: 'http://127.0.0.1:9/x' }, context())),
    );

    expect(again).toEqual(first);
    expect(new Set(racing.map(({ id }) => id)).size).toBe(1);
    const listed = await jira.listAdminWebhooks();
    expect(listed.map(({ url }) => url).sort()).toEqual([sink.url, 'http://127.0.0.1:9/x'].sort());
    expect(listed.find(({ id }) => id === first.id)).toMatchObject({
      events: EVENTS,
      jql: site.jql,
      enabled: true,
    });
    expect(first).toEqual({
      id: expect.stringMatching(/^\d+$/),
      data: { url: sink.url, name: expect.any(String) },
    });
  });

  it('is registered again when Jira no longer has it, or holds it for another address', async () => {
    const registration = await lifecycle().register({ url: sink.url }, context());

    expect(await lifecycle().exists!(registration, context())).toBe(true);
    await jira.deleteAdminWebhook(registration.id);
    expect(await lifecycle().exists!(registration, context())).toBe(false);
    const moved = await jira.registerAdminWebhook({
      name: 'moved',
      url: 'http://127.0.0.1:9/elsewhere',
      events: EVENTS,
      jql: site.jql,
    });
    expect(await lifecycle().exists!({ ...registration, id: moved.id }, context())).toBe(false);
  });

  it('has its filter, events and secret set again by a registration, whatever an administrator changed', async () => {
    const registration = await lifecycle().register({ url: sink.url }, context());
    await jira.updateAdminWebhook(registration.id, {
      name: 'edited',
      url: sink.url,
      events: ['jira:issue_deleted'],
      jql: `${site.jql} AND status = "Waiting for approval"`,
      secret: 'changed-by-an-admin',
    });

    const again = await lifecycle().register({ url: sink.url }, context());
    const deliveries = await delivered(() => travel());

    expect(again.id).toBe(registration.id);
    expect(await jira.getAdminWebhook(registration.id)).toMatchObject({ events: EVENTS, jql: site.jql });
    expect(deliveries.every((delivery) => verifyJiraDelivery(delivery, new Secret(SECRET)))).toBe(true);
  });

  it('is deleted by unregister, and never on a stop of one of the workers that share it', async () => {
    const registration = await lifecycle().register({ url: sink.url }, context());
    await lifecycle().unregister!(registration, context());

    expect(await jira.listAdminWebhooks()).toEqual([]);
    expect(lifecycle().unregisterOnStop).toBe(false);
  });

  it('needs the push secret, and a Jira administrator: refused before anything is registered', async () => {
    const ada = site.accounts.find(({ email }) => email === 'ada@example.com')!;

    await expect(lifecycle().register({ url: sink.url }, context(null))).rejects.toBeInstanceOf(
      JiraWebhookSecretMissingError,
    );
    await expect(
      adminWebhookLifecycle(jira.withCredentials(ada), site.jql).register({ url: sink.url }, context()),
    ).rejects.toMatchObject({ status: 403 });
    expect(await jira.listAdminWebhooks()).toEqual([]);
  });
});
