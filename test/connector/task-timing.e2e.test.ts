import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConnectorOptions, TaskContext, TaskHandlers } from '../../src/connector/index.js';
import { createTestHarness, type TestHarness } from '../../src/testing/index.js';
import { MemoryConnector, MemorySource, type taskSchemas } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;

beforeEach(async () => {
  harness = await createTestHarness();
  source = new MemorySource();
  source.put('PO-1', '2026-05-01T10:00:00.000Z');
});
afterEach(async () => {
  await harness.close();
});

/** A connector whose `approve` handler is the one given. */
class Scripted extends MemoryConnector {
  approve: (context: TaskContext) => Promise<void> = async () => {};
  override readonly handlers: TaskHandlers<typeof taskSchemas> = {
    approve: async ({ approval }, context) => {
      await this.approve(context);
      this.actions.push({ type: 'approve', approvalId: approval.id, key: context.idempotencyKey });
    },
    reject: async () => {},
  };
}

async function startScripted(overrides: Partial<ConnectorOptions> = {}): Promise<Scripted> {
  const connector = await harness.start((options) => new Scripted(options, source), overrides);
  await connector.syncNow();
  return connector;
}

describe('the clocks of a task', () => {
  it('reports a task during which the wall clock steps back an hour', async () => {
    let wallClock = Date.now();
    const connector = await startScripted({ now: () => wallClock });
    connector.approve = async () => {
      wallClock -= 3_600_000;
    };
    const task = harness.createTask({ type: 'approve', approvalId: 'PO-1' });

    expect(await harness.awaitResult(task.id, 5_000)).toEqual({ status: 'success' });
    expect(connector.actions).toHaveLength(1);
    const { body } = await connector.metrics.render();
    expect(body).toContain('approval_connector_tasks_total{type="approve",status="success"} 1');
    expect(body).toContain('approval_connector_task_duration_seconds_count{type="approve"} 1');
  });
});
