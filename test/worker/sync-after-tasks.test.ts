import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Task } from '../../src/api/index.js';
import { SyncAfterTasks } from '../../src/worker/sync/after-tasks.js';

const taskFor = (approvalId: unknown): Task => ({
  id: '5f0c6a52-8c0f-4a53-9d4e-2f6c1f1d2a10',
  type: 'approve',
  data: { approval: { id: approvalId } },
});

/** A run that lasts until the test ends it, recording what it was given and how many ran at once. */
function recordingRun() {
  const runs: string[][] = [];
  const ends: (() => void)[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const run = (approvalIds: string[]) => {
    runs.push(approvalIds);
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    return new Promise<void>((resolve) => {
      ends.push(() => {
        running -= 1;
        resolve();
      });
    });
  };
  return { run, runs, end: () => ends.shift()?.(), mostAtOnce: () => mostAtOnce };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the sync after tasks', () => {
  it('runs once, the delay after the first success, for every approval decided until then', async () => {
    const { run, runs } = recordingRun();
    const soon = new SyncAfterTasks(1_000, run);
    soon.requested(taskFor('PO-1'));
    await vi.advanceTimersByTimeAsync(600);
    soon.requested(taskFor('PO-2'));
    soon.requested(taskFor('PO-1'));
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(400);
    expect(runs).toEqual([['PO-1', 'PO-2']]);
  });

  it('serves what succeeds during a run with one more run after it, never two at once', async () => {
    const { run, runs, end, mostAtOnce } = recordingRun();
    const soon = new SyncAfterTasks(1_000, run);
    soon.requested(taskFor('PO-1'));
    await vi.advanceTimersByTimeAsync(1_000);
    for (let n = 2; n <= 50; n += 1) soon.requested(taskFor(`PO-${n}`));
    // However long the run takes, the next waits for it.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toHaveLength(1);
    end();
    await vi.advanceTimersByTimeAsync(999);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toHaveLength(2);
    expect(runs[1]).toHaveLength(49);
    end();
    // Nothing succeeded since: no third run.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toHaveLength(2);
    expect(mostAtOnce()).toBe(1);
  });

  it('goes on after a run that failed', async () => {
    let calls = 0;
    const soon = new SyncAfterTasks(100, async () => {
      calls += 1;
      throw new Error('the service is down');
    });
    soon.requested(taskFor('PO-1'));
    await vi.advanceTimersByTimeAsync(100);
    soon.requested(taskFor('PO-2'));
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toBe(2);
  });

  it('still runs for a task whose approval has no readable id, with the ids it has', async () => {
    const { run, runs } = recordingRun();
    const soon = new SyncAfterTasks(0, run);
    soon.requested(taskFor(42));
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([[]]);
  });

  it('starts nothing once stopped, and drops what was asked', async () => {
    const { run, runs } = recordingRun();
    const soon = new SyncAfterTasks(1_000, run);
    soon.requested(taskFor('PO-1'));
    soon.stop();
    soon.requested(taskFor('PO-2'));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toEqual([]);
  });
});
