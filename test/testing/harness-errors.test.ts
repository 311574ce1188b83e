import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/backend/index.js';
import { IntegrationClient, NotFoundError, TimeoutError } from '../../src/index.js';
import { createTestHarness, HarnessTimeoutError, type TestHarness } from '../../src/testing/index.js';

let harness: TestHarness;

beforeEach(async () => {
  harness = await createTestHarness();
});
afterEach(async () => {
  await harness.close();
});

describe('the errors of the test harness', () => {
  it("answers awaitResult for an unknown task with the backend's not-found error, not the client's not_found code", async () => {
    const failure = await harness.awaitResult('no-such-task').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceError);
    expect(failure).not.toBeInstanceOf(NotFoundError);
    expect(failure).toMatchObject({
      code: 'service_refused',
      kind: 'Not Found',
      message: 'Not Found. Failed to find the an item tasks no-such-task',
    });
  });

  it("gives up waiting for a result with a HarnessTimeoutError, not the client's timeout code", async () => {
    // A connector registered and an approval synced, but no worker leasing the task.
    const client = new IntegrationClient(harness.serviceOptions());
    await client.registerConnector({ taskTypes: ['approve'], authRequired: false });
    await client.putApprovals([{ id: 'PO-1', schemaId: 'po', approver: 'ada', resolved: false, data: {} }]);
    await client.close();
    const task = harness.createTask({ type: 'approve', approvalId: 'PO-1' });
    const failure = await harness.awaitResult(task.id, 0).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(HarnessTimeoutError);
    expect(failure).not.toBeInstanceOf(TimeoutError);
    expect(failure).toMatchObject({ code: 'harness_timeout', timeoutMs: 0 });
  });
});
