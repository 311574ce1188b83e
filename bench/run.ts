/**
 * Runs the benchmarks and prints their table. Each speed is a ratio between variants measured in this same run, so
 * it holds from one machine to another better than a raw rate would. Everything runs in this process against the
 * reference backend on 127.0.0.1, logs silent; nothing is written to disk. See docs/benchmarks.md.
 */
import { availableParallelism, cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchClient } from './client-keepalive.js';
import { benchMemory } from './memory-flatness.js';
import { collectGarbage } from './support/heap.js';
import { runSync } from './support/sync.js';
import { type Row, renderTable } from './support/table.js';
import { benchSyncThroughput } from './sync-throughput.js';

// Ends a hung run; unref'd, so it never keeps a finished run alive.
const DEADLINE_MS = 10 * 60 * 1000;
setTimeout(() => {
  console.error(`The benchmarks did not finish within ${DEADLINE_MS / 60_000} minutes`);
  process.exit(1);
}, DEADLINE_MS).unref();

async function main(): Promise<void> {
  const started = performance.now();
  const gc = collectGarbage();
  console.log(
    `Node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ` +
      `--expose-gc ${gc ? 'on' : 'off'}`,
  );
  // Warm-up: the one-request-per-approval path takes some 15,000 requests before V8 has optimized it (its rate
  // climbs until then), so everything is run well past that before anything is timed.
  for (let run = 0; run < 8; run += 1) await runSync({ count: 2_500, batchSize: 1, concurrency: 1 });
  await runSync({ count: 50_000, batchSize: 100, concurrency: 4 });

  const rows: Row[] = [];
  rows.push(
    ...(await benchSyncThroughput({
      rounds: 5,
      scenarios: [
        { label: 'loopback', latencyMs: 0, unbatchedCount: 5_000, batchedCount: 50_000 },
        { label: '+2 ms/request', latencyMs: 2, unbatchedCount: 600, batchedCount: 20_000 },
      ],
    })),
  );
  rows.push(...(await benchMemory({ smallCount: 10_000, largeCount: 100_000, gcEvery: 1_000, sampleMs: 5 })));
  rows.push(...(await benchClient({ durationMs: 2_000, rounds: 2, inFlight: 4 })));

  console.log();
  console.log(renderTable(rows));
  console.log();
  console.log(`Done in ${((performance.now() - started) / 1000).toFixed(0)} s.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
