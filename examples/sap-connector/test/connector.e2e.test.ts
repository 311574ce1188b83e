import { Secret } from 'approval-connector-kit';
import { createTestHarness, type TestHarness } from 'approval-connector-kit/testing';
import type { ConnectorWorker } from 'approval-connector-kit/worker';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatedTask } from '../simulator/inbox.js';
import { SapInboxSimulator, type SapInboxSimulatorOptions } from '../simulator/simulator.js';
import { SapInboxClient } from '../src/client.js';
import { fromEnvironment, SapInboxConnector } from '../src/connector.js';
import { approvalId } from '../src/mapping.js';

// The connector end to end: the simulated SAP system and the reference backend, both over HTTP, with the worker
// in between. The approver's credentials go into each task sealed, as the app seals them.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  sap: SapInboxSimulator;
  harness: TestHarness;
  worker: ConnectorWorker<SapInboxConnector>;
}

interface SetUpOptions extends SapInboxSimulatorOptions {
  /** The connector is then built from these variables (and the simulator's service and technical user). */
  env?: Record<string, string>;
  /** Where the worker writes its log lines. */
  log?: string[];
}

async function setUp(options: SetUpOptions = {}): Promise<Setup> {
  const sap = await SapInboxSimulator.start(options);
  cleanups.push(() => sap.close());
  const harness = await createTestHarness();
  cleanups.push(() => harness.close());
  const connector =
    options.env === undefined
      ? new SapInboxConnector({
          client: new SapInboxClient({ serviceUrl: sap.serviceUrl }),
          technicalUser: {
            username: sap.technicalUser.username,
            password: new Secret(sap.technicalUser.password),
          },
        })
      : fromEnvironment({
          SAP_SERVICE_URL: sap.serviceUrl,
          SAP_USER: sap.technicalUser.username,
          SAP_PASSWORD: sap.technicalUser.password,
          ...options.env,
        });
  const log = options.log;
  const worker = await harness.start(
    connector,
    log === undefined
      ? {}
      : { logger: { level: 'warn', destination: { write: (line: string) => log.push(line) } } },
  );
  await worker.syncNow();
  return { sap, harness, worker };
}

/** The approvals the service should hold as open for the simulator's open tasks: one per user who can decide. */
function expectedOpen(sap: SapInboxSimulator): [id: string, approver: string][] {
  return sap
    .openTasks()
    .flatMap((task) =>
      (task.status === 'RESERVED' && task.processor !== undefined
        ? [task.processor]
        : task.potentialOwners
      ).map((user): [string, string] => [idOf(task, user.username), user.username]),
    )
    .sort();
}

function openInService(harness: TestHarness): [id: string, approver: string][] {
  return harness
    .approvals()
    .filter((approval) => !approval.resolved)
    .map((approval): [string, string] => [approval.id, approval.approver])
    .sort();
}

function idOf(task: SimulatedTask, username: string): string {
  return approvalId({ origin: task.origin, instanceId: task.instanceId }, username);
}

function credentialsOf(sap: SapInboxSimulator, username: string): { username: string; password: string } {
  const approver = sap.approvers.find((candidate) => candidate.username === username);
  if (approver === undefined) throw new Error(`No approver ${username}`);
  return { username, password: approver.password };
}

/** A task waiting for any of its owners, of a task definition when given, with the owner who will decide it. */
function readyTask(sap: SapInboxSimulator, definitionId?: string): { task: SimulatedTask; owner: string } {
  const task = sap
    .openTasks()
    .find(
      (candidate) =>
        candidate.status === 'READY' &&
        (definitionId === undefined || candidate.definition.id === definitionId),
    );
  if (task === undefined) throw new Error('No ready task in the simulated inbox');
  return { task, owner: task.potentialOwners[0]?.username as string };
}

function decisionsVia(sap: SapInboxSimulator, via: 'odata' | 'activity') {
  return sap.decisions().filter((decision) => decision.via === via);
}

describe('the SAP connector against the simulated SAP system and the reference backend', () => {
  it("syncs every open task as approvals for the users who can decide it, with the task's data", async () => {
    const { sap, harness } = await setUp({ seed: 7, initialTasks: 12 });

    expect(openInService(harness)).toEqual(expectedOpen(sap));
    expect(harness.approvals()).toHaveLength(expectedOpen(sap).length);
    const { task, owner } = readyTask(sap);
    expect(harness.approvals().find((approval) => approval.id === idOf(task, owner))).toMatchObject({
      schemaId: 'sap-task',
      approver: owner,
      data: {
        title: task.title,
        taskName: task.definition.name,
        taskDefinitionId: task.definition.id,
        priority: task.priority,
        status: 'READY',
        createdOn: task.createdOn.toISOString(),
        attributes: Object.fromEntries(task.attributes),
        decisions: task.options.map((option) => ({
          key: option.key,
          text: option.text,
          ...(option.nature === '' ? {} : { type: option.nature === 'POSITIVE' ? 'approve' : 'reject' }),
          commentMandatory: option.commentMandatory,
        })),
        sap: { origin: 'LOCAL_TGW', instanceId: task.instanceId },
      },
    });
  });

  it('syncs every open task when SAP pages the task collection on its side, with or without d.__next', async () => {
    for (const nextLinks of [true, false]) {
      const { sap, harness } = await setUp({
        seed: 7,
        initialTasks: 12,
        behaviour: { serverPageSize: 4, nextLinks },
      });

      expect(openInService(harness)).toEqual(expectedOpen(sap));
    }
  });

  it('syncs tasks whose decisions carry no Nature by SAP_APPROVE_DECISION_KEYS and SAP_REJECT_DECISION_KEYS, and approves by them', async () => {
    const { sap, harness, worker } = await setUp({
      seed: 7,
      initialTasks: 12,
      behaviour: { emptyNatures: true },
      env: { SAP_APPROVE_DECISION_KEYS: '0001', SAP_REJECT_DECISION_KEYS: '0002' },
    });
    expect(openInService(harness)).toEqual(expectedOpen(sap));
    const { task, owner } = readyTask(sap);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toMatchObject({ status: 'success' });
    expect(decisionsVia(sap, 'odata')).toMatchObject([{ instanceId: task.instanceId, decisionKey: '0001' }]);
  });

  it('syncs tasks whose decisions carry no Nature by their texts where no decision keys are set, and rejects by them', async () => {
    const { sap, harness, worker } = await setUp({
      seed: 7,
      initialTasks: 12,
      behaviour: { emptyNatures: true },
    });
    expect(openInService(harness)).toEqual(expectedOpen(sap));
    const { task, owner } = readyTask(sap, 'TS20000166');
    expect(harness.approvals().find(({ id }) => id === idOf(task, owner))?.data).toMatchObject({
      decisions: [
        { key: '0001', text: 'Approve', type: 'approve' },
        { key: '0002', text: 'Reject', type: 'reject' },
      ],
    });

    const created = harness.createTask(worker, {
      type: 'reject',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toMatchObject({ status: 'success' });
    expect(decisionsVia(sap, 'odata')).toMatchObject([{ instanceId: task.instanceId, decisionKey: '0002' }]);
  });

  it('syncs a task none of whose options maps to approve or reject, whose tasks then ask to decide it in SAP', async () => {
    const log: string[] = [];
    const sapOptions = { seed: 7, initialTasks: 0 };
    const { sap, harness, worker } = await setUp({ ...sapOptions, log });
    const task = sap.createTask({
      taskDefinitionId: 'TS00008267',
      potentialOwners: ['AMILLER', 'BCHEN'],
      decisionOptions: [
        { key: '0007', text: 'Forward to controlling', nature: '', commentMandatory: false },
        { key: '0008', text: 'Query requester', nature: '', commentMandatory: true },
      ],
    });
    await worker.syncNow();

    expect(openInService(harness)).toEqual(expectedOpen(sap));
    expect(openInService(harness).map(([, approver]) => approver)).toEqual(['AMILLER', 'BCHEN']);
    expect(harness.approvals()[0]?.data).toMatchObject({
      decisions: [
        { key: '0007', text: 'Forward to controlling', commentMandatory: false },
        { key: '0008', text: 'Query requester', commentMandatory: true },
      ],
    });
    const warning = log
      .map((line) => JSON.parse(line))
      .find(({ msg }) => msg.startsWith('SAP tasks synced that can only be decided in SAP'));
    expect(warning).toMatchObject({ unmappedTasks: 1, byTaskDefinition: { TS00008267: 1 } });

    for (const type of ['approve', 'reject'] as const) {
      const created = harness.createTask(worker, {
        type,
        approvalId: idOf(task, 'AMILLER'),
        approveComments: 'why',
        credentials: credentialsOf(sap, 'AMILLER'),
      });
      expect(await harness.awaitResult(created)).toMatchObject({
        status: 'systemError',
        meta: {
          code: 'sap_decision_unavailable',
          message: `decide this one in SAP: no option maps to ${type} (it offers Forward to controlling, Query requester)`,
        },
      });
    }
    expect(sap.requests().filter((request) => request.method === 'POST')).toEqual([]);
    await worker.syncNow();
    expect(openInService(harness)).toEqual(expectedOpen(sap));
  });

  it('checks and decides a task with SAP_CLIENT set: sap-client goes on every call', async () => {
    const { sap, harness, worker } = await setUp({ seed: 7, initialTasks: 6, env: { SAP_CLIENT: '100' } });
    expect(openInService(harness)).toEqual(expectedOpen(sap));
    const { task, owner } = readyTask(sap);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toMatchObject({ status: 'success' });
    expect(decisionsVia(sap, 'odata')).toMatchObject([{ instanceId: task.instanceId }]);
  });

  it('follows the inbox as it changes: new tasks, edits, reservations and decisions taken in SAP', async () => {
    const { sap, harness, worker } = await setUp({ seed: 11, initialTasks: 8 });
    const before = openInService(harness).map(([id]) => id);

    const events = sap.advance(25);
    await worker.syncNow();

    expect(new Set(events.map((event) => event.kind))).toEqual(
      new Set(['created', 'edited', 'reserved', 'decided', 'idle']),
    );
    const open = expectedOpen(sap);
    expect(openInService(harness)).toEqual(open);
    // What left the inbox, or the hands of a user who can no longer decide it, is resolved in the service.
    const gone = before.filter((id) => !open.some(([openId]) => openId === id));
    expect(gone.length).toBeGreaterThan(0);
    for (const id of gone)
      expect(harness.approvals().find((approval) => approval.id === id)?.resolved).toBe(true);
    // Edits arrive: each open approval holds its task as it is now.
    for (const task of sap.openTasks()) {
      const approval = harness
        .approvals()
        .find((candidate) => candidate.id.startsWith(`LOCAL_TGW~${task.instanceId}~`));
      expect(approval?.data).toMatchObject({
        title: task.title,
        priority: task.priority,
        status: task.status,
        attributes: Object.fromEntries(task.attributes),
      });
    }
  });

  it('approves in SAP as the approver, and the next sync resolves every approval of the decided task', async () => {
    const { sap, harness, worker } = await setUp({ seed: 3 });
    const { task, owner } = readyTask(sap);
    const ofTask = (approval: { id: string }) => approval.id.startsWith(`LOCAL_TGW~${task.instanceId}~`);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toEqual({ status: 'success' });
    expect(decisionsVia(sap, 'odata')).toEqual([
      expect.objectContaining({
        instanceId: task.instanceId,
        decisionKey: '0001',
        comments: '',
        username: owner,
      }),
    ]);
    // Every request of the decision logged on as the approver, none as the technical user.
    const decision = sap.requests().filter((request) => request.username === owner);
    expect(decision.map((request) => `${request.method} ${request.resource}`)).toEqual([
      `GET TaskCollection(SAP__Origin='LOCAL_TGW',InstanceID='${task.instanceId}')`,
      'GET DecisionOptions',
      'GET ',
      'POST Decision',
    ]);
    expect(
      harness
        .approvals()
        .filter(ofTask)
        .map((approval) => approval.resolved),
    ).not.toContain(true);

    await worker.syncNow();

    expect(
      harness
        .approvals()
        .filter(ofTask)
        .map((approval) => approval.resolved),
    ).toEqual(task.potentialOwners.map(() => true));
    expect(openInService(harness)).toEqual(expectedOpen(sap));
  });

  it("rejects in SAP with the approver's comment", async () => {
    const { sap, harness, worker } = await setUp({ seed: 5, initialTasks: 20 });
    const { task, owner } = readyTask(sap, 'TS00008267');

    const created = harness.createTask(worker, {
      type: 'reject',
      approvalId: idOf(task, owner),
      approveComments: "Over the team's budget",
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toEqual({ status: 'success' });
    expect(decisionsVia(sap, 'odata')).toEqual([
      expect.objectContaining({
        instanceId: task.instanceId,
        decisionKey: '0002',
        decisionText: 'Reject',
        comments: "Over the team's budget",
        username: owner,
      }),
    ]);
  });

  it('reports a systemError, sending no decision, for a rejection without the comment SAP requires', async () => {
    const { sap, harness, worker } = await setUp({ seed: 5, initialTasks: 20 });
    const { task, owner } = readyTask(sap, 'TS00008267');

    const created = harness.createTask(worker, {
      type: 'reject',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toEqual({
      status: 'systemError',
      meta: {
        code: 'sap_decision_unavailable',
        message: 'SAP requires a comment for the decision "Reject"; add one and try again',
      },
    });
    expect(sap.requests().filter((request) => request.method === 'POST')).toEqual([]);
    expect(sap.openTasks().map((open) => open.instanceId)).toContain(task.instanceId);
  });

  it.each([
    [
      'a wrong password',
      (_: SapInboxSimulator, owner: string) => ({ username: owner, password: 'guess-2026' }),
    ],
    [
      'an expired password',
      (sap: SapInboxSimulator, owner: string) => {
        sap.expirePassword(owner);
        return credentialsOf(sap, owner);
      },
    ],
  ])('reports an authenticationError for %s, and SAP decides nothing', async (_, credentials) => {
    const { sap, harness, worker } = await setUp({ seed: 3 });
    const { task, owner } = readyTask(sap);
    const given = credentials(sap, owner);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, owner),
      credentials: given,
    });

    const result = await harness.awaitResult(created);
    expect(result).toEqual({
      status: 'authenticationError',
      meta: { code: 'HTTP_401', message: 'SAP answered 401 to GET TaskCollection (one task)' },
    });
    expect(JSON.stringify(result)).not.toContain(given.password);
    expect(sap.decisions()).toEqual([]);
  });

  it('keeps no credentials: a second task with a wrong password is refused after one with the right one', async () => {
    const { sap, harness, worker } = await setUp({ seed: 3, initialTasks: 20 });
    const [first, second] = sap
      .openTasks()
      .filter(
        (task) => task.status === 'READY' && task.potentialOwners.some((user) => user.username === 'AMILLER'),
      );
    if (first === undefined || second === undefined)
      throw new Error('AMILLER has fewer than two ready tasks');
    const right = credentialsOf(sap, 'AMILLER');

    const approved = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(first, 'AMILLER'),
      credentials: right,
    });
    expect(await harness.awaitResult(approved)).toEqual({ status: 'success' });
    const refused = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(second, 'AMILLER'),
      credentials: { ...right, password: 'not-the-password' },
    });

    expect(await harness.awaitResult(refused)).toMatchObject({ status: 'authenticationError' });
    expect(decisionsVia(sap, 'odata').map((decision) => decision.instanceId)).toEqual([first.instanceId]);
  });

  it('fetches a new CSRF token once when SAP refuses the first as expired, and decides', async () => {
    const { sap, harness, worker } = await setUp({ seed: 3 });
    const { task, owner } = readyTask(sap);
    sap.refuseNextCsrfTokens(1);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toEqual({ status: 'success' });
    const session = sap
      .requests()
      .filter((request) => request.username === owner && request.resource !== 'DecisionOptions');
    expect(session.slice(1).map((request) => [request.method, request.resource, request.status])).toEqual([
      ['GET', '', 200],
      ['POST', 'Decision', 403],
      ['GET', '', 200],
      ['POST', 'Decision', 200],
    ]);
    expect(decisionsVia(sap, 'odata')).toHaveLength(1);
  });

  it('reports an authenticationError, the task still open, when SAP refuses the new token too', async () => {
    const { sap, harness, worker } = await setUp({ seed: 3 });
    const { task, owner } = readyTask(sap);
    sap.refuseNextCsrfTokens(2);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toEqual({
      status: 'authenticationError',
      meta: { code: 'HTTP_403', message: 'SAP answered 403 to POST Decision' },
    });
    expect(sap.requests().filter((request) => request.method === 'POST')).toHaveLength(2);
    expect(sap.openTasks().map((open) => open.instanceId)).toContain(task.instanceId);
  });

  it('does not send a decision on a task decided in SAP since the sync, and the next sync resolves it', async () => {
    const { sap, harness, worker } = await setUp({ seed: 3 });
    const { task, owner } = readyTask(sap);
    sap.decideInSap(task.instanceId);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, owner),
      credentials: credentialsOf(sap, owner),
    });

    expect(await harness.awaitResult(created)).toEqual({
      status: 'systemError',
      meta: { code: 'already_decided', message: `The SAP task ${task.instanceId} was decided already` },
    });
    expect(sap.requests().filter((request) => request.method === 'POST')).toEqual([]);
    await worker.syncNow();
    expect(harness.approvals().find((approval) => approval.id === idOf(task, owner))?.resolved).toBe(true);
  });

  it("reports SAP's refusal as a systemError when another owner has reserved the task", async () => {
    const { sap, harness, worker } = await setUp({ seed: 3, initialTasks: 20 });
    const task = sap.openTasks().find((open) => open.status === 'READY' && open.potentialOwners.length === 2);
    const [holder, other] = task?.potentialOwners ?? [];
    if (task === undefined || holder === undefined || other === undefined)
      throw new Error('No task with two owners');
    // Synced while both could decide; then one of them reserves it in SAP.
    sap.reserveInSap(task.instanceId, holder.username);

    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: idOf(task, other.username),
      credentials: credentialsOf(sap, other.username),
    });

    expect(await harness.awaitResult(created)).toEqual({
      status: 'systemError',
      meta: {
        code: 'HTTP_400',
        message: `SAP answered 400 to POST Decision: Task ${task.instanceId} is reserved by ${holder.username}; only that user can decide it`,
      },
    });
    expect(sap.decisions()).toEqual([]);
  });
});
