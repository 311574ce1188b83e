import { collectGarbage, HeapSampler } from './support/heap.js';
import { lazyApprovals } from './support/lazy-source.js';
import { runSync } from './support/sync.js';
import { mib, type Row, ratio, whole } from './support/table.js';

/** Settings of the memory benchmark. */
export interface MemoryBenchOptions {
  /** The smaller source. */
  smallCount: number;
  /** The larger source (10 times the smaller one, say). */
  largeCount: number;
  /** Approvals between two full collections in the measured pass. */
  gcEvery: number;
  /** How often `heapUsed` is sampled, in milliseconds. */
  sampleMs: number;
}

interface Measured {
  /** Greatest `heapUsed` seen during the run, minus the collected baseline before it. */
  peakGrowth: number;
  /** Greatest `heapUsed` right after a full collection during the run, minus the baseline. */
  liveGrowth: number;
}

/** One sync of `count` approvals with the default batching (100 per request, 4 in flight), its heap watched. */
async function measure(count: number, options: MemoryBenchOptions, collect: boolean): Promise<Measured> {
  const sampler = new HeapSampler(options.sampleMs);
  sampler.start();
  await runSync({
    count,
    batchSize: 100,
    concurrency: 4,
    ...(collect
      ? {
          onYield: (yielded: number) => {
            if (yielded % options.gcEvery === 0) sampler.checkpoint();
          },
        }
      : {}),
  });
  return sampler.stop();
}

/** The live heap that `count` source records held at once take: what memory growing with the source would cost. */
async function heldRecordsGrowth(count: number): Promise<number> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const held: unknown[] = [];
  for await (const record of lazyApprovals(count)) held.push(record);
  collectGarbage();
  const growth = process.memoryUsage().heapUsed - before;
  held.length = 0;
  return growth;
}

/**
 * Peak heap growth while syncing a small and a large lazy source (whole process: connector, client and the
 * backend in-process; the backend's SQLite rows live outside the JS heap). Flat memory gives a ratio near 1; memory
 * that grows with the source would give about `largeCount / smallCount`.
 *
 * The measured pass runs a full collection every `gcEvery` approvals, so its peak is what the run holds plus at
 * most that many approvals' garbage. A second pass without forced collections shows the raw peak, which depends on
 * when V8 chooses to collect, and so grows with the run's length even though nothing is retained.
 */
export async function benchMemory(options: MemoryBenchOptions): Promise<Row[]> {
  const small = whole(options.smallCount);
  const large = whole(options.largeCount);
  const rows: Row[] = [];
  if (collectGarbage()) {
    const a = await measure(options.smallCount, options, true);
    const b = await measure(options.largeCount, options, true);
    const every = whole(options.gcEvery);
    rows.push(
      {
        name: `memory, ${small} approvals (GC every ${every})`,
        measurement: `peak +${mib(a.peakGrowth)}, live +${mib(a.liveGrowth)}`,
        ratio: '1.00x (baseline)',
      },
      {
        name: `memory, ${large} approvals (GC every ${every})`,
        measurement: `peak +${mib(b.peakGrowth)}, live +${mib(b.liveGrowth)}`,
        ratio: ratio(b.peakGrowth / a.peakGrowth),
      },
      {
        name: `memory, reference: ${large} source records held at once`,
        measurement: `live +${mib(await heldRecordsGrowth(options.largeCount))}`,
        ratio: '',
      },
    );
  } else {
    rows.push({
      name: 'memory with GC checkpoints',
      measurement: 'skipped: run with node --expose-gc',
      ratio: '',
    });
  }
  const a = await measure(options.smallCount, options, false);
  const b = await measure(options.largeCount, options, false);
  rows.push(
    {
      name: `memory, ${small} approvals (no forced GC)`,
      measurement: `peak +${mib(a.peakGrowth)}`,
      ratio: '1.00x (baseline)',
    },
    {
      name: `memory, ${large} approvals (no forced GC)`,
      measurement: `peak +${mib(b.peakGrowth)}`,
      ratio: ratio(b.peakGrowth / a.peakGrowth),
    },
  );
  return rows;
}
