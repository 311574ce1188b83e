import { Secret, ValidationError } from 'approval-connector-kit';
import { IntegrationClient } from 'approval-connector-kit/client';
import { createTestHarness, type TestHarness } from 'approval-connector-kit/testing';
import type { ConnectorWorker } from 'approval-connector-kit/worker';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SapInboxClient } from '../src/client.js';
import { fromEnvironment, SapInboxConnector } from '../src/connector.js';
import {
  basic,
  collection,
  fixture,
  fixtureJson,
  MockSap,
  SERVICE_URL,
  taskEntry,
} from './support/mock-sap.js';

// The connector's own logic, against SAP answers shaped like its documented ones (nock) and the reference backend
// (in-process, over HTTP): what it syncs, what each task sends to SAP and with whose credentials, and what it
// reports when it sends nothing.

const technicalUser = { username: 'APPROVAL_SYNC', password: 'sync-pass-1' };
const approver = { username: 'AMILLER', password: 'miller-pass-1' };
const TASK = "TaskCollection(SAP__Origin='LOCAL_TGW',InstanceID='000001750567')";
const APPROVAL_ID = 'LOCAL_TGW~000001750567~AMILLER';
const SESSION = { 'x-csrf-token': 'csrf-token-42', 'set-cookie': 'SAP_SESSIONID_PRD_100=session-42; path=/' };

let sap: MockSap;
let harness: TestHarness;
beforeEach(async () => {
  sap = new MockSap();
  // The reference backend is on loopback, and the kit's client reaches it through the same network layer nock holds.
  sap.allowLoopback();
  harness = await createTestHarness();
});
afterEach(async () => {
  await harness.close();
  sap.done();
});

function connector(options: { taskDefinitionIds?: string[] } = {}): SapInboxConnector {
  return new SapInboxConnector({
    client: new SapInboxClient({ serviceUrl: SERVICE_URL }),
    technicalUser: { username: technicalUser.username, password: new Secret(technicalUser.password) },
    ...options,
  });
}

/** A started worker whose service holds the fixture's open tasks, synced through nock. */
async function synced(): Promise<ConnectorWorker<SapInboxConnector>> {
  const tasks = fixtureJson('task-collection.json').d.results;
  answerInbox(tasks);
  const worker = await harness.start(connector());
  await worker.syncNow();
  return worker;
}

/**
 * The inbox holds these tasks: the collection's first page, each task's decision options, and the page after it,
 * which holds only the last task again (the client reads on past a page shorter than `$top`).
 */
function answerInbox(tasks: readonly unknown[], options = fixture('decision-options.json')): void {
  sap.on({ resource: 'TaskCollection' }, { body: collection(tasks) });
  for (const _ of tasks) sap.on({ resource: 'DecisionOptions' }, { body: options });
  sap.on({ resource: 'TaskCollection' }, { body: collection(tasks.slice(-1)) });
}

function answerTask(status: string): void {
  sap.on(
    { resource: TASK },
    { body: fixture('task.json').replace('"Status": "READY"', `"Status": "${status}"`) },
  );
}

function answerDecision(decisionKey: string, comments: string): void {
  sap.on({ resource: '' }, { body: fixture('service-document.json'), headers: SESSION });
  sap.on(
    {
      method: 'POST',
      resource: 'Decision',
      query: {
        SAP__Origin: "'LOCAL_TGW'",
        InstanceID: "'000001750567'",
        DecisionKey: decisionKey,
        Comments: comments,
      },
    },
    { body: fixture('decision-result.json') },
  );
}

describe('the sync', () => {
  it('reads the inbox as the technical user and pushes one approval per user who can decide, the technical user left out', async () => {
    const [ready, reserved] = fixtureJson('task-collection.json').d.results;
    const substituted = taskEntry('000001750569', {
      PotentialOwners: {
        results: [
          ...ready.PotentialOwners.results,
          { ...ready.PotentialOwners.results[0], UniqueName: 'APPROVAL_SYNC' },
        ],
      },
    });
    answerInbox([ready, reserved, substituted]);
    const worker = await harness.start(connector());

    await worker.syncNow();

    expect(
      harness.approvals().map(({ id, approver, resolved, schemaId }) => [id, approver, resolved, schemaId]),
    ).toEqual(
      [
        ['LOCAL_TGW~000001750567~AMILLER', 'AMILLER', false, 'sap-task'],
        ['LOCAL_TGW~000001750567~BCHEN', 'BCHEN', false, 'sap-task'],
        ['LOCAL_TGW~000001750568~BCHEN', 'BCHEN', false, 'sap-task'],
        ['LOCAL_TGW~000001750569~AMILLER', 'AMILLER', false, 'sap-task'],
        ['LOCAL_TGW~000001750569~BCHEN', 'BCHEN', false, 'sap-task'],
      ].sort(),
    );
    expect(harness.approvals().find((approval) => approval.id === APPROVAL_ID)?.data).toMatchObject({
      title: 'Release purchase requisition 10004711',
      taskDefinitionId: 'TS00008267',
      attributes: { TOTAL_VALUE: '12500.00', CURRENCY: 'EUR' },
      decisions: [
        { key: '0001', text: 'Release', type: 'approve', commentMandatory: false },
        { key: '0002', text: 'Reject', type: 'reject', commentMandatory: true },
      ],
      sap: { origin: 'LOCAL_TGW', instanceId: '000001750567' },
    });
    for (const call of sap.calls()) {
      expect(call.headers.authorization).toBe(basic(technicalUser.username, technicalUser.password));
    }
  });

  it('reads only the task definitions it was given', async () => {
    sap.on(
      {
        resource: 'TaskCollection',
        query: {
          $filter:
            "(Status eq 'READY' or Status eq 'RESERVED' or Status eq 'IN_PROGRESS') and (TaskDefinitionID eq 'TS20000166')",
          $expand: 'PotentialOwners,CustomAttributeData',
          $orderby: 'CreatedOn asc,InstanceID asc',
          $skip: '0',
          $top: '100',
        },
      },
      { body: collection([]) },
    );
    const worker = await harness.start(connector({ taskDefinitionIds: ['TS20000166'] }));

    await worker.syncNow();

    expect(harness.approvals()).toEqual([]);
  });

  it('publishes a card and a detail template for its schema', async () => {
    await harness.start(connector());

    const templates = await new IntegrationClient(harness.serviceOptions()).getUiTemplates();

    expect(templates.map(({ type, uiTemplate }) => [type, Object.keys(uiTemplate)]).sort()).toEqual([
      ['card', ['sap-task']],
      ['detail', ['sap-task']],
    ]);
  });
});

describe('a decision', () => {
  it("checks the task is still open, then takes the approving decision with the approver's credentials", async () => {
    const worker = await synced();
    const before = sap.calls().length;
    answerTask('READY');
    sap.on({ resource: 'DecisionOptions' }, { body: fixture('decision-options.json') });
    answerDecision("'0001'", "''");

    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: APPROVAL_ID,
      credentials: approver,
    });

    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    const calls = sap.calls().slice(before);
    expect(calls.map((call) => `${call.method} ${call.resource}`)).toEqual([
      `GET ${TASK}`,
      'GET DecisionOptions',
      'GET ',
      'POST Decision',
    ]);
    for (const call of calls)
      expect(call.headers.authorization).toBe(basic(approver.username, approver.password));
    expect(calls.at(-1)?.headers).toMatchObject({
      'x-csrf-token': 'csrf-token-42',
      cookie: 'SAP_SESSIONID_PRD_100=session-42',
    });
  });

  it("takes the rejecting decision with the approver's comment", async () => {
    const worker = await synced();
    answerTask('RESERVED');
    sap.on({ resource: 'DecisionOptions' }, { body: fixture('decision-options.json') });
    answerDecision("'0002'", "'Not in this quarter''s budget'");

    const task = harness.createTask(worker, {
      type: 'reject',
      approvalId: APPROVAL_ID,
      approveComments: "Not in this quarter's budget",
      credentials: approver,
    });

    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
  });

  it('reports a systemError and sends nothing when SAP requires a comment the approver did not give', async () => {
    const worker = await synced();
    const before = sap.calls().length;
    answerTask('READY');
    sap.on({ resource: 'DecisionOptions' }, { body: fixture('decision-options.json') });

    const task = harness.createTask(worker, {
      type: 'reject',
      approvalId: APPROVAL_ID,
      credentials: approver,
    });

    expect(await harness.awaitResult(task)).toEqual({
      status: 'systemError',
      meta: {
        code: 'sap_decision_unavailable',
        message: 'SAP requires a comment for the decision "Reject"; add one and try again',
      },
    });
    expect(
      sap
        .calls()
        .slice(before)
        .map((call) => `${call.method} ${call.resource}`),
    ).toEqual([`GET ${TASK}`, 'GET DecisionOptions']);
  });

  it.each([
    ['COMPLETED', { code: 'already_decided', message: 'The SAP task 000001750567 was decided already' }],
    [
      'FOR_RESUBMISSION',
      {
        code: 'not_open',
        message: 'The SAP task 000001750567 does not wait for a decision now: its status is FOR_RESUBMISSION',
      },
    ],
  ])('does not send a decision on a task that is %s', async (status, meta) => {
    const worker = await synced();
    const before = sap.calls().length;
    answerTask(status);

    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: APPROVAL_ID,
      credentials: approver,
    });

    expect(await harness.awaitResult(task)).toEqual({ status: 'systemError', meta });
    expect(
      sap
        .calls()
        .slice(before)
        .map((call) => call.resource),
    ).toEqual([TASK]);
  });

  it.each([
    ['no password', { username: 'AMILLER' }],
    ['an empty user name', { username: '', password: 'miller-pass-1' }],
    ['a user name with a colon', { username: 'AMILLER:X', password: 'miller-pass-1' }],
  ])(
    'reports an authenticationError for credentials with %s, and asks SAP nothing',
    async (_, credentials) => {
      const worker = await synced();
      const before = sap.calls().length;

      const task = harness.createTask(worker, { type: 'approve', approvalId: APPROVAL_ID, credentials });

      const result = await harness.awaitResult(task);
      expect(result).toMatchObject({
        status: 'authenticationError',
        meta: { code: 'authentication' },
      });
      expect(JSON.stringify(result)).not.toContain('AMILLER');
      expect(sap.calls().slice(before)).toEqual([]);
    },
  );

  it("reports SAP's refusal of the approver's password as an authenticationError that does not show it", async () => {
    const worker = await synced();
    sap.on(
      { resource: TASK },
      {
        status: 401,
        body: '<html><body>Logon failed</body></html>',
        headers: {
          'content-type': 'text/html',
          'www-authenticate': 'Basic realm="SAP NetWeaver Application Server [PRD/100]"',
        },
      },
    );

    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: APPROVAL_ID,
      credentials: { username: 'AMILLER', password: 'not-the-password' },
    });

    const result = await harness.awaitResult(task);
    expect(result).toEqual({
      status: 'authenticationError',
      meta: { code: 'HTTP_401', message: 'SAP answered 401 to GET TaskCollection (one task)' },
    });
  });

  it('refuses a task on an approval that is not an SAP task as task_data_invalid, asking SAP nothing', async () => {
    const worker = await harness.start(connector());
    await new IntegrationClient(harness.serviceOptions()).putApprovals([
      { id: 'PO-1', schemaId: 'sap-task', approver: 'AMILLER', resolved: false, data: {} },
    ]);

    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1', credentials: approver });

    expect(await harness.awaitResult(task)).toMatchObject({
      status: 'internalError',
      meta: { code: 'task_data_invalid', message: expect.stringContaining('LOCAL_TGW~000001750567~AMILLER') },
    });
    expect(sap.calls()).toEqual([]);
  });
});

describe('fromEnvironment', () => {
  const env = {
    SAP_SERVICE_URL: SERVICE_URL,
    SAP_USER: technicalUser.username,
    SAP_PASSWORD: technicalUser.password,
  };

  it('builds the connector from the variables: service, SAP client, technical user and task definitions', async () => {
    sap.on(
      {
        resource: 'TaskCollection',
        query: {
          $filter:
            "(Status eq 'READY' or Status eq 'RESERVED' or Status eq 'IN_PROGRESS') and (TaskDefinitionID eq 'TS00008267' or TaskDefinitionID eq 'TS21500004')",
          $expand: 'PotentialOwners,CustomAttributeData',
          $orderby: 'CreatedOn asc,InstanceID asc',
          $skip: '0',
          $top: '100',
          'sap-client': '100',
        },
      },
      { body: collection([]) },
    );
    const built = fromEnvironment({
      ...env,
      SAP_CLIENT: '100',
      SAP_TASK_DEFINITIONS: 'TS00008267, TS21500004',
    });
    const worker = await harness.start(built);

    await worker.syncNow();

    expect(sap.calls()[0]?.headers.authorization).toBe(basic(technicalUser.username, technicalUser.password));
  });

  it('names every variable that is missing or wrong in one ValidationError, never the password', () => {
    const missing = catchError(() => fromEnvironment({ SAP_PASSWORD: '' }));
    const wrong = catchError(() =>
      fromEnvironment({
        SAP_SERVICE_URL: 'ftp://sap.example.com/',
        SAP_CLIENT: '1',
        SAP_USER: 'APPROVAL:SYNC',
        SAP_PASSWORD: 'hunter2-secret',
        SAP_TASK_DEFINITIONS: 'TS00008267,,TS21500004',
      }),
    );

    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).issues.map((issue) => issue.path)).toEqual([
      ['SAP_SERVICE_URL'],
      ['SAP_USER'],
      ['SAP_PASSWORD'],
    ]);
    expect((wrong as ValidationError).issues.map((issue) => issue.path)).toEqual([
      ['SAP_SERVICE_URL'],
      ['SAP_CLIENT'],
      ['SAP_USER'],
      ['SAP_TASK_DEFINITIONS'],
    ]);
    expect((wrong as ValidationError).message).toContain('Expected `SAP_CLIENT` to be three digits');
    expect((wrong as ValidationError).message).not.toContain('hunter2-secret');
  });

  it('reads the decision keys of options without a Nature, and refuses a key both to approve and to reject', () => {
    const base = { SAP_SERVICE_URL: SERVICE_URL, SAP_USER: 'APPROVAL_SYNC', SAP_PASSWORD: 'secret' };

    expect(() =>
      fromEnvironment({ ...base, SAP_APPROVE_DECISION_KEYS: '0001, 0004', SAP_REJECT_DECISION_KEYS: '0002' }),
    ).not.toThrow();
    const both = catchError(() =>
      fromEnvironment({ ...base, SAP_APPROVE_DECISION_KEYS: '0001,0002', SAP_REJECT_DECISION_KEYS: '0002' }),
    );
    const empty = catchError(() => fromEnvironment({ ...base, SAP_APPROVE_DECISION_KEYS: '0001,,0002' }));

    expect((both as ValidationError).issues).toMatchObject([
      { path: ['SAP_REJECT_DECISION_KEYS'], message: expect.stringContaining('0002 in both') },
    ]);
    expect((empty as ValidationError).issues).toMatchObject([{ path: ['SAP_APPROVE_DECISION_KEYS'] }]);
  });

  it('needs no technical user for a worker that only carries out tasks, whose sync would then fail', async () => {
    const worker = await harness.start(fromEnvironment({ SAP_SERVICE_URL: SERVICE_URL }, 'tasks'));

    await expect(worker.syncNow()).rejects.toMatchObject({ code: 'invalid_connector' });
    expect(() => fromEnvironment({ SAP_SERVICE_URL: SERVICE_URL }, 'sync')).toThrow(ValidationError);
    expect(sap.calls()).toEqual([]);
  });
});

function catchError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
