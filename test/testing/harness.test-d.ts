import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { TaskResult } from '../../src/api/index.js';
import { Connector, snapshot, task } from '../../src/connector/index.js';
import type { CreatedTask, TestHarness } from '../../src/testing/index.js';
import type { ConnectorWorker } from '../../src/worker/index.js';

class Purchases extends Connector {
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() }),
      run: async () => {},
    }),
    reject: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
      run: async () => {},
    }),
  };
  readonly source = snapshot({ snapshot: async function* () {} });
}

class Invoices extends Connector {
  readonly tasks = {
    pay: task({ input: z.object({ approval: z.object({ id: z.string() }) }), run: async () => {} }),
  };
  readonly source = snapshot({ snapshot: async function* () {} });
}

declare const harness: TestHarness;
declare const worker: ConnectorWorker<Purchases>;
declare const invoices: ConnectorWorker<Invoices>;

describe('the test harness', () => {
  it('starts a connector and gives its worker, typed by the connector', () => {
    expectTypeOf(harness.start(new Purchases())).resolves.toEqualTypeOf<ConnectorWorker<Purchases>>();
  });

  it('creates a task of one of the worker’s task types, and says which', () => {
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PR-1' });
    expectTypeOf(task).toEqualTypeOf<CreatedTask<'approve'>>();
  });

  it('does not compile with a task type the connector does not declare', () => {
    // @ts-expect-error `aprove` is a typo: the connector declares `approve` and `reject`
    harness.createTask(worker, { type: 'aprove', approvalId: 'PR-1' });
    // @ts-expect-error `pay` is another connector's task type
    harness.createTask(worker, { type: 'pay', approvalId: 'PR-1' });
    harness.createTask(invoices, { type: 'pay', approvalId: 'IN-1' });
  });

  it('requires approveComments when the task type’s schema requires them, and only then', () => {
    // @ts-expect-error `reject` requires comments
    harness.createTask(worker, { type: 'reject', approvalId: 'PR-1' });
    harness.createTask(worker, { type: 'reject', approvalId: 'PR-1', approveComments: 'over budget' });
    harness.createTask(worker, { type: 'approve', approvalId: 'PR-1' });
    harness.createTask(worker, { type: 'approve', approvalId: 'PR-1', approveComments: 'fine' });
    // @ts-expect-error comments are a string
    harness.createTask(worker, { type: 'approve', approvalId: 'PR-1', approveComments: 42 });
  });

  it('awaits the result of a task it created', () => {
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PR-1' });
    expectTypeOf(harness.awaitResult(task)).resolves.toEqualTypeOf<TaskResult>();
    // @ts-expect-error a bare id is not a task the harness created
    void harness.awaitResult('d6f1c6a4-0000-4000-8000-000000000000');
  });
});
