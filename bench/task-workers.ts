import { runTaskWorkers } from '../test/cli/support/task-workers.js';
import { median } from './support/stats.js';
import { type Row, ratio, whole } from './support/table.js';

/** Settings of the task workers benchmark. */
export interface TaskWorkersBenchOptions {
  /** Rounds; within each, 1 and 4 workers alternate, so a slow moment of the machine hits both. */
  rounds: number;
  /** The scenarios: tasks per run, and how long each action takes. */
  scenarios: readonly { label: string; tasks: number; handlerMs: number }[];
}

const WORKER_COUNTS = [1, 4] as const;

/**
 * Tasks completed per second by 1 and by 4 task workers (`connector run`, `CONNECTOR_ROLE=tasks`, 4 tasks at once
 * each), every worker and the reference backend a process of its own. Reported, not checked: on a machine with
 * fewer cores than processes they share the CPU.
 */
export async function benchTaskWorkers(options: TaskWorkersBenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of options.scenarios) {
    const rates = new Map<number, number[]>(WORKER_COUNTS.map((workers) => [workers, []]));
    for (let round = 0; round < options.rounds; round += 1) {
      for (const workers of round % 2 === 0 ? WORKER_COUNTS : [...WORKER_COUNTS].reverse()) {
        const run = await runTaskWorkers({
          tasks: scenario.tasks,
          workers,
          concurrency: 4,
          handlerMs: scenario.handlerMs,
          timeoutMs: 10 * 60_000,
        });
        if ([...run.actions.values()].some((times) => times !== 1) || run.actions.size !== scenario.tasks) {
          throw new Error(`${workers} workers did not run each of ${scenario.tasks} actions once`);
        }
        rates.get(workers)!.push(run.tasksPerSecond);
      }
    }
    const baseline = median(rates.get(1)!);
    for (const workers of WORKER_COUNTS) {
      const rate = median(rates.get(workers)!);
      rows.push({
        name: `task workers (processes), ${workers} worker${workers === 1 ? '' : 's'}, ${scenario.label}`,
        measurement: `${whole(rate)} tasks/s`,
        ratio: workers === 1 ? '1.00x (baseline)' : ratio(rate / baseline),
      });
    }
  }
  return rows;
}
