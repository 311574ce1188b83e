import { createTestHarness, type TestHarness } from 'approval-connector-kit/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { MyConnector } from '../src/connector.js';
import { Requests, signedEvent } from '../src/source.js';

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

it('shows a change in the source within seconds when the source sends its event, and refuses a forged one', async () => {
  const secret = 'a-webhook-secret-for-the-test';
  const worker = await harness.start(new MyConnector(requests), { push: { secret } });
  await worker.syncNow();
  // Decided in the source itself: its event reaches the worker's push ingress, which reads the request again.
  const sent: Promise<number>[] = [];
  requests.onChange((event) => sent.push(harness.deliver(worker, signedEvent(event, secret))));
  const request = requests.get('REQ-1');
  if (request === undefined) throw new Error('REQ-1 is missing');
  requests.save({ ...request, status: 'rejected', updatedAt: new Date() });
  expect(await Promise.all(sent)).toEqual([202]);
  expect(harness.approvals()).toMatchObject([{ id: 'REQ-1', resolved: true }]);

  const forged = signedEvent(
    { deliveryId: 'forged-1', requestIds: ['REQ-1'] },
    'not-the-secret-of-the-worker',
  );
  expect(await harness.deliver(worker, forged)).toBe(401);
});
