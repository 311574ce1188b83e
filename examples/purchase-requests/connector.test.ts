import { createTestHarness } from 'approval-connector-kit/testing';
import { expect, it } from 'vitest';
import { PurchaseRequestConnector } from './connector.js';
import { InMemoryPurchaseRequests } from './source.js';

it('syncs open purchase requests and carries an approval back', async () => {
  const requests = new InMemoryPurchaseRequests([
    { id: 'PR-1', approver: 'ada', amount: 420, status: 'open', updatedAt: new Date('2026-05-01T10:00:00Z') },
  ]);
  const harness = await createTestHarness();
  const worker = await harness.start(new PurchaseRequestConnector(requests));

  await worker.syncNow();
  expect(harness.approvals()).toMatchObject([{ id: 'PR-1', approver: 'ada', resolved: false }]);

  const task = harness.createTask(worker, {
    type: 'approve',
    approvalId: 'PR-1',
    approveComments: 'within budget',
  });
  expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
  expect(requests.get('PR-1')?.status).toBe('approved');

  await worker.syncNow(); // the decision flows back as a resolved approval
  expect(harness.approvals()).toMatchObject([{ id: 'PR-1', resolved: true }]);
  await harness.close();
});
