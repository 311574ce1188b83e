import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SPAN_LINK_LIMIT, type TraceContext } from '../../src/internal/tracing.js';
import { type LookupLinks, LookupQueue } from '../../src/worker/sync/lookup-queue.js';

/** A queue as the runs after tasks use it: each request of one approval, `delayMs` away. */
function afterTasks(delayMs: number, run: (approvalIds: string[]) => Promise<unknown>) {
  const queue = new LookupQueue({ capacity: 1_000, run });
  return {
    requested: (approvalIds: string[]) => queue.request(approvalIds, delayMs),
    stop: () => queue.stop(),
  };
}

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

describe('the lookup queue, as the runs after tasks use it', () => {
  it('runs once, the delay after the first success, for every approval decided until then', async () => {
    const { run, runs } = recordingRun();
    const soon = afterTasks(1_000, run);
    soon.requested(['PO-1']);
    await vi.advanceTimersByTimeAsync(600);
    soon.requested(['PO-2']);
    soon.requested(['PO-1']);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(400);
    expect(runs).toEqual([['PO-1', 'PO-2']]);
  });

  it('serves what succeeds during a run with one more run after it, never two at once', async () => {
    const { run, runs, end, mostAtOnce } = recordingRun();
    const soon = afterTasks(1_000, run);
    soon.requested(['PO-1']);
    await vi.advanceTimersByTimeAsync(1_000);
    for (let n = 2; n <= 50; n += 1) soon.requested([`PO-${n}`]);
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
    const soon = afterTasks(100, async () => {
      calls += 1;
      throw new Error('the service is down');
    });
    soon.requested(['PO-1']);
    await vi.advanceTimersByTimeAsync(100);
    soon.requested(['PO-2']);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toBe(2);
  });

  it('still runs for a request that names no approval, with the ids it has', async () => {
    const { run, runs } = recordingRun();
    const soon = afterTasks(0, run);
    soon.requested([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([[]]);
  });

  it('starts nothing once stopped, and drops what was asked', async () => {
    const { run, runs } = recordingRun();
    const soon = afterTasks(1_000, run);
    soon.requested(['PO-1']);
    soon.stop();
    soon.requested(['PO-2']);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toEqual([]);
  });
});

describe('the lookup queue, as a push path shares it', () => {
  it('moves its timer sooner for a request with a shorter delay, never later', async () => {
    const { run, runs } = recordingRun();
    const queue = new LookupQueue({ capacity: 100, run });
    queue.request(['PO-1'], 1_000);
    queue.request(['PO-2'], 200);
    await vi.advanceTimersByTimeAsync(200);
    expect(runs).toEqual([['PO-1', 'PO-2']]);
    queue.request(['PO-3'], 200);
    queue.request(['PO-4'], 1_000);
    await vi.advanceTimersByTimeAsync(10_000);
    // The second request waits for the first run to end.
    expect(runs).toHaveLength(1);
  });

  it('after a run, arms the next with the shortest delay the waiting requests asked for', async () => {
    const { run, runs, end } = recordingRun();
    const queue = new LookupQueue({ capacity: 100, run });
    queue.request(['PO-1'], 0);
    await vi.advanceTimersByTimeAsync(0);
    queue.request(['PO-2'], 1_000);
    queue.request(['PO-3'], 50);
    end();
    await vi.advanceTimersByTimeAsync(50);
    expect(runs).toEqual([['PO-1'], ['PO-2', 'PO-3']]);
  });

  it('takes at most its capacity of approvals waiting, and answers the rest as overflow', async () => {
    const { run, runs } = recordingRun();
    const queue = new LookupQueue({ capacity: 3, run });
    expect(queue.request(['PO-1', 'PO-2'], 100).overflow).toEqual([]);
    // One already waiting costs nothing; beyond three, the rest is left to the schedule.
    expect(queue.request(['PO-2', 'PO-3', 'PO-4', 'PO-5'], 100).overflow).toEqual(['PO-4', 'PO-5']);
    expect(queue.waiting).toBe(3);
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toEqual([['PO-1', 'PO-2', 'PO-3']]);
    expect(queue.waiting).toBe(0);
  });

  it('says whether the run that served a request succeeded', async () => {
    let fail = false;
    const queue = new LookupQueue({
      capacity: 10,
      run: async () => {
        if (fail) throw new Error('lookup failed');
      },
    });
    const first = queue.request(['PO-1'], 10);
    await vi.advanceTimersByTimeAsync(10);
    await expect(first.served).resolves.toBe(true);
    fail = true;
    const second = queue.request(['PO-1'], 10);
    await vi.advanceTimersByTimeAsync(10);
    await expect(second.served).resolves.toBe(false);
    const dropped = queue.request(['PO-2'], 10);
    queue.stop();
    await expect(dropped.served).resolves.toBe(false);
    expect(queue.request(['PO-3'], 10).overflow).toEqual(['PO-3']);
  });

  it('hands each run the traces of the requests it serves, to link to; not those of requests it has no room for', async () => {
    const given: LookupLinks[] = [];
    const queue = new LookupQueue({ capacity: 2, run: async (_ids, links) => given.push(links) });
    const trace = (name: string) => ({ name }) as unknown as TraceContext;
    queue.request(['PO-1'], 100, trace('D-1'));
    queue.request(['PO-1'], 100, trace('D-2'));
    queue.request(['PO-2'], 100);
    queue.request(['PO-3'], 100, trace('D-3'));
    await vi.advanceTimersByTimeAsync(100);
    expect(given).toEqual([{ contexts: [trace('D-1'), trace('D-2')], count: 2 }]);

    for (let n = 0; n < SPAN_LINK_LIMIT + 5; n += 1) queue.request(['PO-9'], 100, trace(`E-${n}`));
    await vi.advanceTimersByTimeAsync(100);
    expect(given[1]?.count).toBe(SPAN_LINK_LIMIT + 5);
    expect(given[1]?.contexts).toHaveLength(SPAN_LINK_LIMIT);
    queue.request(['PO-1'], 100);
    await vi.advanceTimersByTimeAsync(100);
    expect(given[2]).toEqual({ contexts: [], count: 0 });
  });
});
