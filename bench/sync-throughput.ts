import { median } from './support/stats.js';
import { runSync } from './support/sync.js';
import { type Row, ratio, whole } from './support/table.js';

/** One group of runs: the four configurations under one network condition. */
export interface SyncScenario {
  /** Shown in each row's name. */
  label: string;
  /** Added to each Update approvals request by the backend, in milliseconds (0: plain loopback). */
  latencyMs: number;
  /** Approvals per run with batchSize 1 (one request per approval). */
  unbatchedCount: number;
  /** Approvals per run with batchSize 100. */
  batchedCount: number;
}

/** Settings of the sync throughput benchmark. */
export interface SyncBenchOptions {
  scenarios: readonly SyncScenario[];
  /** Runs per configuration; the median rate is reported. */
  rounds: number;
}

interface Config {
  batchSize: number;
  concurrency: number;
}

const CONFIGS: readonly Config[] = [
  { batchSize: 1, concurrency: 1 },
  { batchSize: 1, concurrency: 4 },
  { batchSize: 100, concurrency: 1 },
  { batchSize: 100, concurrency: 4 },
];

async function benchScenario(scenario: SyncScenario, rounds: number): Promise<Row[]> {
  const countOf = (config: Config) =>
    config.batchSize === 1 ? scenario.unbatchedCount : scenario.batchedCount;
  const rates = new Map<Config, number[]>(CONFIGS.map((config) => [config, []]));
  // Rounds interleave the configurations, so a slow moment of the machine does not land on one of them only.
  for (let round = 0; round < rounds; round += 1) {
    for (const config of CONFIGS) {
      const { pushed, elapsedMs } = await runSync({
        count: countOf(config),
        ...config,
        latencyMs: scenario.latencyMs,
      });
      rates.get(config)!.push((pushed / elapsedMs) * 1000);
    }
  }
  const baseline = median(rates.get(CONFIGS[0]!)!);
  return CONFIGS.map((config, index) => {
    const rate = median(rates.get(config)!);
    return {
      name: `sync ${scenario.label}, batch ${config.batchSize}, concurrency ${config.concurrency} (${whole(countOf(config))})`,
      measurement: `${whole(rate)} approvals/s`,
      ratio: index === 0 ? '1.00x (baseline)' : ratio(rate / baseline),
    };
  });
}

/**
 * Approvals per second of a first incremental sync from a lazy source, through the connector and the client, into
 * the reference backend in-process over loopback HTTP, for batchSize 1 and 100 and concurrency 1 and 4, in each
 * scenario. Each ratio is against the scenario's batchSize 1, concurrency 1: one request at a time, one approval per
 * request.
 */
export async function benchSyncThroughput(options: SyncBenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of options.scenarios) rows.push(...(await benchScenario(scenario, options.rounds)));
  return rows;
}
