import { beforeEach, describe, expect, it, vi } from 'vitest';

import { type TaskContext, task } from '../../src/connector/index.js';
import { sleep } from '../../src/internal/wait.js';
import type { TestHarness } from '../../src/testing/index.js';
import type { ConnectorOptions, ConnectorWorker } from '../../src/worker/index.js';
import { ManualClock } from '../backend/helpers.js';
import { openHarness } from './support/harness.js';
import { captureLogs } from './support/logs.js';
import { MemoryConnector, type MemorySource, taskInputs } from './support/memory-source.js';
import { recordingDispatcher } from './support/recording-dispatcher.js';

let harness: TestHarness;
let source: MemorySource;
/** The service's clock: a lease ends only when a test moves it. */
let serviceClock: ManualClock;

beforeEach(async () => {
  serviceClock = new ManualClock(Date.now());
  ({ harness, source } = await openHarness({ approvals: ['PO-1'], backend: { now: serviceClock.now } }));
});

/** A connector whose `approve` handler is the one given; `started` lists each start of a handler. */
class Scripted extends MemoryConnector {
  readonly started: string[] = [];
  approve: (context: TaskContext) => Promise<void> = async () => {};
  override readonly tasks = {
    approve: task({
      input: taskInputs.approve,
      run: async ({ approval }, context) => {
        this.started.push(approval.id);
        await this.approve(context);
        this.actions.push({ type: 'approve', approvalId: approval.id, key: context.idempotencyKey });
      },
    }),
    reject: task({ input: taskInputs.reject, run: async () => {} }),
  };
}

async function startScripted(overrides: Partial<ConnectorOptions> = {}): Promise<ConnectorWorker<Scripted>> {
  const worker = await harness.start(new Scripted(source), overrides);
  await worker.syncNow();
  return worker;
}

describe('a task deadline', () => {
  it('aborts a handler slower than the lease at tasks.timeoutMs and reports before the lease ends, so a second worker never runs it', async () => {
    const first = await startScripted({ poller: { timeoutMs: 200 } });
    // An action slower than the service's lease (60 s), which stops when its signal says so.
    first.connector.approve = ({ signal }) => sleep(120_000, signal);
    const task = harness.createTask(first, { type: 'approve', approvalId: 'PO-1' });

    expect(await harness.awaitResult(task, 5_000)).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'TimeoutError', message: 'The task took longer than its deadline of 200 ms' },
    });
    expect(first.connector.started).toEqual(['PO-1']);

    // The lease ends on the service's clock; a second worker then polls and finds nothing to run.
    serviceClock.advance(61_000);
    const recorder = recordingDispatcher();
    const second = await harness.start(new Scripted(source), {
      service: harness.serviceOptions({ dispatcher: recorder.dispatcher }),
    });
    await vi.waitFor(() =>
      expect(
        recorder.requests.filter((request) => request.path === '/v2/connector/tasks').length,
      ).toBeGreaterThan(3),
    );
    await second.stop();
    await recorder.close();
    expect(second.connector.started).toEqual([]);
    expect(harness.task(task.id)).toMatchObject({ status: 'completed', deliveries: 1 });
    expect(first.connector.actions).toEqual([]);
  });

  it('does not log a handler that honoured its deadline and failed as finishing after it', async () => {
    source.put('PO-2', '2026-05-01T10:00:00.000Z');
    source.put('PO-3', '2026-05-01T10:00:00.000Z');
    const log = captureLogs();
    const worker = await startScripted({
      poller: { timeoutMs: 100 },
      logger: { level: 'warn', destination: log.destination },
    });
    worker.connector.approve = ({ signal }) => sleep(120_000, signal);
    const created = ['PO-1', 'PO-2', 'PO-3'].map((approvalId) =>
      harness.createTask(worker, { type: 'approve', approvalId }),
    );
    for (const task of created) {
      expect(await harness.awaitResult(task, 5_000)).toMatchObject({
        status: 'serviceUnavailable',
        meta: { code: 'TimeoutError' },
      });
    }
    await worker.stop();
    for (const task of created) {
      expect(
        log.lines.filter((line) => line.taskId === task.id).map(({ msg, level }) => ({ msg, level })),
      ).toEqual([
        { msg: 'task passed its deadline; aborting its signal', level: 40 },
        { msg: 'task failed', level: 40 },
      ]);
    }
  });

  it('reports a result that comes after the deadline, and logs it as late', async () => {
    const log = captureLogs();
    const worker = await startScripted({
      poller: { timeoutMs: 100 },
      logger: { level: 'warn', destination: log.destination },
    });
    // A source call that ignores the abort and succeeds a little later.
    worker.connector.approve = async ({ signal }) => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });

    expect(await harness.awaitResult(task, 5_000)).toEqual({ status: 'success' });
    expect(worker.connector.actions).toEqual([{ type: 'approve', approvalId: 'PO-1', key: task.id }]);
    expect(log.lines.map(({ msg, taskId, timeoutMs }) => ({ msg, taskId, timeoutMs }))).toEqual([
      { msg: 'task passed its deadline; aborting its signal', taskId: task.id, timeoutMs: 100 },
      { msg: 'task finished after its deadline; reporting it late', taskId: task.id, timeoutMs: 100 },
    ]);
  });
});

describe('the clocks of a task', () => {
  it('reports a task during which the wall clock steps back an hour', async () => {
    let wallClock = Date.now();
    const worker = await startScripted({ now: () => wallClock });
    worker.connector.approve = async () => {
      wallClock -= 3_600_000;
    };
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });

    expect(await harness.awaitResult(task, 5_000)).toEqual({ status: 'success' });
    expect(worker.connector.actions).toHaveLength(1);
    const { body } = await worker.metrics.render();
    expect(body).toContain('approval_connector_tasks_total{type="approve",status="success"} 1');
    expect(body).toContain('approval_connector_task_duration_seconds_count{type="approve"} 1');
  });
});
