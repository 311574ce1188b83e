import { setTimeout as sleep } from 'node:timers/promises';
import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import { inClientProcess } from './support/client.js';
import { type BenchSystem, type ServerProcess, startServerProcess } from './support/server.js';
import { percentile } from './support/stats.js';
import { type Row, whole } from './support/table.js';

/** Settings of the idle worker benchmark. */
export interface IdleWorkerOptions {
  /** Workers, each with a system of its own, all in one process: each adds samples, none adds load. */
  workers: number;
  /** How long the workers run before anything is counted, so that they have reached their longest idle wait. */
  settleMs: number;
  /** How long their Get task requests are counted while no task comes. */
  quietMs: number;
  /** How long tasks are then created, one at a time per system. */
  taskPhaseMs: number;
  /** The gap before each task of a system, drawn evenly from this range, in milliseconds. */
  gapMs: readonly [number, number];
}

/** Waits until every task of the systems has its result, and gives each one's time from creation to result. */
async function resultTimes(server: ServerProcess, systems: readonly BenchSystem[]): Promise<number[]> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const tasks = (await Promise.all(systems.map(({ systemId }) => server.taskTimes(systemId)))).flat();
    if (tasks.every((task) => task.completedAt !== undefined)) {
      if (tasks.length === 0) throw new Error('no task was created: the task phase is shorter than a gap');
      return tasks.map((task) => task.completedAt! - task.createdAt);
    }
    if (performance.now() > deadline) throw new Error('tasks still without a result 30 s after the last one');
    await sleep(200);
  }
}

/**
 * Kit workers with the default poller (each with a system of its own, in one process) against the reference
 * backend in another. First nothing comes: their Get task requests are counted. Then each system gets a task now and
 * then, at random moments, and each task's time from creation to result is read from the backend's own records.
 */
export async function benchIdleWorker(options: IdleWorkerOptions): Promise<Row[]> {
  const { idleMinMs, idleMaxMs } = connectorOptionsSchema.shape.poller.parse({});
  const server = await startServerProcess('reference');
  try {
    const systems: BenchSystem[] = [];
    for (let i = 0; i < options.workers; i++) systems.push(await server.createSystem());
    const { perSecond, latencies } = await inClientProcess(async (client) => {
      await client.idleStart(
        server.url,
        systems.map((system) => system.token),
      );
      await sleep(options.settleMs);
      const before = await client.idleLeases();
      const startedAt = performance.now();
      await sleep(options.quietMs);
      const leases = (await client.idleLeases()) - before;
      const perSecond = leases / options.workers / ((performance.now() - startedAt) / 1000);

      const end = performance.now() + options.taskPhaseMs;
      const [shortest, longest] = options.gapMs;
      await Promise.all(
        systems.map(async ({ systemId }) => {
          for (;;) {
            const gap = shortest + Math.random() * (longest - shortest);
            if (performance.now() + gap > end) return;
            await sleep(gap);
            await server.createTask(systemId);
          }
        }),
      );
      return { perSecond, latencies: await resultTimes(server, systems) };
    });
    const p = (fraction: number) => `${whole(percentile(latencies, fraction))} ms`;
    // The poller's defaults; the sync is off, so that every request counted is a Get task.
    const defaults = `poller defaults: idleMinMs ${whole(idleMinMs)}, idleMaxMs ${whole(idleMaxMs)}; sync off`;
    const p99 = percentile(latencies, 0.99);
    return [
      {
        name: `idle worker (${defaults}): Get task requests while no task comes`,
        measurement: `${perSecond.toFixed(2)} req/s (${options.workers} workers, ${whole(options.quietMs / 1000)} s)`,
        ratio: '',
        goal: '≤ 1 req/s',
        met: perSecond <= 1,
        why: 'the idle wait is too short',
      },
      {
        name: `idle worker (${defaults}): task created → result`,
        measurement: `p50 ${p(0.5)}, p99 ${p(0.99)}, max ${p(1)} (${whole(latencies.length)} tasks)`,
        ratio: '',
        goal: 'p99 ≤ 1,500 ms',
        met: p99 <= 1_500,
        why: 'the idle wait, or the machine, is too slow',
      },
    ];
  } finally {
    await server.close();
  }
}
