import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import { inClientProcess } from './support/client.js';
import type { Outcome } from './support/client-process.js';
import type { Pusher } from './support/pushers.js';
import { startServerProcess } from './support/server.js';
import { median, spread } from './support/stats.js';
import { type Row, range, ratio, whole } from './support/table.js';

/** Settings of the sync benchmark against hand-written loops. */
export interface SyncBaselineOptions {
  /** Rounds; within each, the three pushers take turns, in the reverse order every other round. */
  rounds: number;
  /** Approvals of the kit's and the undici loop's measured runs. */
  count: number;
  /** Approvals of the naive connector's measured run (it is some 20 times slower). */
  naiveCount: number;
  /** Approvals each pusher sends into another system before its measured run, in the same process. */
  warmUp: number;
  /**
   * The same for the naive connector: its one request per approval keeps getting faster for some 15,000 requests,
   * as V8 optimizes the path, so it gets at least that many.
   */
  naiveWarmUp: number;
}

const PUSHERS: readonly Pusher[] = ['undici', 'kit', 'fetch'];

interface Run {
  /** Approvals per second. */
  rate: number;
  /** CPU time of the pushing process per approval, in microseconds. */
  cpu: number;
}

/**
 * A first sync of approvals of about 1 KB each by the kit with its defaults, by a hand-written undici loop sending
 * the same batches at the same concurrency, and by a naive connector (one approval per request, `fetch`), each in a
 * process of its own against the reference backend in another, reset to an empty store before every run. The rates
 * and CPU times are the pushing process's; each ratio is the median of the rounds' ratios.
 */
export async function benchSyncBaseline(options: SyncBaselineOptions): Promise<Row[]> {
  const { batchSize, concurrency } = connectorOptionsSchema.shape.sync.parse({});
  const runs = new Map<Pusher, Run[]>(PUSHERS.map((pusher) => [pusher, []]));
  const server = await startServerProcess('reference');
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const pusher of round % 2 === 0 ? PUSHERS : [...PUSHERS].reverse()) {
        const naive = pusher === 'fetch';
        const count = naive ? options.naiveCount : options.count;
        await server.reset();
        const measured = await server.createSystem();
        const warmUp = await server.createSystem();
        const outcome: Outcome = await inClientProcess((client) =>
          client.push({
            pusher,
            url: server.url,
            token: measured.token,
            count,
            batchSize,
            concurrency,
            warmUp: { token: warmUp.token, count: naive ? options.naiveWarmUp : options.warmUp },
          }),
        );
        runs.get(pusher)!.push({ rate: (count / outcome.elapsedMs) * 1000, cpu: outcome.cpuMicros / count });
      }
    }
  } finally {
    await server.close();
  }
  const [undici, kit, naive] = PUSHERS.map((pusher) => runs.get(pusher)!);
  const rounds = (of: (round: number) => number) => median(kit!.map((_, round) => of(round)));
  const rates = (measured: Run[]) => range(spread(measured.map((run) => run.rate)), whole);
  const cpus = (measured: Run[]) =>
    range(spread(measured.map((run) => run.cpu)), (value) => value.toFixed(1));
  const size = `${whole(options.count)} approvals of ~1 KB`;
  const rateRatio = rounds((round) => kit![round]!.rate / undici![round]!.rate);
  const cpuRatio = rounds((round) => kit![round]!.cpu / undici![round]!.cpu);
  const naiveRatio = rounds((round) => kit![round]!.rate / naive![round]!.rate);
  return [
    {
      name: `sync ${size}: hand-written undici loop, batch ${batchSize}, concurrency ${concurrency}`,
      measurement: `${rates(undici!)} approvals/s`,
      ratio: '1.00x (baseline)',
    },
    {
      name: `sync ${size}: kit defaults (batch ${batchSize}, concurrency ${concurrency})`,
      measurement: `${rates(kit!)} approvals/s`,
      ratio: ratio(rateRatio),
      goal: '≥ 0.95x',
      met: rateRatio >= 0.95,
      why: "the backend stores approvals slower than both send them; the kit's extra CPU is taken from it",
    },
    {
      name: 'client CPU per approval: hand-written undici loop',
      measurement: `${cpus(undici!)} µs`,
      ratio: '1.00x (baseline)',
    },
    {
      name: 'client CPU per approval: kit defaults',
      measurement: `${cpus(kit!)} µs`,
      ratio: `${ratio(cpuRatio)} CPU`,
      goal: '≤ 1.3x',
      met: cpuRatio <= 1.3,
      why: 'the check of each approval and the sync loop; see the profile',
    },
    {
      name:
        `sync ${whole(options.naiveCount)} approvals of ~1 KB: naive connector (fetch, one per request), ` +
        `after ${whole(options.naiveWarmUp)} of warm-up`,
      measurement: `${rates(naive!)} approvals/s`,
      ratio: '1.00x (baseline)',
    },
    {
      name: 'sync: kit defaults vs the naive connector',
      measurement: `${whole(median(kit!.map((run) => run.rate)))} approvals/s`,
      ratio: ratio(naiveRatio),
      goal: '≥ 20x',
      met: naiveRatio >= 20,
      why: "the backend, not the connector, bounds the kit's rate",
    },
  ];
}
