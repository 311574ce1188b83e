import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import { inClientProcess, type Tracing } from './support/client.js';
import type { Outcome } from './support/client-process.js';
import { startServerProcess } from './support/server.js';
import { median, spread } from './support/stats.js';
import { type Row, range, ratio, whole } from './support/table.js';

/** Settings of the benchmark of the kit's traces. */
export interface TracingOverheadOptions {
  /** Rounds; within each, the three setups take turns, in the reverse order every other round. */
  rounds: number;
  /** Approvals of a measured sync, of about 1 KB each. */
  approvals: number;
  /** Tasks of a measured run, with a no-op handler. */
  tasks: number;
  /** Tasks at once. */
  concurrency: number;
  /** Approvals each setup pushes into another system before its measured sync, in the same process. */
  warmUpApprovals: number;
  /** Tasks each setup runs in another system before its measured run, in the same process. */
  warmUpTasks: number;
}

const SETUPS: readonly Tracing[] = ['no-api', 'default', 'sdk'];

interface Run {
  /** Approvals or tasks per second. */
  rate: number;
  /** CPU time of the connector's process per approval or task, in microseconds. */
  cpu: number;
}

/**
 * What the kit's spans cost. The kit's sync (a first sync of approvals of about 1 KB, with its defaults) and its task
 * worker (a no-op handler) each run in a connector process of its own against the reference backend in another,
 * reset before every run, in three setups: without `@opentelemetry/api` (the baseline: every span is the kit's
 * constant no-op), with the API but no SDK (traces off: the API's own no-op), and with an SDK that records every
 * span (traces on, spans dropped at export). Each ratio is the median of the rounds' ratios to the baseline; the
 * goal is on the CPU time per approval or task, which another process sharing the machine moves far less than the
 * rate (the baseline's own rounds give the noise of both).
 */
export async function benchTracingOverhead(options: TracingOverheadOptions): Promise<Row[]> {
  const { batchSize, concurrency } = connectorOptionsSchema.shape.sync.parse({});
  const sync = new Map<Tracing, Run[]>(SETUPS.map((setup) => [setup, []]));
  const tasks = new Map<Tracing, Run[]>(SETUPS.map((setup) => [setup, []]));
  const server = await startServerProcess('reference');
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const setup of round % 2 === 0 ? SETUPS : [...SETUPS].reverse()) {
        await server.reset();
        const measured = await server.createSystem();
        const warmUp = await server.createSystem();
        const pushed: Outcome = await inClientProcess(
          (client) =>
            client.push({
              pusher: 'kit',
              url: server.url,
              token: measured.token,
              count: options.approvals,
              batchSize,
              concurrency,
              warmUp: { token: warmUp.token, count: options.warmUpApprovals },
            }),
          setup,
        );
        sync.get(setup)!.push(runOf(options.approvals, pushed));

        await server.reset();
        const waiting = await server.createSystem(options.tasks);
        const warmUpTasks = await server.createSystem(options.warmUpTasks);
        const ran = await inClientProcess(
          (client) =>
            client.tasks({
              runner: 'kit',
              url: server.url,
              token: waiting.token,
              count: options.tasks,
              concurrency: options.concurrency,
              warmUp: { token: warmUpTasks.token, count: options.warmUpTasks },
            }),
          setup,
        );
        tasks.get(setup)!.push(runOf(options.tasks, ran));
      }
    }
  } finally {
    await server.close();
  }
  return [
    ...rowsOf(`sync, ${whole(options.approvals)} approvals of ~1 KB`, 'approvals/s', sync),
    ...rowsOf(
      `tasks, no-op handler, concurrency ${options.concurrency} (${whole(options.tasks)})`,
      'tasks/s',
      tasks,
    ),
  ];
}

function runOf(count: number, outcome: Outcome): Run {
  return { rate: (count / outcome.elapsedMs) * 1000, cpu: outcome.cpuMicros / count };
}

function rowsOf(name: string, unit: string, runs: Map<Tracing, Run[]>): Row[] {
  const [absent, off, on] = SETUPS.map((setup) => runs.get(setup)!);
  const text = (measured: Run[]) =>
    `${range(spread(measured.map((run) => run.rate)), whole)} ${unit}, ` +
    `${range(spread(measured.map((run) => run.cpu)), (value) => value.toFixed(1))} µs CPU each`;
  const against = (measured: Run[], of: (run: Run) => number) =>
    median(measured.map((run, round) => of(run) / of(absent![round]!)));
  // The spread of the baseline's own rounds around their median: a ratio within it is noise.
  const noise = (of: (run: Run) => number) => {
    const { min, max } = spread(absent!.map((run) => of(run) / median(absent!.map(of))));
    return `${min.toFixed(2)}-${max.toFixed(2)}x`;
  };
  const offCpu = against(off!, (run) => run.cpu);
  return [
    {
      name: `${name}: without @opentelemetry/api`,
      measurement: text(absent!),
      ratio: `1.00x (baseline; rounds ${noise((run) => run.rate)}, CPU ${noise((run) => run.cpu)})`,
    },
    {
      name: `${name}: traces off (API, no SDK)`,
      measurement: text(off!),
      ratio: `${ratio(against(off!, (run) => run.rate))} (CPU ${ratio(offCpu)})`,
      goal: 'CPU ≤ 1.05x (no cost beyond noise)',
      met: offCpu <= 1.05,
    },
    {
      name: `${name}: traces on (SDK, every span recorded)`,
      measurement: text(on!),
      ratio: `${ratio(against(on!, (run) => run.rate))} (CPU ${ratio(against(on!, (run) => run.cpu))})`,
    },
  ];
}
