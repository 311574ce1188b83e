import { describe, expect, it } from 'vitest';
import { useStage } from './support/setup.js';

// The tasks end to end: created in the reference backend as an approver's action in the app would be, carried out in
// the simulated instance by the connector, with the approver's credentials sealed in each task.
const stage = useStage();

/** A waiting approval synced into the service, and a worker that runs its tasks. */
async function synced(table?: 'change_request' | 'sc_req_item') {
  const { harness, connector, simulator, credentialsOf } = stage();
  const raised = simulator.raise({
    table: table ?? 'change_request',
    approvers: [simulator.approvers[0]!.sysId],
  });
  const worker = await harness.start(connector());
  await worker.syncNow();
  const approval = raised.approvals[0]!;
  return { worker, approval, raised, credentials: credentialsOf(simulator.approvers[0]!.sysId) };
}

function approvalRecord(sysId: string) {
  return stage()
    .simulator.records('sysapproval_approver')
    .find((row) => row.sys_id === sysId);
}

describe('the tasks', () => {
  it('approves as the approver, with their comment, and the next sync resolves the approval in the service', async () => {
    const { harness, simulator, inService, tick } = stage();
    const { worker, approval, raised, credentials } = await synced();

    tick();
    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: approval,
      credentials,
      approveComments: 'Fine by me, after the freeze',
    });

    expect(await harness.awaitResult(task)).toEqual({ status: 'success', meta: { state: 'approved' } });
    expect(approvalRecord(approval)).toMatchObject({
      state: 'approved',
      sys_updated_by: credentials.username,
    });
    expect(simulator.decisions()).toEqual([
      {
        approval,
        state: 'approved',
        userName: credentials.username,
        comment: 'Fine by me, after the freeze',
        via: 'api',
      },
    ]);
    expect(simulator.comments()).toEqual([
      { approval, userName: credentials.username, text: 'Fine by me, after the freeze' },
    ]);
    expect(simulator.records(raised.table).find(({ sys_id }) => sys_id === raised.sysId)).toMatchObject({
      approval: 'approved',
    });
    await worker.syncNow();
    expect(inService(approval)).toMatchObject({ resolved: true, data: { state: 'Approved' } });
  });

  it('rejects a requested item as the approver', async () => {
    const { harness, tick } = stage();
    const { worker, approval, credentials } = await synced('sc_req_item');

    tick();
    const task = harness.createTask(worker, { type: 'reject', approvalId: approval, credentials });

    expect(await harness.awaitResult(task)).toEqual({ status: 'success', meta: { state: 'rejected' } });
    expect(approvalRecord(approval)).toMatchObject({
      state: 'rejected',
      sys_updated_by: credentials.username,
    });
  });

  it('sends nothing when the approval was decided in ServiceNow meanwhile: a systemError that says its state', async () => {
    const { harness, simulator, tick } = stage();
    const { worker, approval, credentials } = await synced();
    tick();
    simulator.decideInServiceNow(approval, 'rejected', 'Too risky');

    const task = harness.createTask(worker, { type: 'approve', approvalId: approval, credentials });

    expect(await harness.awaitResult(task)).toEqual({
      status: 'systemError',
      meta: {
        code: 'no_longer_requested',
        message: expect.stringMatching(
          /^The approval of CHG\d+ is Rejected in ServiceNow: it no longer waits/,
        ),
      },
    });
    expect(simulator.decisions().filter(({ via }) => via === 'api')).toEqual([]);
  });

  it('reports success without sending again when the approval holds this very decision already', async () => {
    const { harness, simulator, tick } = stage();
    const { worker, approval, credentials } = await synced();
    tick();
    simulator.decideInServiceNow(approval, 'approved');

    const task = harness.createTask(worker, { type: 'approve', approvalId: approval, credentials });

    expect(await harness.awaitResult(task)).toMatchObject({
      status: 'success',
      meta: { code: 'already_answered' },
    });
    expect(simulator.decisions().filter(({ via }) => via === 'api')).toEqual([]);
  });

  it('ends systemError, changing nothing, when the approval is cancelled while its decision is on its way', async () => {
    const { harness, simulator, tick } = stage();
    const { worker, approval, credentials } = await synced();
    tick();
    simulator.behaviour.cancelDuringDecision = true;

    const task = harness.createTask(worker, { type: 'approve', approvalId: approval, credentials });

    expect(await harness.awaitResult(task)).toEqual({
      status: 'systemError',
      meta: {
        code: 'no_longer_requested',
        message: expect.stringMatching(/^The approval of CHG\d+ is Cancelled in ServiceNow/),
      },
    });
    expect(approvalRecord(approval)).toMatchObject({ state: 'cancelled', sys_updated_by: 'system' });
  });

  describe('a failure ends in its status, and nothing is decided', () => {
    it('credentials that are not the approver’s: not_found when they may not read the approval, else not_the_approver', async () => {
      const { harness, simulator, credentialsOf } = stage();
      const { worker, approval } = await synced();

      const otherApprover = harness.createTask(worker, {
        type: 'approve',
        approvalId: approval,
        credentials: credentialsOf(simulator.approvers[1]!.sysId),
      });
      // The integration user reads every approval: its sign-in is no approver's.
      const integrationUser = harness.createTask(worker, {
        type: 'approve',
        approvalId: approval,
        credentials: simulator.integrationUser,
      });

      expect(await harness.awaitResult(otherApprover)).toMatchObject({
        status: 'systemError',
        meta: { code: 'not_found' },
      });
      expect(await harness.awaitResult(integrationUser)).toMatchObject({
        status: 'authenticationError',
        meta: {
          code: 'not_the_approver',
          message: 'These ServiceNow credentials are not those of Nora Ibsen',
        },
      });
      expect(approvalRecord(approval)).toMatchObject({ state: 'requested' });
    });

    it('a locked-out approver: the sign-in refused, authenticationError', async () => {
      const { harness, simulator } = stage();
      const { worker, approval, credentials } = await synced();
      simulator.lockOut(credentials.username);

      const task = harness.createTask(worker, { type: 'approve', approvalId: approval, credentials });

      expect(await harness.awaitResult(task)).toMatchObject({
        status: 'authenticationError',
        meta: { code: 'HTTP_401', message: expect.stringContaining('User Not Authenticated') },
      });
    });

    it('a wrong password, and no credentials at all: authenticationError', async () => {
      const { harness } = stage();
      const { worker, approval, credentials } = await synced();

      const wrong = harness.createTask(worker, {
        type: 'approve',
        approvalId: approval,
        credentials: { ...credentials, password: 'not-it' },
      });
      const none = harness.createTask(worker, { type: 'reject', approvalId: approval, credentials: {} });

      expect(await harness.awaitResult(wrong)).toMatchObject({
        status: 'authenticationError',
        meta: { code: 'HTTP_401' },
      });
      expect(await harness.awaitResult(none)).toMatchObject({
        status: 'authenticationError',
        meta: { code: 'authentication' },
      });
      expect(approvalRecord(approval)).toMatchObject({ state: 'requested' });
    });

    it('an ACL that refuses the update: authenticationError, HTTP_403', async () => {
      const { harness, simulator } = stage();
      const { worker, approval, credentials } = await synced();
      simulator.behaviour.aclRefusesUpdates = true;

      const task = harness.createTask(worker, { type: 'approve', approvalId: approval, credentials });

      expect(await harness.awaitResult(task)).toMatchObject({
        status: 'authenticationError',
        meta: { code: 'HTTP_403', message: expect.stringContaining('ACL Exception Update Failed') },
      });
      expect(approvalRecord(approval)).toMatchObject({ state: 'requested' });
    });

    it('a rate limit on the update: serviceUnavailable, saying when to try again; the update is not repeated', async () => {
      const { harness, simulator } = stage();
      const { worker, approval, credentials } = await synced();
      simulator.disrupt({ status: 429, retryAfterSeconds: 7 }, { calls: ['approvalUpdate'] });

      const task = harness.createTask(worker, { type: 'approve', approvalId: approval, credentials });

      expect(await harness.awaitResult(task)).toMatchObject({
        status: 'serviceUnavailable',
        meta: { code: 'HTTP_429', message: expect.stringContaining('Rate limit exceeded') },
      });
      expect(simulator.requests().filter(({ call }) => call === 'approvalUpdate')).toHaveLength(1);
      expect(approvalRecord(approval)).toMatchObject({ state: 'requested' });
    });

    it('an instance down: serviceUnavailable', async () => {
      const { harness, simulator } = stage();
      const { worker, approval, credentials } = await synced();
      simulator.disrupt({ status: 503 });

      const task = harness.createTask(worker, { type: 'reject', approvalId: approval, credentials });

      expect(await harness.awaitResult(task)).toMatchObject({
        status: 'serviceUnavailable',
        meta: { code: 'HTTP_503' },
      });
    });
  });
});
