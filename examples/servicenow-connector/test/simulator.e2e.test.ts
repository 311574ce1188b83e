import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyFailure } from 'approval-connector-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceNowSimulator } from '../simulator/simulator.js';
import { ServiceNowClient } from '../src/client.js';
import { APPROVER_FIELDS, ApproverRecord } from '../src/model.js';
import { deliveryIdOf, parseDelivery, verifyDelivery } from '../src/push.js';

// The simulated instance over HTTP, as the Table API answers: its paging, its ACLs, its display values, its errors,
// each of its switches, its activity, and the business rules' callouts.
let now = Date.parse('2026-03-02T09:00:00.000Z');
let simulator: ServiceNowSimulator;

beforeEach(async () => {
  now = Date.parse('2026-03-02T09:00:00.000Z');
  simulator = await ServiceNowSimulator.start({ seed: 5, now: () => now, requests: 6 });
});

afterEach(async () => {
  await simulator.close();
});

const APPROVALS = '/api/now/table/sysapproval_approver';

/** A call to the instance, as the user given (the integration user by default). */
async function call(
  path: string,
  init: { method?: string; body?: unknown; user?: { username: string; password: string } } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const { username, password } = init.user ?? simulator.integrationUser;
  const answer = await fetch(`${simulator.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return {
    status: answer.status,
    headers: answer.headers,
    body: (await answer.json()) as Record<string, unknown>,
  };
}

function approverOf(approval: Record<string, string>) {
  const approver = simulator.approvers.find(({ sysId }) => sysId === approval.approver)!;
  return { username: approver.username, password: approver.password };
}

describe('the Table API', () => {
  it('pages as the documentation says: Link (first, prev, next, last) and X-Total-Count, sysparm_limit before the ACLs', async () => {
    const [first, second] = simulator.records('sysapproval_approver');
    simulator.hide(second!.sys_id!);

    const page = await call(
      `${APPROVALS}?sysparm_fields=sys_id&sysparm_limit=2&sysparm_offset=0&sysparm_query=ORDERBYsys_created_on`,
    );
    const all = simulator.records('sysapproval_approver').length;

    expect(page.body.result).toEqual([{ sys_id: first!.sys_id }]);
    expect(page.headers.get('x-total-count')).toBe(String(all));
    const links = [...(page.headers.get('link') ?? '').matchAll(/<([^>]+)>;rel="(\w+)"/g)].map(
      ([, url, rel]) => [rel, new URL(url!).searchParams.get('sysparm_offset')],
    );
    expect(links).toEqual([
      ['first', '0'],
      ['next', '2'],
      ['last', String(Math.floor((all - 1) / 2) * 2)],
    ]);
  });

  it("answers display values as the reader reads them: choices' labels, references' names, date-times in their time zone", async () => {
    const [approval] = simulator.records('sysapproval_approver');
    const user = approverOf(approval!);
    const url = `${APPROVALS}/${approval!.sys_id}?sysparm_display_value=all&sysparm_fields=state,approver,sys_created_on`;

    const asIntegration = (await call(url)).body.result as Record<string, Record<string, string>>;
    const asApprover = (await call(url, { user })).body.result as Record<string, Record<string, string>>;

    expect(asIntegration.state).toEqual({ value: 'requested', display_value: 'Requested' });
    expect(asIntegration.approver).toMatchObject({
      value: approval!.approver,
      display_value: simulator.approvers.find(({ sysId }) => sysId === approval!.approver)!.name,
      link: `${simulator.url}/api/now/table/sys_user/${approval!.approver}`,
    });
    // The integration user reads date-times in GMT, an approver in theirs (or the instance's).
    expect(asIntegration.sys_created_on).toEqual({
      value: approval!.sys_created_on,
      display_value: approval!.sys_created_on,
    });
    expect(asApprover.sys_created_on!.value).toBe(approval!.sys_created_on);
    expect(asApprover.sys_created_on!.display_value).not.toBe(approval!.sys_created_on);
  });

  it('refuses a wrong password, and a locked-out user, 401 in its error body', async () => {
    const [approval] = simulator.records('sysapproval_approver');
    const user = approverOf(approval!);
    simulator.lockOut(user.username);

    const wrong = await call(APPROVALS, { user: { ...user, password: 'nope' } });
    const locked = await call(APPROVALS, { user });

    for (const answer of [wrong, locked]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        error: { message: 'User Not Authenticated', detail: 'Required to provide Auth information' },
        status: 'failure',
      });
    }
    simulator.unlock(user.username);
    expect((await call(APPROVALS, { user })).status).toBe(200);
  });

  it("shows an approver their own approvals only, and lets them update only those, and only as the instance's rules allow", async () => {
    const approvals = simulator.records('sysapproval_approver');
    const mine = approvals[0]!;
    const user = approverOf(mine);
    const others = approvals.filter(({ approver }) => approver !== mine.approver);

    const listed = (
      await call(`${APPROVALS}?sysparm_fields=approver&sysparm_exclude_reference_link=true`, { user })
    ).body.result as {
      approver: string;
    }[];
    const foreign = await call(`${APPROVALS}/${others[0]!.sys_id}`, {
      method: 'PATCH',
      body: { state: 'approved' },
      user,
    });
    const bySync = await call(`${APPROVALS}/${mine.sys_id}`, {
      method: 'PATCH',
      body: { state: 'approved' },
    });
    const invented = await call(`${APPROVALS}/${mine.sys_id}`, {
      method: 'PATCH',
      body: { state: 'approve' },
      user,
    });

    expect(new Set(listed.map(({ approver }) => approver))).toEqual(new Set([mine.approver]));
    expect(foreign.status).toBe(404);
    expect(bySync).toMatchObject({
      status: 403,
      body: {
        error: {
          message: 'Operation Failed',
          detail: 'ACL Exception Update Failed due to security constraints',
        },
      },
    });
    expect(invented.status).toBe(400);
  });

  it("decides as the workflow's rule says: one rejection rejects the record, and the others are no longer required", async () => {
    const { sysId, approvals } = simulator.raise({
      table: 'change_request',
      approvers: [simulator.approvers[0]!.sysId, simulator.approvers[1]!.sysId],
    });
    const [first, second] = approvals;

    const answer = await call(`${APPROVALS}/${first}`, {
      method: 'PATCH',
      body: { state: 'rejected', comments: 'Not now' },
      user: { username: simulator.approvers[0]!.username, password: simulator.approvers[0]!.password },
    });

    expect(answer.status).toBe(200);
    const states = Object.fromEntries(
      simulator.records('sysapproval_approver').map((row) => [row.sys_id, row.state]),
    );
    expect([states[first!], states[second!]]).toEqual(['rejected', 'not_required']);
    expect(simulator.records('change_request').find(({ sys_id }) => sys_id === sysId)).toMatchObject({
      approval: 'rejected',
    });
    expect(simulator.comments()).toEqual([
      { approval: first, userName: simulator.approvers[0]!.username, text: 'Not now' },
    ]);
  });

  it('answers what it does not implement 400, in its error body: a parameter, a table, a query it does not read', async () => {
    const answers = await Promise.all([
      call(`${APPROVALS}?sysparm_order_by=sys_id`),
      call('/api/now/table/no_such_table'),
      call(`${APPROVALS}?sysparm_query=sys_idINjavascript:gs.getUserID()`),
      call('/api/now/stats/sysapproval_approver'),
    ]);

    expect(answers.map(({ status }) => status)).toEqual([400, 400, 400, 400]);
    for (const { body } of answers)
      expect(body).toMatchObject({ error: { message: expect.any(String) }, status: 'failure' });
    // As the instance does, a condition on a field the table has not is ignored.
    expect((await call(`${APPROVALS}?sysparm_query=no_such_field=1`)).body.result).toHaveLength(
      simulator.records('sysapproval_approver').length,
    );
  });
});

describe('the switches', () => {
  const client = () => new ServiceNowClient({ instanceUrl: simulator.url, ...simulator.integrationUser });

  it('pageCap: pages no longer than the cap, the Link to the next page after the records answered', async () => {
    simulator.behaviour.pageCap = 2;

    const page = await client().page(
      { table: 'sysapproval_approver', query: '', fields: ['sys_id'], limit: 5 },
      ApproverRecord.pick({ sys_id: true }),
    );

    expect(page.records).toHaveLength(2);
    expect(page.next?.searchParams.get('sysparm_offset')).toBe('2');
  });

  it('collisions: every change shares one second of sys_updated_on while on', () => {
    simulator.behaviour.collisions = true;
    now += 5_000;
    const first = simulator.raise();
    now += 5_000;
    const second = simulator.raise();
    simulator.behaviour.collisions = false;
    now += 5_000;
    const third = simulator.raise();

    const stamp = (id: string) =>
      simulator.records('sysapproval_approver').find(({ sys_id }) => sys_id === id)!.sys_updated_on;
    expect(stamp(first.approvals[0]!)).toBe(stamp(second.approvals[0]!));
    expect(stamp(third.approvals[0]!)).not.toBe(stamp(first.approvals[0]!));
  });

  it('changesWhilePaging: before a list call after another, the first record that call answered changes', async () => {
    simulator.behaviour.changesWhilePaging = 1;
    const request = {
      table: 'sysapproval_approver',
      query: 'ORDERBYsys_updated_on',
      fields: APPROVER_FIELDS,
      limit: 2,
    };

    const first = await client().page(request, ApproverRecord);
    const before = first.records[0]!;
    now += 1000;
    await client().page(first.next!, ApproverRecord);

    const after = simulator
      .records('sysapproval_approver')
      .find(({ sys_id }) => sys_id === before.sys_id.value)!;
    expect(after.sys_mod_count).toBe(String(Number(before.sys_mod_count.value) + 1));
    expect(after.sys_updated_on).not.toBe(before.sys_updated_on.value);
    expect(simulator.behaviour.changesWhilePaging).toBe(0);
  });

  it('rateLimit: a call that finds the bucket empty is a 429 with Retry-After and the rate limit headers', async () => {
    simulator.behaviour.rateLimit = { capacity: 2, refillPerSecond: 0.001 };

    const answers = [await call(APPROVALS), await call(APPROVALS), await call(APPROVALS)];

    expect(answers.map(({ status }) => status)).toEqual([200, 200, 429]);
    const limited = answers[2]!;
    expect(limited.body).toEqual({
      error: {
        message: 'Rate limit exceeded',
        detail: 'Rate limit of 2 requests per hour for Table API exceeded',
      },
      status: 'failure',
    });
    expect(
      Object.fromEntries(
        ['retry-after', 'x-ratelimit-limit'].map((name) => [name, limited.headers.get(name)]),
      ),
    ).toEqual({
      'retry-after': '1000',
      'x-ratelimit-limit': '2',
    });
    expect(limited.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    expect(limited.headers.get('x-ratelimit-rule')).toMatch(/^[0-9a-f]{32}$/);
    expect(simulator.rateLimited).toBe(1);
  });

  it('aclRefusesUpdates: every update a 403 of an ACL', async () => {
    const [approval] = simulator.waitingApprovals();
    simulator.behaviour.aclRefusesUpdates = true;

    const answer = await call(`${APPROVALS}/${approval!.sys_id}`, {
      method: 'PATCH',
      body: { state: 'approved' },
      user: approverOf(approval!),
    });

    expect(answer.status).toBe(403);
    expect(simulator.waitingApprovals().map(({ sys_id }) => sys_id)).toContain(approval!.sys_id);
  });

  it("cancelDuringDecision: the approval is cancelled on the decision's way, and the instance keeps it cancelled: 403", async () => {
    const [approval] = simulator.waitingApprovals();
    simulator.behaviour.cancelDuringDecision = true;

    const answer = await call(`${APPROVALS}/${approval!.sys_id}`, {
      method: 'PATCH',
      body: { state: 'approved' },
      user: approverOf(approval!),
    });

    expect(answer).toMatchObject({ status: 403, body: { error: { message: 'Operation Failed' } } });
    expect(
      simulator.records('sysapproval_approver').find(({ sys_id }) => sys_id === approval!.sys_id),
    ).toMatchObject({
      state: 'cancelled',
    });
  });

  it('goOffline: the port refuses connections, which the kit classifies serviceUnavailable, until it is back', async () => {
    const online = await simulator.goOffline();

    const error = await client()
      .page(
        { table: 'sys_user', query: '', fields: ['sys_id'], limit: 1 },
        ApproverRecord.pick({ sys_id: true }),
      )
      .catch((caught: unknown) => caught);
    await online();

    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(classifyFailure(error).status).toBe('serviceUnavailable');
    expect((await call('/api/now/table/sys_user?sysparm_limit=1')).status).toBe(200);
  });

  it("disrupt('hang'): no answer; the client gives up at timeoutMs with its deadline's TimeoutError, serviceUnavailable", async () => {
    const restore = simulator.disrupt('hang', { calls: ['userList'] });

    const error = await new ServiceNowClient({
      instanceUrl: simulator.url,
      ...simulator.integrationUser,
      timeoutMs: 50,
    })
      .page(
        { table: 'sys_user', query: '', fields: ['sys_id'], limit: 1 },
        ApproverRecord.pick({ sys_id: true }),
      )
      .catch((caught: unknown) => caught);
    restore();

    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(classifyFailure(error).status).toBe('serviceUnavailable');
  });

  it('disrupt: a fault on the calls it names only, as many times as asked', async () => {
    const restore = simulator.disrupt({ status: 503 }, { calls: ['approvalRead'], times: 2 });
    const [approval] = simulator.records('sysapproval_approver');

    const statuses = [];
    for (let index = 0; index < 3; index += 1)
      statuses.push((await call(`${APPROVALS}/${approval!.sys_id}`)).status);
    const list = await call(APPROVALS);
    restore();

    expect(statuses).toEqual([503, 503, 200]);
    expect(list.status).toBe(200);
  });
});

describe('the activity', () => {
  it('draws the same records and steps from the same seed', async () => {
    const other = await ServiceNowSimulator.start({ seed: 5, now: () => now, requests: 6 });
    try {
      const events = simulator.advance(12);
      expect(other.advance(12)).toEqual(events);
      expect(other.records('sysapproval_approver')).toEqual(simulator.records('sysapproval_approver'));
      expect(new Set(events.map(({ kind }) => kind))).toEqual(
        new Set(['raised', 'ordered', 'edited', 'decided', 'cancelled']),
      );
    } finally {
      await other.close();
    }
  });
});

describe("the push path's business rules", () => {
  const SECRET = 'push-secret-0042';
  let target: Server;
  let received: { headers: Record<string, string | undefined>; body: Buffer }[];

  beforeEach(async () => {
    received = [];
    target = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers as Record<string, string>, body: Buffer.concat(chunks) });
        response.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    simulator.setPushTarget({
      url: `http://127.0.0.1:${(target.address() as AddressInfo).port}/push`,
      secret: SECRET,
    });
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => target.close(() => resolve()));
  });

  /** What each callout received names, in order: the table, the record and the operation. */
  const named = () =>
    received.map((delivery) => {
      const { table, sys_id, operation } = parseDelivery(delivery);
      return [table, sys_id, operation];
    });

  it('posts each insert, update and delete of an approval record, signed as the rule signs it, which the connector verifies', async () => {
    const { approvals } = simulator.raise({
      table: 'sc_req_item',
      approvers: [simulator.approvers[2]!.sysId, simulator.approvers[3]!.sysId],
    });
    now += 2000;
    simulator.decideInServiceNow(approvals[0]!, 'approved');
    simulator.delete('sysapproval_approver', approvals[1]!);
    await simulator.callouts.settled();

    const decided = simulator.records('sysapproval_approver').find(({ sys_id }) => sys_id === approvals[0])!;
    expect(JSON.parse(received[2]!.body.toString())).toEqual({
      table: 'sysapproval_approver',
      sys_id: approvals[0],
      operation: 'update',
      sys_updated_on: decided.sys_updated_on,
      sys_mod_count: '1',
    });
    expect(named()).toEqual([
      ['sysapproval_approver', approvals[0], 'insert'],
      ['sysapproval_approver', approvals[1], 'insert'],
      ['sysapproval_approver', approvals[0], 'update'],
      ['sysapproval_approver', approvals[1], 'delete'],
    ]);
    for (const delivery of received) {
      expect(verifyDelivery(delivery, SECRET)).toBe(true);
      expect(verifyDelivery(delivery, 'another-secret')).toBe(false);
      expect(deliveryIdOf(delivery)).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(new Set(received.map(deliveryIdOf)).size).toBe(4);
    expect(simulator.callouts.deliveries().map(({ outcome }) => outcome)).toEqual([202, 202, 202, 202]);
  });

  it('posts each update of an approved record, and the deletion of its approval records with it, not the record itself', async () => {
    const { sysId, approvals } = simulator.raise({
      table: 'change_request',
      approvers: [simulator.approvers[0]!.sysId, simulator.approvers[1]!.sysId],
    });
    await simulator.callouts.settled();
    received.length = 0;
    simulator.retitle('change_request', sysId, 'Patch the VPN, both sites');
    simulator.decideInServiceNow(approvals[0]!, 'rejected');
    simulator.delete('change_request', sysId);
    await simulator.callouts.settled();

    expect(named()).toEqual([
      ['change_request', sysId, 'update'],
      ['sysapproval_approver', approvals[0], 'update'],
      // The workflow's rule: the other approver is no longer required, and the change is rejected.
      ['sysapproval_approver', approvals[1], 'update'],
      ['change_request', sysId, 'update'],
      ['sysapproval_approver', approvals[0], 'delete'],
      ['sysapproval_approver', approvals[1], 'delete'],
    ]);
    expect(received.every((delivery) => verifyDelivery(delivery, SECRET))).toBe(true);
  });

  it('sends a callout twice, the same delivery, when duplicates are on; none of the next when drops are set', async () => {
    simulator.callouts.behaviour.duplicates = true;
    const duplicated = simulator.raise({ approvers: [simulator.approvers[0]!.sysId] });
    simulator.callouts.behaviour.duplicates = false;
    simulator.callouts.behaviour.drops = 1;
    const dropped = simulator.raise({ approvers: [simulator.approvers[0]!.sysId] });
    await simulator.callouts.settled();

    const ids = received.map((delivery) => deliveryIdOf(delivery));
    expect(named().map(([, sysId]) => sysId)).toEqual([duplicated.approvals[0], duplicated.approvals[0]]);
    expect(ids[0]).toBe(ids[1]);
    expect(received[0]!.body.equals(received[1]!.body)).toBe(true);
    expect(simulator.callouts.dropped()).toEqual([
      { table: 'sysapproval_approver', sysId: dropped.approvals[0], operation: 'insert' },
    ]);
    expect(simulator.callouts.deliveries().map(({ sysId }) => sysId)).not.toContain(dropped.approvals[0]);
  });
});
