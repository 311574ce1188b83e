/**
 * Runs the benchmarks and prints their table. Each speed is a ratio between variants measured in this same run, so
 * it holds from one machine to another better than a raw rate would. The sync, memory and client benchmarks run in
 * this process against the reference backend on 127.0.0.1; the backend's request rows, and every benchmark against
 * a hand-written loop, run it in a process of its own, and the connector or the loop in another. Logs are silent.
 * See docs/benchmarks.md.
 *
 * Flags: `--quick` runs everything smaller and fewer times (a check that a change did not break or slow anything
 * grossly, not a measurement); `--only=<group,...>` runs some of the groups (see {@link GROUPS}).
 *
 * A full run (neither flag) also writes `bench/RESULTS.md`: the table with the date, the commit, the machine and the
 * Node version it was measured with. The `push` group's rows are a section of their own in that file, with their own
 * date and commit: a run of that group alone (`--only=push`, without `--quick`) rewrites that section and leaves the
 * rest. docs/benchmarks.md quotes figures from that file only.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, type as osType, release, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import { benchBackend } from './backend.js';
import { benchClient } from './client-keepalive.js';
import { benchIdleWorker } from './idle-worker.js';
import { benchMemory } from './memory-flatness.js';
import { benchPeakRss } from './peak-rss.js';
import { benchPushLatency } from './push-latency.js';
import { collectGarbage } from './support/heap.js';
import { runSync } from './support/sync.js';
import { type Row, renderMarkdownTable, renderTable } from './support/table.js';
import { benchSyncBaseline } from './sync-baseline.js';
import { benchSyncThroughput } from './sync-throughput.js';
import { benchTaskBaseline } from './task-baseline.js';
import { benchTaskWorkers } from './task-workers.js';
import { benchTracingOverhead } from './tracing-overhead.js';

/** The groups, in the order they run. */
const GROUPS = [
  'sync',
  'memory',
  'client',
  'sync-baseline',
  'rss',
  'backend',
  'task-baseline',
  'idle',
  'workers',
  'tracing',
  'push',
] as const;
type Group = (typeof GROUPS)[number];

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const quick = flags.quick === true;
const only = new Set((flags.only ?? GROUPS.join(',')).split(',').map((name) => name.trim()));
for (const name of only) {
  if (!(GROUPS as readonly string[]).includes(name)) {
    console.error(`Unknown group '${name}' in --only; the groups are ${GROUPS.join(', ')}`);
    process.exit(2);
  }
}
const runs = (group: Group) => only.has(group);

// Ends a hung run; unref'd, so it never keeps a finished run alive.
const DEADLINE_MS = (quick ? 10 : 90) * 60 * 1000;
setTimeout(() => {
  console.error(`The benchmarks did not finish within ${DEADLINE_MS / 60_000} minutes`);
  process.exit(1);
}, DEADLINE_MS).unref();

async function main(): Promise<void> {
  const started = performance.now();
  const startedAt = new Date();
  const loadBefore = loadavg()[0] ?? 0;
  const gc = collectGarbage();
  console.log(
    `Node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ` +
      `--expose-gc ${gc ? 'on' : 'off'}${quick ? ', --quick' : ''}`,
  );
  const rows: Row[] = [];
  if (runs('sync') || runs('memory') || runs('client')) {
    // Warm-up: the one-request-per-approval path takes some 15,000 requests before V8 has optimized it (its rate
    // climbs until then), so everything is run well past that before anything is timed.
    for (let run = 0; run < (quick ? 2 : 8); run += 1) {
      await runSync({ count: 2_500, batchSize: 1, concurrency: 1 });
    }
    await runSync({ count: quick ? 10_000 : 50_000, batchSize: 100, concurrency: 4 });
  }
  if (runs('sync')) {
    rows.push(
      ...(await benchSyncThroughput({
        rounds: quick ? 1 : 5,
        scenarios: [
          {
            label: 'loopback',
            latencyMs: 0,
            unbatchedCount: quick ? 1_000 : 5_000,
            batchedCount: quick ? 10_000 : 50_000,
          },
          {
            label: '+2 ms/request',
            latencyMs: 2,
            unbatchedCount: quick ? 150 : 600,
            batchedCount: quick ? 5_000 : 20_000,
          },
        ],
      })),
    );
  }
  if (runs('memory')) {
    rows.push(
      ...(await benchMemory({
        smallCount: quick ? 2_000 : 10_000,
        largeCount: quick ? 20_000 : 100_000,
        gcEvery: 1_000,
        sampleMs: 5,
      })),
    );
  }
  if (runs('client')) {
    rows.push(
      ...(await benchClient({ durationMs: quick ? 500 : 2_000, rounds: quick ? 1 : 2, inFlight: 4 })),
    );
  }
  if (runs('sync-baseline')) {
    rows.push(
      ...(await benchSyncBaseline({
        rounds: quick ? 1 : 5,
        count: quick ? 10_000 : 100_000,
        naiveCount: quick ? 500 : 5_000,
        warmUp: quick ? 5_000 : 20_000,
        naiveWarmUp: quick ? 500 : 15_000,
      })),
    );
  }
  if (runs('rss')) {
    rows.push(
      ...(await benchPeakRss({
        rounds: quick ? 1 : 3,
        smallCount: quick ? 2_000 : 100_000,
        largeCount: quick ? 20_000 : 1_000_000,
      })),
    );
  }
  if (runs('backend')) {
    rows.push(
      ...(await benchBackend({
        rounds: quick ? 2 : 5,
        requests: quick ? 300 : 2_000,
        inFlight: 8,
        users: quick ? 10_000 : 100_000,
        leaseDepths: [100, 1_000, 10_000],
        leases: quick ? 200 : 2_000,
        starts: quick ? 5 : 20,
      })),
    );
  }
  if (runs('task-baseline')) {
    rows.push(
      ...(await benchTaskBaseline({
        // A round's ratio at concurrency 1 varied from 0.77x to 1.15x between full runs of one commit on the same
        // machine: the median of seven holds still where that of three did not.
        rounds: quick ? 1 : 7,
        tasks: quick ? 500 : 4_000,
        // The kit's path keeps getting faster for its first few thousand tasks, as V8 optimizes it.
        warmUp: quick ? 300 : 4_000,
        concurrencies: [1, 8, 32],
      })),
    );
  }
  if (runs('idle')) {
    rows.push(
      ...(await benchIdleWorker({
        workers: quick ? 10 : 20,
        settleMs: quick ? 1_500 : 5_000,
        quietMs: quick ? 1_500 : 15_000,
        taskPhaseMs: quick ? 5_000 : 60_000,
        gapMs: [2_000, 4_000],
      })),
    );
  }
  if (runs('workers')) {
    rows.push(
      ...(await benchTaskWorkers({
        rounds: quick ? 1 : 3,
        scenarios: [
          { label: 'actions of 0 ms', tasks: quick ? 300 : 4_000, handlerMs: 0 },
          { label: 'actions of 20 ms', tasks: quick ? 120 : 2_000, handlerMs: 20 },
        ],
      })),
    );
  }
  if (runs('tracing')) {
    rows.push(
      ...(await benchTracingOverhead({
        rounds: quick ? 1 : 5,
        approvals: quick ? 10_000 : 50_000,
        tasks: quick ? 500 : 4_000,
        concurrency: 8,
        warmUpApprovals: quick ? 5_000 : 20_000,
        warmUpTasks: quick ? 300 : 4_000,
      })),
    );
  }

  const pushRows: Row[] = [];
  if (runs('push')) {
    const { schedule } = connectorOptionsSchema.shape.sync.parse({});
    pushRows.push(
      ...(await benchPushLatency({
        scenarios: [
          { rate: 1, changes: quick ? 3 : 120 },
          { rate: 10, changes: quick ? 20 : 600 },
          { rate: 100, changes: quick ? 200 : 6_000 },
        ],
        // The kit's default schedule (a minute), which is what a source without push waits for.
        scheduleMs: quick ? 1_000 : Number(schedule),
        requests: 1_000,
      })),
    );
  }

  console.log();
  console.log(renderTable([...rows, ...pushRows]));
  console.log();
  const seconds = (performance.now() - started) / 1000;
  console.log(`Done in ${seconds.toFixed(0)} s.`);
  if (quick) return;
  const run = { startedAt, seconds, loadBefore, gc };
  if (flags.only === undefined) {
    writeResults(rows, pushRows, run);
    console.log('Wrote bench/RESULTS.md.');
  } else if (only.size === 1 && runs('push')) {
    writePushSection(pushRows, run);
    console.log('Wrote the push section of bench/RESULTS.md.');
  }
}

interface RunFacts {
  startedAt: Date;
  seconds: number;
  loadBefore: number;
  gc: boolean;
}

const RESULTS = new URL('./RESULTS.md', import.meta.url);
const PUSH_HEADING = '## Push latency';

/** What a reader needs to judge a run: when, which code, on what, and how busy the machine was. */
function runFacts(run: RunFacts): string {
  const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--short=12', 'HEAD');
  // The files changed since the commit, which the run measured too.
  const dirty = git('status', '--porcelain', '--untracked-files=no')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.slice(3));
  const loadAfter = loadavg()[0] ?? 0;
  // The load at the end counts the benchmark's own last processes (four workers and a backend), so only the load
  // before it started says whether other work shared the machine.
  const shared = run.loadBefore > availableParallelism();
  return `- Date: ${run.startedAt.toISOString().slice(0, 10)} (started ${run.startedAt.toISOString()}, took ${run.seconds.toFixed(0)} s)
- Commit: ${commit}${dirty.length > 0 ? ` with uncommitted changes to ${dirty.join(', ')}` : ''}
- Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${osType()} ${release()}
- Node: ${process.version}, --expose-gc ${run.gc ? 'on' : 'off'}
- Load average (1 min): ${run.loadBefore.toFixed(2)} at the start, ${loadAfter.toFixed(2)} at the end (its own processes included)${
    shared
      ? `
- The machine was shared: other work had its load above its ${availableParallelism()} cores when the run started, so the raw rates are low and the ratios noisier than on a quiet machine`
      : ''
  }`;
}

/** The push group's section of `bench/RESULTS.md`: its own facts, since it may be measured apart. */
function pushSection(rows: readonly Row[], run: RunFacts): string {
  return `${PUSH_HEADING}

Written by \`npm run bench\` (a full run) or \`npm run bench -- --only=push\`, which rewrites this section alone.

${runFacts(run)}

${renderMarkdownTable(rows)}
`;
}

/** Writes the run to `bench/RESULTS.md`. */
function writeResults(rows: readonly Row[], pushRows: readonly Row[], run: RunFacts): void {
  const text = `# Benchmark results

Written by \`npm run bench\` (a full run); docs/benchmarks.md says what each row measures. Ratios are taken within this
one run; raw rates depend on the machine and on what else it was doing.

${runFacts(run)}

${renderMarkdownTable(rows)}

${pushSection(pushRows, run)}`;
  writeFileSync(RESULTS, text);
}

/** Rewrites the push section of `bench/RESULTS.md`, and leaves the rest as the last full run wrote it. */
function writePushSection(rows: readonly Row[], run: RunFacts): void {
  const text = readFileSync(RESULTS, 'utf8');
  const at = text.indexOf(`\n${PUSH_HEADING}\n`);
  const before = `${(at === -1 ? text : text.slice(0, at)).trimEnd()}\n`;
  writeFileSync(RESULTS, `${before}\n${pushSection(rows, run)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
