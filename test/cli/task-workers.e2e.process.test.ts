import { afterEach, describe, expect, it } from 'vitest';
import { killAll } from './support/processes.js';
import { runTaskWorkers } from './support/task-workers.js';

afterEach(() => killAll());

describe('task workers scaled out', () => {
  it('four task workers, each a process, share 4,000 tasks of one backend and run every action once', async () => {
    const run = await runTaskWorkers({ tasks: 4_000, workers: 4, concurrency: 4, timeoutMs: 120_000 });

    expect(run.results.size).toBe(4_000);
    expect([...run.results.values()].every((status) => status === 'success')).toBe(true);
    // Every task's action ran, and none ran twice, whichever worker took it.
    expect(run.actions.size).toBe(4_000);
    expect([...run.actions.keys()].sort()).toEqual([...run.results.keys()].sort());
    expect([...run.actions.values()].filter((times) => times !== 1)).toEqual([]);
    expect(run.exitCodes).toEqual([0, 0, 0, 0]);
  }, 180_000);
});
