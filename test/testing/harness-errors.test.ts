import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/backend/index.js';
import { NotFoundError, TimeoutError } from '../../src/client/index.js';
import { createTestHarness, HarnessTimeoutError, type TestHarness } from '../../src/testing/index.js';
import { MemoryConnector, MemorySource } from '../worker/support/memory-source.js';

let harness: TestHarness;

beforeEach(async () => {
  harness = await createTestHarness();
});
afterEach(async () => {
  await harness.close();
});

describe('the errors of the test harness', () => {
  it("answers awaitResult for an unknown task with the backend's not-found error, not the client's not_found code", async () => {
    const unknown = { id: 'no-such-task', type: 'approve' };
    const failure = await harness.awaitResult(unknown).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceError);
    expect(failure).not.toBeInstanceOf(NotFoundError);
    expect(failure).toMatchObject({
      code: 'service',
      kind: 'Not Found',
      message: 'Not Found. Failed to find the an item tasks no-such-task',
    });
  });

  it("gives up waiting for a result with a HarnessTimeoutError, not the client's timeout code", async () => {
    // A connector registered and an approval synced, but no worker leasing the task.
    const source = new MemorySource();
    source.put('PO-1', '2026-05-01T10:00:00.000Z');
    const worker = await harness.start(new MemoryConnector(source), { poller: { enabled: false } });
    await worker.syncNow();
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    const failure = await harness.awaitResult(task, 0).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(HarnessTimeoutError);
    expect(failure).not.toBeInstanceOf(TimeoutError);
    expect(failure).toMatchObject({ code: 'harness_timeout', timeoutMs: 0 });
  });
});
