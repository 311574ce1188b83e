import { createTestHarness, type TestHarness } from 'approval-connector-kit/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { MyConnector } from '../src/connector.js';
import { Requests } from '../src/source.js';

let harness: TestHarness;
let requests: Requests;

beforeEach(async () => {
  requests = new Requests([
    { id: 'REQ-1', approver: 'ada', title: 'New laptop', status: 'open', updatedAt: new Date() },
  ]);
  harness = await createTestHarness();
});

afterEach(() => harness.close());

it('syncs an open request, and carries an approval back into the source', async () => {
  const worker = await harness.start(new MyConnector(requests));

  await worker.syncNow();
  expect(harness.approvals()).toMatchObject([{ id: 'REQ-1', approver: 'ada', resolved: false }]);

  const task = harness.createTask(worker, { type: 'approve', approvalId: 'REQ-1', approveComments: 'fine' });
  expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
  expect(requests.get('REQ-1')).toMatchObject({ status: 'approved', comment: 'fine' });

  await worker.syncNow();
  expect(harness.approvals()).toMatchObject([{ id: 'REQ-1', resolved: true }]);
});

it('refuses a rejection without a comment, and leaves the source as it was', async () => {
  const worker = await harness.start(new MyConnector(requests));
  await worker.syncNow();

  const task = harness.createTask(worker, { type: 'reject', approvalId: 'REQ-1', approveComments: '' });
  expect(await harness.awaitResult(task)).toMatchObject({ status: 'internalError' });
  expect(requests.get('REQ-1')).toMatchObject({ status: 'open' });
});
