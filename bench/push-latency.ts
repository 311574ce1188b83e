import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { startReferenceBackend } from '../src/backend/index.js';
import { TestHarness } from '../src/testing/index.js';
import type { ConnectorWorker } from '../src/worker/index.js';
import { PushBenchConnector, PushBenchSource, type SourceReads } from './support/push-source.js';
import { percentile } from './support/stats.js';
import { type Row, ratio, whole } from './support/table.js';

/** One rate of changes the benchmark makes. */
export interface PushLatencyScenario {
  /** Changes a second. */
  rate: number;
  /** Changes made at that rate. */
  changes: number;
}

/** Settings of the push latency benchmark. */
export interface PushLatencyOptions {
  scenarios: readonly PushLatencyScenario[];
  /** The sync schedule of the worker without push, in milliseconds: the kit's default in a full run. */
  scheduleMs: number;
  /** Requests in the source: the changes go round them. */
  requests: number;
}

/** What one scenario measured, for each worker: the time from each change to the service having it. */
export interface PushLatencyMeasurement {
  scenario: PushLatencyScenario;
  /** Milliseconds from each change to the service applying it, with push; changes never applied are left out. */
  withPush: number[];
  withoutPush: number[];
  /** Changes the service never had from each worker by the end (the last scheduled run included). */
  lost: { withPush: number; withoutPush: number };
  /** What each worker's connector read of the source while the changes were made and brought. */
  reads: { withPush: SourceReads; withoutPush: SourceReads };
  /** Approvals the push path's full queue left to the schedule. */
  overflows: number;
  /** Deliveries the ingress did not answer 2xx. */
  failedDeliveries: number;
}

/** The changes made and not yet applied in one system, by approval; and the latencies of those applied. */
class Arrivals {
  readonly #waiting = new Map<string, { lastModified: number; at: number }[]>();
  readonly latencies: number[] = [];

  expect(id: string, lastModified: number, at: number): void {
    const waiting = this.#waiting.get(id) ?? [];
    waiting.push({ lastModified, at });
    this.#waiting.set(id, waiting);
  }

  /** The service applied a version of the approval: every change it holds (at or before its time) has arrived. */
  applied(id: string, lastModified: number, now: number): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    const left = waiting.filter((change) => {
      if (change.lastModified > lastModified) return true;
      this.latencies.push(now - change.at);
      return false;
    });
    if (left.length === 0) this.#waiting.delete(id);
    else this.#waiting.set(id, left);
  }

  get waiting(): number {
    let count = 0;
    for (const changes of this.#waiting.values()) count += changes.length;
    return count;
  }
}

const readsSince = (now: SourceReads, before: SourceReads): SourceReads => ({
  changes: now.changes - before.changes,
  lookups: now.lookups - before.lookups,
  lookedUp: now.lookedUp - before.lookedUp,
});

async function overflowsOf(worker: ConnectorWorker<PushBenchConnector>): Promise<number> {
  const metric = worker.metrics.registry.getSingleMetric('approval_connector_push_overflows_total');
  const values = (await metric?.get())?.values ?? [];
  return values.reduce((sum, value) => sum + value.value, 0);
}

/** Makes `changes` changes at `rate` a second, round the source's requests, telling `made` of each. */
async function makeChanges(
  source: PushBenchSource,
  scenario: PushLatencyScenario,
  made: (id: string, lastModified: number, at: number) => void,
): Promise<void> {
  const ids = source.ids;
  const interval = 1000 / scenario.rate;
  const started = performance.now();
  for (let index = 0; index < scenario.changes; index += 1) {
    const wait = started + index * interval - performance.now();
    if (wait > 0) await sleep(wait);
    const id = ids[index % ids.length] ?? '';
    const lastModified = source.change(id, `Change ${index}`);
    made(id, lastModified, performance.now());
  }
}

/**
 * One scenario: the reference backend in-process, two systems on it, and one source read by two workers: one with
 * the push path (its sync schedule off, so that push alone brings the changes), one with the sync schedule alone.
 * The source changes at the scenario's rate; each change is timed until the backend applied a version of the
 * approval at least as new, in each system.
 */
export async function measurePushLatency(
  scenario: PushLatencyScenario,
  options: Pick<PushLatencyOptions, 'scheduleMs' | 'requests'>,
): Promise<PushLatencyMeasurement> {
  const backend = await startReferenceBackend({ host: '127.0.0.1', logger: pino({ level: 'silent' }) });
  const pushed = new TestHarness(backend, backend.createTenant());
  const polled = new TestHarness(backend, backend.createTenant());
  try {
    const source = new PushBenchSource(options.requests);
    const secret = randomBytes(24).toString('hex');
    const withPush = await pushed.start(new PushBenchConnector(source, { push: true }), {
      poller: { enabled: false },
      push: { port: 0, host: '127.0.0.1', secret },
    });
    const withoutPush = await polled.start(new PushBenchConnector(source, { push: false }), {
      poller: { enabled: false },
      sync: { schedule: options.scheduleMs },
      push: false,
    });
    await Promise.all([withPush.syncNow(), withoutPush.syncNow()]);
    const url = withPush.pushHealth?.url;
    if (url === undefined) throw new Error('the worker with push opened no push ingress');
    source.deliverTo({ url, secret });
    const arrivals = new Map([
      [pushed.tenant.system.id, new Arrivals()],
      [polled.tenant.system.id, new Arrivals()],
    ]);
    const stopWatching = backend.watch((change) => {
      if (change.kind !== 'approval' || !change.applied || change.lastModified === undefined) return;
      arrivals
        .get(change.systemId)
        ?.applied(change.approvalId, Date.parse(change.lastModified), performance.now());
    });
    const before = {
      withPush: { ...withPush.connector.reads },
      withoutPush: { ...withoutPush.connector.reads },
    };
    try {
      await makeChanges(source, scenario, (id, lastModified, at) => {
        for (const system of arrivals.values()) system.expect(id, lastModified, at);
      });
      // Until both systems have every change: the last scheduled run of the worker without push brings its rest.
      const until = performance.now() + options.scheduleMs + 30_000;
      while ([...arrivals.values()].some((system) => system.waiting > 0) && performance.now() < until) {
        await sleep(50);
      }
      await source.sent();
    } finally {
      stopWatching();
    }
    const [pushArrivals, pollArrivals] = [...arrivals.values()] as [Arrivals, Arrivals];
    return {
      scenario,
      withPush: pushArrivals.latencies,
      withoutPush: pollArrivals.latencies,
      lost: { withPush: pushArrivals.waiting, withoutPush: pollArrivals.waiting },
      reads: {
        withPush: readsSince(withPush.connector.reads, before.withPush),
        withoutPush: readsSince(withoutPush.connector.reads, before.withoutPush),
      },
      overflows: await overflowsOf(withPush),
      failedDeliveries: source.failedDeliveries,
    };
  } finally {
    await Promise.all([pushed.close(), polled.close()]);
  }
}

const GOAL_P95_MS = 2_000;

function percentiles(latencies: readonly number[]): string {
  if (latencies.length === 0) return 'none arrived';
  const p = (fraction: number) => whole(percentile(latencies, fraction));
  return `p50 ${p(0.5)} ms, p95 ${p(0.95)} ms, p99 ${p(0.99)} ms`;
}

/** The rows of one scenario: the latencies without push and with it, and what push read and lost. */
export function pushLatencyRows(measured: PushLatencyMeasurement, scheduleMs: number): Row[] {
  const { scenario, withPush, withoutPush, lost, reads } = measured;
  const name = `push latency, ${whole(scenario.rate)} change${scenario.rate === 1 ? '' : 's'}/s (${whole(scenario.changes)})`;
  const p95 = (latencies: readonly number[]) =>
    latencies.length === 0 ? Number.POSITIVE_INFINITY : percentile(latencies, 0.95);
  const lostNothing = lost.withPush === 0 && measured.overflows === 0 && measured.failedDeliveries === 0;
  const pushReads = reads.withPush.lookups + reads.withPush.changes;
  const schedule = scheduleMs >= 1000 ? `${whole(scheduleMs / 1000)} s` : `${whole(scheduleMs)} ms`;
  return [
    {
      name: `${name}: without push (sync every ${schedule})`,
      measurement: percentiles(withoutPush),
      ratio: '1.00x (baseline)',
    },
    {
      name: `${name}: with push (default push options, sync schedule off)`,
      measurement: percentiles(withPush),
      ratio: `${ratio(p95(withoutPush) / p95(withPush))} sooner (p95)`,
      goal: `p95 ≤ ${whole(GOAL_P95_MS)} ms`,
      met: p95(withPush) <= GOAL_P95_MS,
      why: 'the lookups fall behind the changes',
    },
    {
      name: `${name}: with push, source reads and losses`,
      measurement:
        `${(pushReads / scenario.changes).toFixed(2)} reads/change ` +
        `(${whole(reads.withPush.lookups)} lookups of ${whole(reads.withPush.lookedUp)} ids), ` +
        `${whole(lost.withPush)} lost, ${whole(measured.overflows)} overflowed, ${whole(measured.failedDeliveries)} deliveries refused; ` +
        `without push ${whole(reads.withoutPush.changes)} sync runs, ${whole(lost.withoutPush)} lost`,
      ratio: '',
      goal: 'nothing lost',
      met: lostNothing,
      why: 'changes did not arrive by push',
    },
  ];
}

/** Each scenario in turn, and its rows. */
export async function benchPushLatency(options: PushLatencyOptions): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of options.scenarios) {
    rows.push(...pushLatencyRows(await measurePushLatency(scenario, options), options.scheduleMs));
  }
  return rows;
}
