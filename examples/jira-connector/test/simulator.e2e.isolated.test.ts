import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { classifyFailure, type SourceApproval } from 'approval-connector-kit';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JiraSimulator, type SimulatedRequest, type SimulatorEvent } from '../simulator/simulator.js';
import { changedApprovals, isPendingFor, lookupApprovals, sourceApprovalId } from '../src/approvals.js';
import { JiraHttpError, JiraTimeoutError } from '../src/errors.js';
import { JiraClient, type JiraCredentials } from '../src/jira-client.js';

const START = Date.parse('2026-03-02T09:00:00.000Z');
const MINUTE = 60_000;

let now: number;
let simulator: JiraSimulator;
let jira: JiraClient;

beforeEach(async () => {
  now = START;
  simulator = await JiraSimulator.start({ seed: 7, now: () => now, requests: 10 });
  jira = new JiraClient({ baseUrl: simulator.url, ...simulator.syncAccount });
});

afterEach(async () => {
  await simulator.close();
});

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const list: T[] = [];
  for await (const item of items) list.push(item);
  return list;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** The service approval ids the simulated site's requests should give: one per approver of each approval. */
function idsOf(requests: readonly SimulatedRequest[]): string[] {
  return requests
    .flatMap(({ id, approvals }) =>
      approvals.flatMap((approval) =>
        approval.approvers.map(({ accountId }) =>
          sourceApprovalId({ issueId: id, approvalId: approval.id, accountId }),
        ),
      ),
    )
    .sort();
}

function credentialsOf(accountId: string): JiraCredentials {
  const account = simulator.accounts.find((candidate) => candidate.accountId === accountId)!;
  return { email: account.email, apiToken: account.apiToken };
}

/** An approval of the simulated site that waits for one of its approvers. */
function waitingApproval() {
  for (const request of simulator.requests()) {
    for (const approval of request.approvals) {
      const approver = approval.approvers.find(({ decision }) => decision === 'pending');
      if (approval.finalDecision === 'pending' && approver !== undefined) {
        return { request, approval, accountId: approver.accountId };
      }
    }
  }
  throw new Error('the seed gave no waiting approval');
}

describe('the client against the simulated Jira: the sync reads', () => {
  it('reads every approval of every request across search pages, in the order of their update', async () => {
    const read = await all(changedApprovals(jira, simulator.jql, undefined, { pageSize: 3 }));

    expect(simulator.requests().length).toBeGreaterThan(3); // so the search had several pages
    expect(read.map(({ id }) => id).sort()).toEqual(idsOf(simulator.requests()));
    const stamps = read.map(({ lastModified }) => new Date(lastModified!).getTime());
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    for (const approval of read) {
      const [issueId, approvalId] = approval.id.split('.');
      const held = simulator.request(issueId!)!.approvals.find(({ id }) => id === approvalId)!;
      const own = held.approvers.find(({ accountId }) => accountId === approval.approver)!;
      expect(approval.resolved).toBe(held.finalDecision !== 'pending' || own.decision !== 'pending');
    }
  });

  it("reads only the requests updated since an instant, written in the sync account's time zone", async () => {
    const site = await JiraSimulator.start({ seed: 3, now: () => now, requests: 0 });
    try {
      const client = new JiraClient({ baseUrl: site.url, ...site.syncAccount });
      const keyOf = (event: SimulatorEvent) => (event.type === 'created' ? event.issueKey : '');
      const edited = keyOf(site.createRequest('10')); // 09:00Z
      now += 40 * MINUTE;
      const before = keyOf(site.createRequest('11')); // 09:40Z: before the window
      now += 10 * MINUTE + 30_000;
      const sameMinute = keyOf(site.createRequest('12')); // 09:50:30Z
      const since = new Date(now);
      now += 10 * MINUTE;
      site.editRequest(edited);
      const created = keyOf(site.createRequest('10'));

      const changes = await all(changedApprovals(client, site.jql, since));

      // JQL has minutes, so the window starts at 09:50Z, "10:50" in Berlin where the sync account is. Written as
      // "09:50", Jira would read 08:50Z, an hour early, and find the request of 09:40Z too.
      const keys = new Set(changes.map(({ data }) => data.issueKey));
      expect([...keys].sort()).toEqual([edited, sameMinute, created].sort());
      expect(keys).not.toContain(before);
      expect(changes.map(({ id }) => id).sort()).toEqual(
        idsOf(site.requests().filter(({ key }) => keys.has(key))),
      );
    } finally {
      await site.close();
    }
  });
});

describe('the client against the simulated Jira: decisions', () => {
  it("carries an approver's decision into Jira, where it is recorded, and reads it back resolved", async () => {
    const { request: held, approval, accountId } = waitingApproval();
    const asApprover = jira.withCredentials(credentialsOf(accountId));
    expect(isPendingFor(await asApprover.getApproval(held.key, approval.id), accountId)).toBe(true);
    now += MINUTE;

    const answered = await asApprover.answerApproval(held.key, approval.id, 'approve');

    expect(
      answered.approvers.find(({ approver }) => approver.accountId === accountId)?.approverDecision,
    ).toBe('approved');
    expect(simulator.decisions({ via: 'api' })).toEqual([
      {
        type: 'decided',
        issueKey: held.key,
        approvalId: approval.id,
        accountId,
        decision: 'approved',
        via: 'api',
      },
    ]);
    const id = sourceApprovalId({ issueId: held.id, approvalId: approval.id, accountId });
    const read = await all(changedApprovals(jira, simulator.jql, new Date(now)));
    expect(read.find((record) => record.id === id)).toMatchObject({
      resolved: true,
      lastModified: new Date(now),
    });
  });

  it('refuses a second answer with a 409, a systemError, and the precheck sees the decision', async () => {
    const { request: held, approval, accountId } = waitingApproval();
    const asApprover = jira.withCredentials(credentialsOf(accountId));
    await asApprover.answerApproval(held.key, approval.id, 'decline');

    const error = await rejection(asApprover.answerApproval(held.key, approval.id, 'approve'));

    expect(error).toBeInstanceOf(JiraHttpError);
    expect(error).toMatchObject({
      status: 409,
      errorMessages: [expect.stringContaining('already answered')],
    });
    expect(classifyFailure(error).status).toBe('systemError');
    expect(isPendingFor(await asApprover.getApproval(held.key, approval.id), accountId)).toBe(false);
    expect(simulator.decisions({ via: 'api' })).toHaveLength(1);
  });

  it("lets only the approval's approvers answer it: 403 for an agent, 404 for a stranger to the request", async () => {
    const { request: held, approval } = waitingApproval();
    const stranger = simulator.approvers.find(
      ({ accountId }) =>
        !held.approvals.some(({ approvers }) => approvers.some((a) => a.accountId === accountId)),
    )!;

    const byAgent = await rejection(jira.answerApproval(held.key, approval.id, 'approve'));
    const byStranger = await rejection(
      jira
        .withCredentials(credentialsOf(stranger.accountId))
        .answerApproval(held.key, approval.id, 'approve'),
    );

    expect(byAgent).toMatchObject({ status: 403 });
    expect(classifyFailure(byAgent).status).toBe('authenticationError');
    expect(byStranger).toMatchObject({ status: 404 });
    expect(simulator.decisions({ via: 'api' })).toEqual([]);
  });
});

describe('the client against the simulated Jira: refusals and failures', () => {
  it("refuses a wrong API token with a 401 and Jira's login reason, an authenticationError", async () => {
    const { email } = simulator.syncAccount;
    const wrong = new JiraClient({ baseUrl: simulator.url, email, apiToken: 'ATATT3xFfGF0-not-the-token' });

    const error = await rejection(wrong.myself());
    const raw = await request(`${simulator.url}/rest/api/3/myself`, {
      headers: { authorization: `Basic ${Buffer.from(`${email}:wrong`).toString('base64')}` },
    });
    await raw.body.dump();

    expect(error).toMatchObject({ status: 401 });
    expect(classifyFailure(error).status).toBe('authenticationError');
    expect(raw.statusCode).toBe(401);
    expect(raw.headers['x-seraph-loginreason']).toBe('AUTHENTICATED_FAILED');
  });

  it("refuses an approver's expired API token with a 401, and nothing is answered", async () => {
    const { request: held, approval, accountId } = waitingApproval();
    const credentials = credentialsOf(accountId);
    simulator.expireToken(credentials.email);

    const error = await rejection(
      jira.withCredentials(credentials).answerApproval(held.key, approval.id, 'approve'),
    );

    expect(error).toMatchObject({ status: 401 });
    expect(simulator.decisions({ via: 'api' })).toEqual([]);
    expect(simulator.request(held.key)!.approvals.find(({ id }) => id === approval.id)!.finalDecision).toBe(
      'pending',
    );
  });

  it('answers a 404 for a deleted request, and the lookup leaves its approvals out', async () => {
    const before = await all(changedApprovals(jira, simulator.jql, undefined));
    const { request: deleted, approval } = waitingApproval();
    simulator.deleteRequest(deleted.key);

    const error = await rejection(jira.getApproval(deleted.key, approval.id));
    const looked = await all(
      lookupApprovals(
        jira,
        before.map(({ id }) => id),
      ),
    );

    expect(error).toMatchObject({ status: 404 });
    expect(classifyFailure(error).status).toBe('systemError');
    expect(looked.map(({ id }) => id).sort()).toEqual(
      before
        .map(({ id }) => id)
        .filter((id) => !id.startsWith(`${deleted.id}.`))
        .sort(),
    );
  });

  it('answers a rate limit with a 429 and Retry-After, read into retryAfterMs, then serves again', async () => {
    simulator.failNext({ status: 429, retryAfterSeconds: 7 });
    const once = new JiraClient({ baseUrl: simulator.url, ...simulator.syncAccount, rateLimitRetries: 0 });

    const error = await rejection(once.myself());

    expect(error).toMatchObject({ status: 429, retryAfterMs: 7000 });
    expect(classifyFailure(error).status).toBe('serviceUnavailable');
    await expect(once.myself()).resolves.toMatchObject({ accountId: simulator.syncAccount.accountId });
  });

  it('answers 429 with Retry-After and X-RateLimit-Reset once the rate limit has no call left for it', async () => {
    simulator.behaviour.rateLimit = { capacity: 2, refillPerSecond: 0.5 };
    const once = new JiraClient({ baseUrl: simulator.url, ...simulator.syncAccount, rateLimitRetries: 0 });

    await once.myself();
    await once.myself();
    const answer = await fetch(`${simulator.url}/rest/api/3/myself`);

    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('2');
    expect(answer.headers.get('x-ratelimit-reset')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(answer.headers.get('ratelimit-reason')).toBe('jira-quota-based');
    expect(simulator.rateLimited).toBe(1);
    simulator.behaviour.rateLimit = undefined;
    await expect(once.myself()).resolves.toMatchObject({ accountId: simulator.syncAccount.accountId });
  });

  it('gives a fault with a method only to calls of that method', async () => {
    simulator.failNext({ status: 503, method: 'POST' });

    await expect(jira.myself()).resolves.toMatchObject({ accountId: simulator.syncAccount.accountId });
    const answer = await fetch(`${simulator.url}/rest/api/3/myself`, { method: 'POST' });
    expect(answer.status).toBe(503);
  });

  it('fails a call that gets no answer within timeoutMs with a JiraTimeoutError, a serviceUnavailable', async () => {
    const silent = createServer(() => {}); // takes the call and never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const slow = new JiraClient({
        baseUrl: `http://127.0.0.1:${port}`,
        email: 'a@example.com',
        apiToken: 't',
        timeoutMs: 50,
      });

      const error = await rejection(slow.myself());

      expect(error).toBeInstanceOf(JiraTimeoutError);
      expect(error).toMatchObject({ code: 'jira_timeout', timeoutMs: 50 });
      expect(classifyFailure(error)).toMatchObject({
        status: 'serviceUnavailable',
        meta: { code: 'TimeoutError' },
      });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
  it('fails a call to a port nobody listens on with the connection error, a serviceUnavailable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const nobody = new JiraClient({
      baseUrl: `http://127.0.0.1:${port}`,
      email: 'a@example.com',
      apiToken: 't',
    });

    const error = await rejection(nobody.myself());

    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(classifyFailure(error)).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'ECONNREFUSED' },
    });
  });
});

describe('the simulated Jira itself', () => {
  it('gives the same site and the same activity for the same seed, and another for another seed', async () => {
    const twin = await JiraSimulator.start({ seed: 7, now: () => now, requests: 10 });
    const other = await JiraSimulator.start({ seed: 8, now: () => now, requests: 10 });
    try {
      expect(twin.accounts).toEqual(simulator.accounts);
      expect(twin.requests()).toEqual(simulator.requests());
      expect(twin.advance(12)).toEqual(simulator.advance(12));
      expect(twin.requests()).toEqual(simulator.requests());
      expect(other.requests()).not.toEqual(simulator.requests());
    } finally {
      await twin.close();
      await other.close();
    }
  });

  it('changes over time: new requests, edits and answers given in Jira come through the incremental read', async () => {
    const since = new Date(now);
    const events = [];
    for (let round = 0; round < 12; round++) {
      now += 5 * MINUTE;
      events.push(...simulator.advance());
    }

    const changes = await all(changedApprovals(jira, simulator.jql, since));

    expect([...new Set(events.map(({ type }) => type))]).toEqual(
      expect.arrayContaining(['created', 'edited', 'decided']),
    );
    const expected = simulator.requests().filter(({ updatedAt }) => updatedAt >= since);
    expect(changes.map(({ id }) => id).sort()).toEqual(idsOf(expected));
    const byId = new Map<string, SourceApproval>(changes.map((record) => [record.id, record]));
    for (const event of events) {
      if (event.type !== 'decided' || simulator.request(event.issueKey) === undefined) continue;
      const issueId = simulator.request(event.issueKey)!.id;
      const id = sourceApprovalId({ issueId, approvalId: event.approvalId, accountId: event.accountId });
      expect(byId.get(id)).toMatchObject({ resolved: true });
    }
  });

  it('pages a search with a cursor token, when told: an issue updated meanwhile comes again, none is skipped', async () => {
    simulator.behaviour.pageTokens = 'cursor';
    const keys: string[] = [];
    for await (const issue of jira.searchIssues(`${simulator.jql} ORDER BY updated ASC`, { pageSize: 2 })) {
      keys.push(issue.key);
      if (keys.length === 1) {
        now += MINUTE;
        simulator.editRequest(issue.key); // moves behind every other issue while the search is on its first page
      }
    }

    const everyKey = simulator.requests().map(({ key }) => key);
    expect([...new Set(keys)].sort()).toEqual(everyKey.sort());
    expect(keys.at(-1)).toBe(keys[0]);
    expect(keys).toHaveLength(everyKey.length + 1);
  });

  it('pages a search with an offset token by default: an issue updated meanwhile shifts the rest, and one is skipped', async () => {
    const keys: string[] = [];
    for await (const issue of jira.searchIssues(`${simulator.jql} ORDER BY updated ASC`, { pageSize: 2 })) {
      keys.push(issue.key);
      if (keys.length === 1) {
        now += MINUTE;
        simulator.editRequest(issue.key);
      }
    }

    const everyKey = simulator.requests().map(({ key }) => key);
    expect(keys).toHaveLength(everyKey.length);
    expect(new Set(keys).size).toBe(everyKey.length - 1); // the first again at the end, the third never
  });

  it('refuses a JQL id or key that names no issue the caller can see with a 400, and matches it when told not to', async () => {
    const [first, second] = simulator.requests();
    simulator.deleteRequest(second!.key);
    const jql = `id in (${first!.id}, ${second!.id})`;

    const error = await rejection(all(jira.searchIssues(jql)));
    simulator.behaviour.jqlIssuesMustExist = false;
    const found = await all(jira.searchIssues(jql));

    expect(error).toMatchObject({
      status: 400,
      errorMessages: [`An issue with key '${second!.id}' does not exist for field 'id'.`],
    });
    expect(found.map(({ key }) => key)).toEqual([first!.key]);
  });

  it('answers search pages no longer than searchPageLimit, whatever maxResults asks', async () => {
    simulator.behaviour.searchPageLimit = 3;
    const query = new URLSearchParams({ jql: simulator.jql, maxResults: '50', fields: 'summary' });
    const { email, apiToken } = simulator.syncAccount;
    const authorization = `Basic ${Buffer.from(`${email}:${apiToken}`).toString('base64')}`;

    const answer = await request(`${simulator.url}/rest/api/3/search/jql?${query}`, {
      headers: { authorization },
    });
    const page = (await answer.body.json()) as { issues: unknown[]; isLast: boolean };

    expect(page.issues).toHaveLength(3);
    expect(page.isLast).toBe(false);
  });

  it('lets only agents search: for a customer or an anonymous caller the project does not exist', async () => {
    const customer = simulator.accounts.find(
      ({ accountId }) =>
        ![simulator.syncAccount, ...simulator.approvers].some((a) => a.accountId === accountId),
    )!;
    const asCustomer = jira.withCredentials({ email: customer.email, apiToken: customer.apiToken });
    const query = new URLSearchParams({ jql: simulator.jql, fields: 'summary' });

    const error = await rejection(all(asCustomer.searchIssues(simulator.jql)));
    const anonymous = await request(`${simulator.url}/rest/api/3/search/jql?${query}`);

    expect(error).toMatchObject({ status: 400, errorMessages: [expect.stringContaining('does not exist')] });
    expect(anonymous.statusCode).toBe(400);
    expect(await anonymous.body.json()).toEqual({
      errorMessages: ["The value 'ITSM' does not exist for the field 'project'."],
      errors: {},
    });
  });

  it('runs on its own, printing its URL and credentials, and stops on SIGTERM', async () => {
    const main = fileURLToPath(new URL('../simulator/main.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', main, '--port', '0', '--activity-ms', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let output = '';
      child.stdout.setEncoding('utf8');
      const printed = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: string) => {
          output += chunk;
          if (output.includes('Ctrl+C')) resolve(output);
        });
        child.once('exit', () => reject(new Error(`exited early:\n${output}`)));
      });

      const url = /at (http:\/\/127\.0\.0\.1:\d+) /.exec(printed)![1]!;
      const [, email, apiToken] = /sync\s+(\S+)\s+(\S+)/.exec(printed)!;
      const account = await new JiraClient({ baseUrl: url, email: email!, apiToken: apiToken! }).myself();
      expect(account.emailAddress).toBe(email);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('on its own, says in one line which port is in use and that --port changes it, and exits 1', async () => {
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const main = fileURLToPath(new URL('../simulator/main.ts', import.meta.url));
      const child = spawn(process.execPath, ['--import', 'tsx', main, '--port', String(port)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let errors = '';
      child.stderr.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
      });
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      expect(errors).toBe(
        `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
      );
    } finally {
      taken.close();
    }
  });
});

describe('the client against the simulated Jira: reconciliation as Jira answers it', () => {
  it('leaves out the approvals of a deleted request and keeps the others of the same block', async () => {
    // A search `id in (…)` is refused whole (400) once one id is gone; each request is read on its own instead.
    const every = await all(changedApprovals(jira, simulator.jql, undefined));
    const [gone] = simulator.requests().filter(({ approvals }) => approvals.length > 0);
    simulator.deleteRequest(gone!.key);

    const found = await all(
      lookupApprovals(
        jira,
        every.map(({ id }) => id),
      ),
    );

    const goneIds = every.filter(({ id }) => id.startsWith(`${gone!.id}.`)).map(({ id }) => id);
    expect(goneIds.length).toBeGreaterThan(0);
    expect(found.map(({ id }) => id).sort()).toEqual(
      every
        .map(({ id }) => id)
        .filter((id) => !goneIds.includes(id))
        .sort(),
    );
  });

  it('finds every request of a lookup when search pages are shorter than asked for', async () => {
    simulator.behaviour.searchPageLimit = 2;
    const every = await all(changedApprovals(jira, simulator.jql, undefined));

    const found = await all(
      lookupApprovals(
        jira,
        every.map(({ id }) => id),
      ),
    );

    expect(found.map(({ id }) => id).sort()).toEqual(every.map(({ id }) => id).sort());
  });

  it('reads every request when requests change while the search is paged on offset tokens', async () => {
    simulator.behaviour.searchPageLimit = 3;
    simulator.behaviour.changesWhilePaging = 3;
    // Every request with an approval, so that a request skipped is an approval missing.
    for (const { key, approvals } of simulator.requests())
      if (approvals.length === 0) simulator.deleteRequest(key);
    now += MINUTE; // an edit moves a request behind the others

    const read = await all(changedApprovals(jira, simulator.jql, undefined));

    expect(simulator.requests().length).toBeGreaterThan(6);
    expect([...new Set(read.map(({ id }) => id))].sort()).toEqual(idsOf(simulator.requests()));
  });
});
