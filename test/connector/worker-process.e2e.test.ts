import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestHarness, type TestHarness } from '../../src/testing/index.js';

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

beforeEach(async () => {
  harness = await createTestHarness();
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await harness.close();
});

function startWorker(env: Record<string, string>): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/connector/support/worker-process.ts'], {
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
});
