import { Secret } from 'approval-connector-kit';
import { IntegrationClient, ManagementClient, type UserMapping } from 'approval-connector-kit/client';
import { createTestHarness, type TestHarness } from 'approval-connector-kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JiraSimulator, type SimulatorEvent } from '../simulator/simulator.js';
import { parseSourceApprovalId, sourceApprovalId } from '../src/approvals.js';
import { JiraConnector } from '../src/connector.js';
import { JiraClient } from '../src/jira-client.js';

// The connector against the simulated Jira and the reference backend, each over HTTP: approvals synced into the
// service, tasks created there as an approver's action in the app would, their decisions carried out in Jira.
const START = Date.parse('2026-03-02T09:00:00.000Z');
const MINUTE = 60_000;

let now: number;
let simulator: JiraSimulator;
let harness: TestHarness;
let management: CountingManagementClient;
/** What the simulated site told of the answers it received over the API. */
let answers: SimulatorEvent[];

/** A Management API client that counts the walks over the organization's users, which each mapping run makes. */
class CountingManagementClient extends ManagementClient {
  userWalks = 0;

  override iterateUsers(...args: Parameters<ManagementClient['iterateUsers']>) {
    this.userWalks += 1;
    return super.iterateUsers(...args);
  }
}

beforeEach(async () => {
  now = START;
  answers = [];
  simulator = await JiraSimulator.start({
    seed: 7,
    now: () => now,
    requests: 10,
    onAnswer: (event) => answers.push(event),
  });
  harness = await createTestHarness();
  management = new CountingManagementClient(
    harness.serviceOptions({ token: harness.tenant.managementToken }),
  );
});

afterEach(async () => {
  await harness.close();
  await management.close();
  await simulator.close();
});

/** The organization's users: the simulated site's approvers, by the same emails. */
async function addApproversAsUsers(emails = simulator.approvers.map(({ email }) => email)): Promise<void> {
  await management.addUsers(
    harness.tenant.organization.id,
    simulator.approvers
      .filter(({ email }) => emails.includes(email))
      .map(({ email, displayName }) => {
        const [firstName = '', lastName = ''] = displayName.split(' ');
        return { email, firstName, lastName };
      }),
  );
}

function connector(): JiraConnector {
  return new JiraConnector({
    jira: new JiraClient({ baseUrl: simulator.url, ...simulator.syncAccount }),
    jql: simulator.jql,
    requestTypes: ['10', '11', '12'],
    userMappings: { management, systemId: harness.tenant.system.id },
  });
}

function account(email: string) {
  return simulator.accounts.find((candidate) => candidate.email === email)!;
}

function credentialsOf(accountId: string): { email: string; apiToken: string } {
  const { email, apiToken } = simulator.accounts.find((candidate) => candidate.accountId === accountId)!;
  return { email, apiToken };
}

/** Every approver of every approval that waits for them, as the service's approval id and Jira's. */
function waitingApprovals() {
  return simulator.requests().flatMap((request) =>
    request.approvals.flatMap((approval) =>
      approval.finalDecision !== 'pending'
        ? []
        : approval.approvers
            .filter(({ decision }) => decision === 'pending')
            .map(({ accountId }) => ({
              id: sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId }),
              issueKey: request.key,
              approvalId: approval.id,
              accountId,
            })),
    ),
  );
}

/** The approver's own answer and the approval's outcome, as the simulated site holds them. */
function heldInJira(id: string) {
  const { issueId, approvalId, accountId } = parseSourceApprovalId(id)!;
  const approval = simulator.request(issueId)?.approvals.find((candidate) => candidate.id === approvalId);
  const own = approval?.approvers.find((approver) => approver.accountId === accountId);
  return { finalDecision: approval?.finalDecision, decision: own?.decision };
}

function inService(id: string) {
  return harness.approvals().find((approval) => approval.id === id);
}

async function systemMappings(): Promise<UserMapping[]> {
  const mappings: UserMapping[] = [];
  for await (const mapping of management.iterateSystemUserMappings(harness.tenant.system.id)) {
    mappings.push(mapping);
  }
  return mappings;
}

describe('the sync', () => {
  it("puts one approval per approver of each request's approval into the service, with the request's data", async () => {
    const worker = await harness.start(connector());

    await worker.syncNow();

    const expected = simulator
      .requests()
      .flatMap((request) =>
        request.approvals.flatMap((approval) =>
          approval.approvers.map(({ accountId }) => ({ request, approval, accountId })),
        ),
      );
    expect(
      harness
        .approvals()
        .map(({ id }) => id)
        .sort(),
    ).toEqual(
      expected
        .map(({ request, approval, accountId }) =>
          sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId }),
        )
        .sort(),
    );
    for (const { request, approval, accountId } of expected) {
      const held = inService(sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId }))!;
      expect(held).toMatchObject({
        approver: accountId,
        schemaId: `jira-request-type-${request.requestTypeId}`,
        resolved: false,
        data: {
          issueKey: request.key,
          summary: request.summary,
          status: request.status,
          fields: request.fields
            .filter(({ fieldId }) => fieldId !== 'summary')
            .map(({ fieldId, label, value }) => ({ id: fieldId, label, value })),
          approval: { id: approval.id, name: approval.name, finalDecision: 'pending' },
        },
      });
    }
  });

  it('registers the two task types with authRequired, and publishes the template of each request type', async () => {
    await harness.start(connector());

    expect(harness.backend.getConnector(harness.tenant.system.id)).toMatchObject({
      taskTypes: ['approve', 'decline'],
      authRequired: true,
    });
    const service = new IntegrationClient(harness.serviceOptions());
    try {
      const templates = await service.getUiTemplates();
      expect(templates.flatMap(({ uiTemplate }) => Object.keys(uiTemplate)).sort()).toEqual([
        'jira-request-type-10',
        'jira-request-type-11',
        'jira-request-type-12',
      ]);
    } finally {
      await service.close();
    }
  });

  it("maps the approvers whose email Jira shows to the organization's users, each once", async () => {
    await addApproversAsUsers();
    const worker = await harness.start(connector());

    await worker.syncNow();

    const appearing = new Set(harness.approvals().map(({ approver }) => approver));
    const alan = account('alan@example.com');
    expect(appearing).toContain(alan.accountId); // an approver, but Jira hides his email
    const users = await management.getUsers();
    const userOf = (email: string) => users.find((user) => user.email === email)!.id;
    expect(
      (await systemMappings()).map(({ userId, systemUserId }) => ({ userId, systemUserId })).sort(byUser),
    ).toEqual(
      simulator.approvers
        .filter(({ accountId, email }) => appearing.has(accountId) && email !== alan.email)
        .map(({ accountId, email }) => ({ userId: userOf(email), systemUserId: accountId }))
        .sort(byUser),
    );
    expect(management.userWalks).toBe(1);

    // The same approvers again: nothing to ask the service.
    now += MINUTE;
    for (const { key } of simulator.requests()) simulator.editRequest(key);
    await worker.syncNow();
    expect(management.userWalks).toBe(1);
  });

  it('maps an approver unknown to the service at a later run, once the organization has them', async () => {
    const katherine = account('katherine@example.com');
    await addApproversAsUsers(['ada@example.com', 'grace@example.com']);
    const worker = await harness.start(connector());
    await worker.syncNow();
    expect((await systemMappings()).map(({ systemUserId }) => systemUserId)).not.toContain(
      katherine.accountId,
    );

    await addApproversAsUsers([katherine.email]);
    const hers = waitingApprovals().find(({ accountId }) => accountId === katherine.accountId)!;
    now += MINUTE;
    simulator.editRequest(hers.issueKey);
    await worker.syncNow();

    expect((await systemMappings()).map(({ systemUserId }) => systemUserId)).toContain(katherine.accountId);
  });

  it('syncs the approvals all the same when the service refuses the user mappings', async () => {
    const refused = new ManagementClient(harness.serviceOptions({ token: 'not-a-management-token' }));
    try {
      const worker = await harness.start(
        new JiraConnector({
          jira: new JiraClient({ baseUrl: simulator.url, ...simulator.syncAccount }),
          jql: simulator.jql,
          userMappings: { management: refused, systemId: harness.tenant.system.id },
        }),
      );

      await expect(worker.syncNow()).resolves.toMatchObject({ pushed: waitingApprovals().length });
      expect(harness.approvals()).toHaveLength(waitingApprovals().length);
    } finally {
      await refused.close();
    }
  });

  it('resolves the approvals of a deleted request when it reconciles', async () => {
    const worker = await harness.start(connector());
    await worker.syncNow();
    const [target] = waitingApprovals();

    simulator.deleteRequest(target!.issueKey);
    await worker.reconcileNow();

    expect(inService(target!.id)).toMatchObject({ resolved: true });
    expect(harness.approvals().filter(({ resolved }) => resolved)).toHaveLength(
      harness.approvals().filter(({ data }) => data?.issueKey === target!.issueKey).length,
    );
  });

  it('reconciles every request when Jira answers a search in pages shorter than asked for', async () => {
    // Jira may return fewer issues than maxResults on any page; an issue not read is not a deleted one.
    simulator.behaviour.searchPageLimit = 3;
    const worker = await harness.start(connector());
    await worker.syncNow();
    const open = harness.approvals().filter(({ resolved }) => !resolved);
    expect(open.length).toBeGreaterThan(3);

    await worker.reconcileNow();

    expect(
      harness
        .approvals()
        .filter(({ resolved }) => !resolved)
        .map(({ id }) => id),
    ).toEqual(open.map(({ id }) => id));
  });

  it('syncs every request when requests change while the search is paged', async () => {
    // Page tokens as positions (the simulator's default): an edit that moves a request to the end would shift the
    // rest, and a request not changed since long ago would be skipped by a reader that followed the token.
    simulator.behaviour.searchPageLimit = 3;
    simulator.behaviour.changesWhilePaging = 3;
    const waiting = new Set(waitingApprovals().map(({ issueKey }) => issueKey));
    for (const { key } of simulator.requests()) if (!waiting.has(key)) simulator.deleteRequest(key);
    now += MINUTE; // an edit moves a request behind the others
    const worker = await harness.start(connector());

    await worker.syncNow();

    const everyId = waitingApprovals().map(({ id }) => id);
    expect(everyId.length).toBeGreaterThan(3);
    const synced = new Set(harness.approvals().map(({ id }) => id));
    expect(everyId.filter((id) => !synced.has(id))).toEqual([]);
  });
});

describe('the sync under a rate limit', () => {
  it('finishes a run under a rate limit smaller than one run, every approval arriving: a read waits out a 429', async () => {
    // A token bucket of 5 calls, refilled at 10 a second: one run of 10 requests calls Jira at least twice for each
    // (its approvals, and the request of those that have some). The kit does not read the source again here
    // (retries: 0), so only the client's waits carry the run through; without them the run fails at its first 429.
    simulator.behaviour.rateLimit = { capacity: 5, refillPerSecond: 10 };
    const worker = await harness.start(connector(), { sync: { sourceRetry: { retries: 0 } } });

    const report = await worker.syncNow();

    const expected = simulator
      .requests()
      .flatMap((request) =>
        request.approvals.flatMap((approval) =>
          approval.approvers.map(({ accountId }) =>
            sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId }),
          ),
        ),
      );
    expect(simulator.rateLimited).toBeGreaterThan(0);
    expect(report.pushed).toBe(expected.length);
    expect(
      harness
        .approvals()
        .map(({ id }) => id)
        .sort(),
    ).toEqual(expected.sort());
  });
});

describe('the tasks', () => {
  it('approves in Jira as the approver, and the next sync resolves the approval in the service', async () => {
    const worker = await harness.start(connector());
    await worker.syncNow();
    const target = waitingApprovals().find(
      ({ issueKey }) => simulator.request(issueKey)!.requestTypeId === '10',
    )!;

    now += MINUTE;
    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: target.id,
      credentials: credentialsOf(target.accountId),
    });

    expect(await harness.awaitResult(task)).toEqual({
      status: 'success',
      meta: { finalDecision: 'approved' },
    });
    expect(simulator.decisions({ via: 'api' })).toMatchObject([
      {
        issueKey: target.issueKey,
        approvalId: target.approvalId,
        accountId: target.accountId,
        decision: 'approved',
      },
    ]);
    expect(answers).toEqual(simulator.decisions({ via: 'api' }));
    expect(inService(target.id)).toMatchObject({ resolved: false });
    await worker.syncNow();
    expect(inService(target.id)).toMatchObject({
      resolved: true,
      data: { approval: { finalDecision: 'approved' } },
    });
  });

  it('declines with the credentials as a sign-in form gives them, username and password', async () => {
    const worker = await harness.start(connector());
    await worker.syncNow();
    const [target] = waitingApprovals();
    const { email, apiToken } = credentialsOf(target!.accountId);

    now += MINUTE;
    const task = harness.createTask(worker, {
      type: 'decline',
      approvalId: target!.id,
      credentials: { username: email, password: apiToken },
    });

    expect(await harness.awaitResult(task)).toEqual({
      status: 'success',
      meta: { finalDecision: 'declined' },
    });
    expect(heldInJira(target!.id)).toEqual({ finalDecision: 'declined', decision: 'declined' });
    await worker.syncNow();
    expect(inService(target!.id)).toMatchObject({ resolved: true });
  });

  it('does not send a decision when Jira holds another one already: a systemError, and Jira keeps its own', async () => {
    const worker = await harness.start(connector());
    await worker.syncNow();
    const [target] = waitingApprovals();
    simulator.decideInSource(target!.issueKey, target!.approvalId, target!.accountId, 'declined');

    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: target!.id,
      credentials: credentialsOf(target!.accountId),
    });

    expect(await harness.awaitResult(task)).toMatchObject({
      status: 'systemError',
      meta: { code: 'already_decided', message: expect.stringContaining('already declined') },
    });
    expect(simulator.decisions({ via: 'api' })).toEqual([]);
    expect(heldInJira(target!.id)).toEqual({ finalDecision: 'declined', decision: 'declined' });
  });

  it("posts the approver's comment on the request, as the approver, after the answer", async () => {
    const worker = await harness.start(connector());
    await worker.syncNow();
    const [target] = waitingApprovals();

    const task = harness.createTask(worker, {
      type: 'decline',
      approvalId: target!.id,
      credentials: credentialsOf(target!.accountId),
      approveComments: 'Over budget this quarter.',
    });

    expect(await harness.awaitResult(task)).toEqual({
      status: 'success',
      meta: { finalDecision: 'declined', comment: 'posted' },
    });
    expect(simulator.comments()).toMatchObject([
      {
        issueKey: target!.issueKey,
        authorId: target!.accountId,
        body: 'Over budget this quarter.',
        public: true,
      },
    ]);
  });

  it('ends a task whose very answer landed already (a delivery again, past the precheck) in success', async () => {
    const jiraConnector = connector();
    const worker = await harness.start(jiraConnector);
    await worker.syncNow();
    const [target] = waitingApprovals();
    const first = harness.createTask(worker, {
      type: 'approve',
      approvalId: target!.id,
      credentials: credentialsOf(target!.accountId),
    });
    expect(await harness.awaitResult(first)).toMatchObject({ status: 'success' });

    // The same task's handler once more, as a second delivery that passed its precheck before the first answered:
    // Jira answers its POST 409.
    const { email, apiToken } = credentialsOf(target!.accountId);
    const outcome = await jiraConnector.tasks.approve.run(
      { ...parseSourceApprovalId(target!.id)!, issueKey: target!.issueKey, comment: undefined },
      {
        credentials: { email: new Secret(email), apiToken: new Secret(apiToken) },
        signal: new AbortController().signal,
      } as unknown as Parameters<typeof jiraConnector.tasks.approve.run>[1],
    );

    expect(outcome).toMatchObject({ meta: { code: 'already_answered' } });
    expect(simulator.decisions({ via: 'api' })).toHaveLength(1);
  });

  it('reports success without sending again when the approver gave this answer in Jira already', async () => {
    const worker = await harness.start(connector());
    await worker.syncNow();
    const [target] = waitingApprovals();
    simulator.decideInSource(target!.issueKey, target!.approvalId, target!.accountId, 'approved');

    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: target!.id,
      credentials: credentialsOf(target!.accountId),
    });

    expect(await harness.awaitResult(task)).toMatchObject({
      status: 'success',
      meta: { code: 'already_answered' },
    });
    expect(simulator.decisions({ via: 'api' })).toEqual([]);
  });

  describe('a failure is reported in the status the failure mapping gives it, and nothing is answered', () => {
    type Target = ReturnType<typeof waitingApprovals>[number];
    it.each<[string, (target: Target) => Record<string, string>, object]>([
      [
        'a wrong API token: authenticationError',
        (target) => ({ ...credentialsOf(target.accountId), apiToken: 'ATATT-not-the-token' }),
        { status: 'authenticationError', meta: { code: 'HTTP_401' } },
      ],
      [
        'an expired API token: authenticationError',
        (target) => {
          const credentials = credentialsOf(target.accountId);
          simulator.expireToken(credentials.email);
          return credentials;
        },
        { status: 'authenticationError', meta: { code: 'HTTP_401' } },
      ],
      [
        "another approver's credentials: authenticationError",
        (target) => {
          const other = simulator.approvers.find(({ accountId }) => accountId !== target.accountId)!;
          return credentialsOf(other.accountId);
        },
        { status: 'authenticationError', meta: { code: 'not_the_approver' } },
      ],
      [
        'credentials without an API token: authenticationError',
        (target) => ({ email: credentialsOf(target.accountId).email }),
        { status: 'authenticationError', meta: { code: 'authentication' } },
      ],
      [
        'a deleted request: systemError',
        (target) => {
          simulator.deleteRequest(target.issueKey);
          return credentialsOf(target.accountId);
        },
        { status: 'systemError', meta: { code: 'HTTP_404' } },
      ],
      [
        'a rate limit: serviceUnavailable, saying when to try again',
        (target) => {
          // The action's own 429: a read (the precheck's) would wait it out and read again.
          simulator.failNext({ status: 429, retryAfterSeconds: 7, method: 'POST' });
          return credentialsOf(target.accountId);
        },
        {
          status: 'serviceUnavailable',
          meta: { code: 'HTTP_429', message: expect.stringContaining('try again in 7 s') },
        },
      ],
      [
        'Jira in maintenance: serviceUnavailable',
        (target) => {
          simulator.failNext({ status: 503 });
          return credentialsOf(target.accountId);
        },
        { status: 'serviceUnavailable', meta: { code: 'HTTP_503' } },
      ],
    ])('%s', async (_, arrange, expected) => {
      const worker = await harness.start(connector());
      await worker.syncNow();
      const [target] = waitingApprovals();

      const task = harness.createTask(worker, {
        type: 'approve',
        approvalId: target!.id,
        credentials: arrange(target!),
      });

      const result = await harness.awaitResult(task);
      expect(result).toMatchObject(expected);
      expect(JSON.stringify(result)).not.toContain(credentialsOf(target!.accountId).apiToken);
      expect(simulator.decisions({ via: 'api' })).toEqual([]);
    });
  });
});

function byUser(a: { userId: string }, b: { userId: string }): number {
  return a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0;
}
