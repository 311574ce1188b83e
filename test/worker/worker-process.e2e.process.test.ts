import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestHarness } from '../../src/testing/index.js';
import { SHUTDOWN_MARGIN_MS } from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';

// Workers as separate processes, against the reference backend over HTTP: whether a process ends, and when, is
// the point here, and only a process of its own shows it.
const root = fileURLToPath(new URL('../..', import.meta.url));

interface Worker {
  child: ChildProcess;
  /** The JSON log lines written so far. */
  lines: () => { msg: string; [key: string]: unknown }[];
  /** Resolves with the exit code, or `'still running'` when the process has not ended `ms` after the call. */
  exit: (ms: number) => Promise<number | string | null>;
}

let harness: TestHarness;
const children: ChildProcess[] = [];

beforeEach(async () => ({ harness } = await openHarness()));
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function startWorker(env: Record<string, string>): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx/esm', 'test/worker/support/worker-process.ts'], {
    cwd: root,
    env: {
      ...process.env,
      APPROVAL_URL: harness.backend.url,
      CONNECTOR_TOKEN: harness.tenant.connectorToken,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.resume();
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    // The last piece of the output may be a line still being written.
    lines: () =>
      out
        .split('\n')
        .slice(0, -1)
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line)),
    exit: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          exited,
          new Promise<string>((resolve) => {
            timer = setTimeout(() => resolve('still running'), ms);
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

const messages = (worker: Worker) => worker.lines().map((line) => line.msg);

describe('a worker process', () => {
  it('without task polling and without an operations port stays alive after its first sync, and exits 0 on SIGTERM', async () => {
    const worker = startWorker({ WORKER: 'sync-only' });
    await vi.waitFor(() => expect(messages(worker)).toContain('sync run finished'), { timeout: 15_000 });
    expect(harness.approvals().map((approval) => approval.id)).toEqual(['PO-1', 'PO-2']);
    // Ended by itself, it would have done so as soon as the sync run was over.
    expect(await worker.exit(1_000)).toBe('still running');

    worker.child.kill('SIGTERM');
    expect(await worker.exit(10_000)).toBe(0);
    expect(messages(worker).at(-1)).toBe('connector stopped');
  }, 30_000);

  it('ends at the shutdown deadline after SIGTERM while handlers that ignore their signal hold it, logging their task ids', async () => {
    const graceMs = 300;
    const forceMs = 300;
    const worker = startWorker({
      WORKER: 'stuck-handler',
      GRACE_MS: String(graceMs),
      FORCE_MS: String(forceMs),
    });
    await vi.waitFor(() => expect(messages(worker)).toContain('sync run finished'), { timeout: 15_000 });
    // The worker runs in its own process, so the tasks are created on the backend directly.
    const systemId = harness.tenant.system.id;
    const tasks = [
      harness.backend.createTask({ systemId, type: 'approve', approvalId: 'PO-1' }),
      harness.backend.createTask({ systemId, type: 'approve', approvalId: 'PO-2' }),
    ];
    await vi.waitFor(() => {
      for (const task of tasks) expect(harness.task(task.id)?.status).toBe('leased');
    });

    const signalledAt = performance.now();
    worker.child.kill('SIGTERM');
    const code = await worker.exit(10_000);
    const tookMs = performance.now() - signalledAt;

    expect(code).toBe(0);
    // The deadline, with a generous allowance for a busy machine: without it the process would never end.
    expect(tookMs).toBeLessThan(graceMs + forceMs + SHUTDOWN_MARGIN_MS + 3_000);
    const unknown = worker.lines().find((line) => line.msg.startsWith('tasks whose outcome is unknown'));
    expect(unknown).toMatchObject({ level: 50 });
    expect([...((unknown?.taskIds as string[]) ?? [])].sort()).toEqual(tasks.map((task) => task.id).sort());
    // Not reported: the service offers them again once their lease ends.
    for (const task of tasks) expect(harness.task(task.id)?.result).toBeUndefined();
    harness.backend.expireLeases({ systemId: harness.tenant.system.id });
    for (const task of tasks) expect(harness.task(task.id)?.status).toBe('waiting');
  }, 30_000);
});
