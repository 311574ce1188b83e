import { EventEmitter } from 'node:events';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type TaskContext, task } from '../../src/connector/index.js';
import { ValidationError } from '../../src/errors.js';
import type { TestHarness } from '../../src/testing/index.js';
import {
  type ConnectorOptions,
  type ConnectorWorker,
  runConnector,
  SHUTDOWN_MARGIN_MS,
} from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { captureLogs } from './support/logs.js';
import { MemoryConnector, type MemorySource, taskInputs } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1'] })));

/** A connector whose `approve` handler is the one given. */
class Scripted extends MemoryConnector {
  approve: (context: TaskContext) => Promise<void> = async () => {};
  override readonly tasks = {
    approve: task({
      input: taskInputs.approve,
      run: async ({ approval }, context) => {
        await this.approve(context);
        this.actions.push({ type: 'approve', approvalId: approval.id, key: context.idempotencyKey });
      },
    }),
    reject: task({ input: taskInputs.reject, run: async () => {} }),
  };
}

async function startScripted(overrides: Partial<ConnectorOptions>): Promise<ConnectorWorker<Scripted>> {
  const worker = await harness.start(new Scripted(source), overrides);
  await worker.syncNow();
  return worker;
}

/**
 * Resolves once the handler has started. The service marks a task leased before its answer reaches the worker, and a
 * stop in between ends the lease request, not a running handler: a test of what stop() does with a running handler
 * waits for this, not for the task to read leased.
 */
function handlerStarted(worker: ConnectorWorker<Scripted>, handler: (context: TaskContext) => Promise<void>) {
  return new Promise<void>((resolve) => {
    worker.connector.approve = (context) => {
      resolve();
      return handler(context);
    };
  });
}

/** How long `stop()` took, in milliseconds. */
async function timeStop(worker: ConnectorWorker<Scripted>): Promise<number> {
  const startedAt = performance.now();
  await worker.stop();
  return performance.now() - startedAt;
}

const graceMs = 100;
const forceMs = 100;
// The bound stop() keeps, with a generous allowance for a busy machine.
const deadlineMs = graceMs + forceMs + SHUTDOWN_MARGIN_MS + 3_000;

describe('a bounded shutdown', () => {
  it('stop() resolves by its deadline when a handler never settles and ignores its signal, and logs the task id', async () => {
    const log = captureLogs();
    const worker = await startScripted({
      shutdown: { graceMs, forceMs },
      logger: { level: 'warn', destination: log.destination },
    });
    const started = handlerStarted(worker, () => new Promise(() => {}));
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await started;

    expect(await timeStop(worker)).toBeLessThan(deadlineMs);
    expect(worker.lifecycle).toBe('stopped');
    expect(log.lines).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'tasks whose outcome is unknown at the shutdown deadline: not reported, so the service offers them again',
        taskIds: [task.id],
      }),
    );
    expect(harness.task(task.id)?.result).toBeUndefined();
  });

  it('stop() resolves by its deadline when the service never answers a state write', async () => {
    const log = captureLogs();
    const worker = await harness.start(new Scripted(source), {
      shutdown: { graceMs, forceMs },
      logger: { level: 'warn', destination: log.destination },
    });
    harness.faults.inject({
      method: 'PUT',
      path: '/v2/connector/state',
      times: 10,
      fault: { type: 'delay', ms: 8_000 },
    });
    // The run's cursor write hangs; the write stop() makes again hangs too.
    const run = worker.syncNow();
    await vi.waitFor(() => expect(harness.faults.list()[0]?.remaining).toBe(9));

    expect(await timeStop(worker)).toBeLessThan(deadlineMs);
    expect(worker.lifecycle).toBe('stopped');
    await expect(run).rejects.toMatchObject({ code: 'stopping' });
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: 50, msg: 'saving the connector state failed' }),
    );
    harness.faults.clear();
  });

  it('reports the result a handler ignoring its signal returns in the force time, rather than handing back a task whose action ran', async () => {
    const worker = await startScripted({ shutdown: { graceMs: 50, forceMs: 5_000 } });
    const started = handlerStarted(worker, async ({ signal }) => {
      // The action goes on in the source after the abort, and succeeds.
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await started;

    await worker.stop();
    expect(worker.connector.actions).toEqual([{ type: 'approve', approvalId: 'PO-1', key: task.id }]);
    expect(harness.task(task.id)).toMatchObject({ status: 'completed', result: { status: 'success' } });
  });
});

describe('runConnector at the stop deadline', () => {
  it('calls the exit it is given, with the exit code, once the stop deadline has passed since the signal', async () => {
    const worker = await startScripted({ shutdown: { graceMs, forceMs } });
    const signals = new EventEmitter();
    const exits: number[] = [];
    const run = runConnector(worker, { signals: signals as never, exit: (code) => exits.push(code) });
    signals.emit('SIGTERM', 'SIGTERM');
    expect(await run).toBe(0);
    // stop() was quick; the process is ended only at the deadline, if it still runs then.
    expect(exits).toEqual([]);
    await vi.waitFor(() => expect(exits).toEqual([0]), { timeout: worker.stopDeadlineMs + 3_000 });
  });

  it('tells onSignal the signal before the stop begins, and stops all the same when it throws', async () => {
    const connector = await startScripted({ shutdown: { graceMs, forceMs } });
    const signals = new EventEmitter();
    const seen: { signal: string; lifecycle: string }[] = [];
    const run = runConnector(connector, {
      signals: signals as never,
      onSignal: (signal) => {
        seen.push({ signal, lifecycle: connector.lifecycle });
        throw new Error('a broken observer');
      },
    });
    signals.emit('SIGINT', 'SIGINT');
    expect(await run).toBe(0);
    expect(seen).toEqual([{ signal: 'SIGINT', lifecycle: 'running' }]);
    expect(connector.lifecycle).toBe('stopped');
  });

  it('ends nothing with a stand-in signal source unless given an exit', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    try {
      const worker = await startScripted({ shutdown: { graceMs, forceMs } });
      const signals = new EventEmitter();
      const run = runConnector(worker, { signals: signals as never });
      signals.emit('SIGTERM', 'SIGTERM');
      expect(await run).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, worker.stopDeadlineMs + 200));
      expect(exit).not.toHaveBeenCalled();
    } finally {
      exit.mockRestore();
    }
  });
});

describe('runConnector given a connector and its options', () => {
  it('builds the worker, runs it until SIGTERM, and resolves with 0 once it stopped', async () => {
    const signals = new EventEmitter();
    const options = harness.connectorOptions({ shutdown: { graceMs, forceMs } });
    const run = runConnector(new MemoryConnector(source), options, { signals: signals as never });
    await vi.waitFor(() =>
      expect(harness.backend.getConnector(harness.tenant.system.id).taskTypes).toEqual(['approve', 'reject']),
    );
    signals.emit('SIGTERM', 'SIGTERM');
    expect(await run).toBe(0);
  });

  it('rejects a bad option with a ValidationError before it handles any signal', async () => {
    const signals = new EventEmitter();
    const options = harness.connectorOptions({ sync: { batchSize: 0 } });
    await expect(
      runConnector(new MemoryConnector(source), options, { signals: signals as never }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).toBe(0);
  });
});
