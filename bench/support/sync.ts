import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createTestHarness } from '../../src/testing/index.js';
import { LazyConnector, type OnYield } from './lazy-source.js';

/** How one sync run is configured. */
export interface SyncRun {
  /** Approvals the source yields. */
  count: number;
  /** Approvals per Update approvals request. */
  batchSize: number;
  /** Update approvals requests in flight at once. */
  concurrency: number;
  /** Called as the source yields records, for sampling during the run. */
  onYield?: OnYield;
  /**
   * Added to every Update approvals request by the backend (its `delay` fault), in milliseconds: a stand-in for the
   * round trip to a remote service, which loopback does not have.
   */
  latencyMs?: number;
}

/** What one sync run did. */
export interface SyncResult {
  pushed: number;
  /** Wall-clock time of the run alone (not the backend's or the connector's start and stop), in milliseconds. */
  elapsedMs: number;
}

/**
 * Starts a fresh reference backend in-process (on 127.0.0.1, logs silent), a fresh tenant on it and the lazy
 * connector (logs silent, task poller off), optionally adds latency to each Update approvals request, runs one
 * first sync of `count` approvals, checks that the service acknowledged them all, and stops everything.
 */
export async function runSync(run: SyncRun): Promise<SyncResult> {
  const harness = await createTestHarness({
    backend: { host: '127.0.0.1', logger: pino({ level: 'silent' }) },
  });
  try {
    const worker = await harness.start(new LazyConnector(run.count, { onYield: run.onYield }), {
      logger: { level: 'silent' },
      sync: { batchSize: run.batchSize, concurrency: run.concurrency },
      poller: { enabled: false },
    });
    if (run.latencyMs !== undefined && run.latencyMs > 0) {
      harness.faults.inject({
        method: 'PUT',
        path: '/v2/rawapprovals',
        times: run.count,
        fault: { type: 'delay', ms: run.latencyMs },
      });
    }
    const started = performance.now();
    const report = await worker.syncNow();
    const elapsedMs = performance.now() - started;
    if (report.pushed !== run.count) {
      throw new Error(`expected ${run.count} approvals acknowledged, got ${report.pushed}`);
    }
    return { pushed: report.pushed, elapsedMs };
  } finally {
    await harness.close();
  }
}
