import { inClientProcess } from './support/client.js';
import { startServerProcess } from './support/server.js';
import { median, spread } from './support/stats.js';
import { type Row, range, ratio, whole } from './support/table.js';
import type { TaskRunner } from './support/task-runners.js';

/** Settings of the task throughput benchmark against a hand-written loop. */
export interface TaskBaselineOptions {
  /** Rounds; within each, the loop and the kit take turns, in the reverse order every other round. */
  rounds: number;
  /** Tasks waiting when a measured run starts. */
  tasks: number;
  /** Tasks each runner completes in another system before its measured run, in the same process. */
  warmUp: number;
  /** The concurrencies measured, each a pair of rows. */
  concurrencies: readonly number[];
}

const RUNNERS: readonly TaskRunner[] = ['undici', 'kit'];

interface Run {
  /** Tasks per second. */
  rate: number;
  /** CPU time of the worker's process per task, in microseconds. */
  cpu: number;
  /** Connections the worker opened to the service. */
  connections: number;
}

/**
 * Tasks completed per second with a no-op handler by the kit's worker and by a hand-written undici loop doing the
 * same Get task and Update task result at the same concurrency, each in a process of its own against the reference
 * backend in another, reset before every run and given every task before the run starts. A run is timed from its
 * first Get task request to its last result acknowledged; the ratio is the median of the rounds' ratios, the CPU
 * ratio beside it the same for the worker's process's CPU time per task. The connections each opened are counted
 * (the loop opens one per loop; the kit as many as its pool needs), and shown in the row.
 */
export async function benchTaskBaseline(options: TaskBaselineOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const server = await startServerProcess('reference');
  try {
    for (const concurrency of options.concurrencies) {
      const runs = new Map<TaskRunner, Run[]>(RUNNERS.map((runner) => [runner, []]));
      for (let round = 0; round < options.rounds; round++) {
        for (const runner of round % 2 === 0 ? RUNNERS : [...RUNNERS].reverse()) {
          await server.reset();
          const measured = await server.createSystem(options.tasks);
          const warmUp = await server.createSystem(options.warmUp);
          const outcome = await inClientProcess((client) =>
            client.tasks({
              runner,
              url: server.url,
              token: measured.token,
              count: options.tasks,
              concurrency,
              warmUp: { token: warmUp.token, count: options.warmUp },
            }),
          );
          runs.get(runner)!.push({
            rate: (options.tasks / outcome.elapsedMs) * 1000,
            cpu: outcome.cpuMicros / options.tasks,
            connections: outcome.connections,
          });
        }
      }
      const [undici, kit] = RUNNERS.map((runner) => runs.get(runner)!);
      const connections = (measured: Run[]) => {
        const { min, max } = spread(measured.map((run) => run.connections));
        return min === max ? whole(min) : `${whole(min)}-${whole(max)}`;
      };
      const text = (measured: Run[]) =>
        `${range(spread(measured.map((run) => run.rate)), whole)} tasks/s, ` +
        `${whole(median(measured.map((run) => run.cpu)))} µs CPU/task, ${connections(measured)} conns`;
      const name = `tasks, no-op handler, concurrency ${concurrency} (${whole(options.tasks)})`;
      const rateRatio = median(kit!.map((run, round) => run.rate / undici![round]!.rate));
      const cpuRatio = median(kit!.map((run, round) => run.cpu / undici![round]!.cpu));
      rows.push(
        {
          name: `${name}: hand-written undici loop`,
          measurement: text(undici!),
          ratio: '1.00x (baseline)',
        },
        {
          name: `${name}: kit worker`,
          measurement: text(kit!),
          ratio: `${ratio(rateRatio)} (CPU ${ratio(cpuRatio)})`,
          goal: '≥ 0.9x',
          met: rateRatio >= 0.9,
          why: "the kit's CPU per task (checks, deadline, retries, metrics) is taken from the backend; see the profile",
        },
      );
    }
  } finally {
    await server.close();
  }
  return rows;
}
