import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import { inClientProcess } from './support/client.js';
import type { Pusher } from './support/pushers.js';
import { startServerProcess } from './support/server.js';
import { median, spread } from './support/stats.js';
import { type Row, range, ratio, whole } from './support/table.js';

/** Settings of the peak RSS benchmark. */
export interface PeakRssOptions {
  /** Rounds; within each, the runs take turns, in the reverse order every other round. */
  rounds: number;
  /** The smaller source. */
  smallCount: number;
  /** The larger source (10 times the smaller one, say). */
  largeCount: number;
}

const PUSHERS: readonly Pusher[] = ['kit', 'undici'];
const LABELS: Record<Pusher, string> = {
  kit: 'kit defaults',
  undici: 'hand-written undici loop',
  fetch: 'naive connector',
};

/**
 * The peak resident set size of a process that syncs a small and a large source of approvals of about 1 KB, for the
 * kit with its defaults and for the undici loop sending the same batches: each run a process of its own, from its
 * start to the end of its sync (`process.resourceUsage().maxRSS`), against the reference backend in another process,
 * reset to an empty store before every run. Flat memory gives a ratio near 1.
 */
export async function benchPeakRss(options: PeakRssOptions): Promise<Row[]> {
  const { batchSize, concurrency } = connectorOptionsSchema.shape.sync.parse({});
  const counts = [options.smallCount, options.largeCount];
  const peaks = new Map(PUSHERS.map((pusher) => [pusher, counts.map(() => [] as number[])]));
  const server = await startServerProcess('reference');
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const pusher of round % 2 === 0 ? PUSHERS : [...PUSHERS].reverse()) {
        for (const [index, count] of counts.entries()) {
          await server.reset();
          const { token } = await server.createSystem();
          const outcome = await inClientProcess((client) =>
            client.push({ pusher, url: server.url, token, count, batchSize, concurrency }),
          );
          peaks.get(pusher)![index]!.push(outcome.maxRssBytes);
        }
      }
    }
  } finally {
    await server.close();
  }
  const mebibytes = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  return PUSHERS.flatMap((pusher) => {
    const [small, large] = peaks.get(pusher)!;
    const grown = median(large!.map((peak, round) => peak / small![round]!));
    return [
      {
        name: `peak RSS, ${LABELS[pusher]}, ${whole(options.smallCount)} approvals`,
        measurement: `${range(spread(small!), mebibytes)} MiB`,
        ratio: '1.00x (baseline)',
      },
      {
        name: `peak RSS, ${LABELS[pusher]}, ${whole(options.largeCount)} approvals`,
        measurement: `${range(spread(large!), mebibytes)} MiB`,
        ratio: ratio(grown),
        ...(pusher === 'kit'
          ? {
              goal: '≤ 1.1x',
              met: grown <= 1.1,
              why: 'V8 reserves more heap for garbage in a longer run; the loop grows as much',
            }
          : {}),
      },
    ];
  });
}
