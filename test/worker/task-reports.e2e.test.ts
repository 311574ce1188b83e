import { EventEmitter, getEventListeners } from 'node:events';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { NETWORK_TEXT_LIMIT } from '../../src/internal/bounded.js';
import type { TestHarness } from '../../src/testing/index.js';
import type { ConnectorOptions, ConnectorWorker } from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { captureLogs, type LogLine } from './support/logs.js';
import { MemoryConnector, type MemorySource } from './support/memory-source.js';
import { RewritingProxy } from './support/rewriting-proxy.js';

let harness: TestHarness;
let source: MemorySource;

beforeEach(async () => {
  ({ harness, source } = await openHarness({
    approvals: Array.from({ length: 12 }, (_, n) => `PO-${n + 1}`),
  }));
});

async function startSynced(overrides: Partial<ConnectorOptions> = {}): Promise<{
  worker: ConnectorWorker<MemoryConnector>;
  lines: LogLine[];
  raw: string[];
}> {
  const log = captureLogs();
  const worker = await harness.start(new MemoryConnector(source), {
    logger: { level: 'info', destination: log.destination },
    ...overrides,
  });
  await worker.syncNow();
  return { worker, lines: log.lines, raw: log.raw };
}

async function reportFailures(worker: ConnectorWorker): Promise<Record<string, number>> {
  const { body } = await worker.metrics.render();
  const counts: Record<string, number> = {};
  for (const [, reason, count] of body.matchAll(
    /^approval_connector_task_reports_failed_total\{reason="(\w+)"\} (\d+)$/gm,
  )) {
    counts[reason as string] = Number(count);
  }
  return counts;
}

const errors = (lines: LogLine[]) => lines.filter((line) => line.level >= 50);

describe('a task result the service refuses for good, over HTTP', () => {
  it.each([431, 414, 403])(
    'is sent once when refused with %i, logged with the task id and counted, and frees its slot for the next task',
    async (status) => {
      const { worker, lines } = await startSynced({ poller: { concurrency: 1 } });
      const refused = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
      const fault = harness.faults.inject({
        method: 'PATCH',
        path: `/v2/connector/tasks/${refused.id}`,
        times: 100,
        fault: { type: 'status', status },
      });
      await vi.waitFor(() => expect(errors(lines)).toHaveLength(1), { timeout: 10_000 });
      expect(errors(lines)[0]).toMatchObject({
        msg: 'the service refused the task result; not retrying it',
        taskId: refused.id,
        httpStatus: status,
        status: 'success',
      });
      // One request, not retried: the fault that answers it has 99 of its 100 left.
      expect(harness.faults.list()).toEqual([expect.objectContaining({ id: fault.id, remaining: 99 })]);
      expect(await reportFailures(worker)).toEqual({ refused: 1, exhausted: 0, shutdown: 0 });

      // The only slot is free again: the next task is run and reported.
      const next = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
      expect(await harness.awaitResult(next)).toEqual({ status: 'success' });
      await worker.stop();
      expect(errors(lines)).toHaveLength(1);
      expect(harness.faults.list()).toEqual([expect.objectContaining({ remaining: 99 })]);
    },
  );

  it('gives up at once on the 431 a task id of 100,000 characters meets, logs no more than 512 characters of the id at a time, and runs the next task', async () => {
    const proxy = await RewritingProxy.start(harness.backend.url);
    try {
      const longId = 'x'.repeat(100_000);
      let rewritten = false;
      proxy.rewrite = ({ method, path }, body) => {
        const task = (body as { data?: { task?: { id: string } | null } }).data?.task;
        if (!rewritten && method === 'GET' && path === '/v2/connector/tasks' && task) {
          rewritten = true;
          task.id = longId;
        }
        return body;
      };
      const { worker, lines, raw } = await startSynced({
        service: harness.serviceOptions({ baseUrl: proxy.url }),
        poller: { concurrency: 1 },
      });
      harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
      await vi.waitFor(() => expect(errors(lines)).toHaveLength(1), { timeout: 10_000 });
      expect(errors(lines)[0]).toMatchObject({
        msg: 'the service refused the task result; not retrying it',
        taskId: `${'x'.repeat(NETWORK_TEXT_LIMIT)}…(+${100_000 - NETWORK_TEXT_LIMIT} characters)`,
        httpStatus: 431,
      });
      // The id, its path in the error's message, its stack and its `path`: each bounded, the line a few KB at most.
      const line = raw.find((text) => text.includes('the service refused the task result')) ?? '';
      expect(line).not.toContain('x'.repeat(NETWORK_TEXT_LIMIT + 1));
      expect(line.length).toBeLessThan(8 * NETWORK_TEXT_LIMIT);
      expect(await reportFailures(worker)).toMatchObject({ refused: 1 });

      const next = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
      expect(await harness.awaitResult(next)).toEqual({ status: 'success' });
      await worker.stop();
    } finally {
      await proxy.close();
    }
  });
});

describe('many result reports in flight', () => {
  it('add no more than ten abort listeners to any one signal, the most before Node warns of a leak', async () => {
    // Node 20 prints a MaxListenersExceededWarning past ten, later versions do not: the listeners are counted instead.
    const addListener = EventTarget.prototype.addEventListener;
    let most = 0;
    vi.spyOn(AbortSignal.prototype, 'addEventListener').mockImplementation(function (
      this: AbortSignal,
      ...args: Parameters<EventTarget['addEventListener']>
    ) {
      addListener.apply(this, args);
      if (args[0] === 'abort') most = Math.max(most, getEventListeners(this, 'abort').length);
    });
    const proxy = await RewritingProxy.start(harness.backend.url);
    try {
      let held = 0;
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      proxy.hold = ({ method, path }) => {
        if (method !== 'PATCH' || !path.startsWith('/v2/connector/tasks/')) return;
        held += 1;
        return released;
      };
      const { worker } = await startSynced({
        service: harness.serviceOptions({ baseUrl: proxy.url }),
        poller: { concurrency: 12 },
      });
      const tasks = Array.from({ length: 12 }, (_, index) =>
        harness.createTask(worker, { type: 'approve', approvalId: `PO-${index + 1}` }),
      );
      // Twelve reports wait at the proxy at once.
      await vi.waitFor(() => expect(held).toBe(12), { timeout: 10_000 });
      release();
      for (const task of tasks) expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
      await worker.stop();
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(EventEmitter.defaultMaxListeners);
    } finally {
      vi.restoreAllMocks();
      await proxy.close();
    }
  });
});
