import { beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  StoppingError,
  type TaskAbortReason,
  type TaskContext,
  TaskDeadlineError,
  task,
} from '../../src/connector/index.js';
import { isKitError } from '../../src/kit-error.js';
import type { TestHarness } from '../../src/testing/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, type MemorySource, taskInputs } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1'] })));

/** A connector whose `approve` handler waits for its signal, and notes the reason it was aborted with. */
class Watching extends MemoryConnector {
  readonly started = Promise.withResolvers<void>();
  reasons: unknown[] = [];
  override readonly tasks = {
    approve: task({
      input: taskInputs.approve,
      run: async (_input, { signal }: TaskContext) => {
        this.started.resolve();
        await new Promise<never>((_resolve, reject) =>
          signal.addEventListener(
            'abort',
            () => {
              this.reasons.push(signal.reason);
              reject(signal.reason);
            },
            { once: true },
          ),
        );
      },
    }),
    reject: task({ input: taskInputs.reject, run: async () => {} }),
  };
}

describe("a task handler's signal.reason", () => {
  it('is typed as a TaskDeadlineError or a StoppingError, which `code` tells apart', () => {
    expectTypeOf<TaskContext['signal']['reason']>().toEqualTypeOf<TaskAbortReason | undefined>();
    const reason = undefined as TaskAbortReason | undefined;
    if (reason?.code === 'task_deadline') expectTypeOf(reason).toEqualTypeOf<TaskDeadlineError>();
    if (reason?.code === 'stopping') expectTypeOf(reason).toEqualTypeOf<StoppingError>();
  });

  it("says the task's deadline passed: a TaskDeadlineError, and the task is answered serviceUnavailable", async () => {
    const worker = await harness.start(new Watching(source), { poller: { timeoutMs: 100 } });
    await worker.syncNow();
    const created = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });

    expect(await harness.awaitResult(created, 5_000)).toEqual({
      status: 'serviceUnavailable',
      meta: { code: 'TimeoutError', message: 'The task took longer than its deadline of 100 ms' },
    });
    const [reason] = worker.connector.reasons;
    expect(reason).toBeInstanceOf(TaskDeadlineError);
    expect(reason).toMatchObject({ code: 'task_deadline', name: 'TaskDeadlineError', timeoutMs: 100 });
    expect(isKitError(reason)).toBe(true);
  });

  it('says the worker is shutting down: a StoppingError once the grace time is over, and the task is handed back', async () => {
    const worker = await harness.start(new Watching(source), { shutdown: { graceMs: 0, forceMs: 2_000 } });
    await worker.syncNow();
    const created = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await worker.connector.started.promise;

    await worker.stop();
    const [reason] = worker.connector.reasons;
    expect(reason).toBeInstanceOf(StoppingError);
    expect(reason).toMatchObject({ code: 'stopping', message: 'The connector is shutting down' });
    // Not answered: the service offers the task again once its lease ends.
    expect(harness.task(created.id)).toMatchObject({ status: 'leased' });
    expect(harness.task(created.id)?.result).toBeUndefined();
  });
});
