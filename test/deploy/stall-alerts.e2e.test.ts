import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import type { TestHarness } from '../../src/testing/index.js';
import type { ConnectorWorker } from '../../src/worker/index.js';
import { at, openHarness } from '../worker/support/harness.js';
import { MemoryConnector, type MemorySource } from '../worker/support/memory-source.js';
import { PushConnector, signed, WEBHOOK_SECRET } from '../worker/support/push-connector.js';
import { evaluate, parseSamples } from './support/promql.js';

// A stalled worker, for real against the reference backend: what its /readyz answers, what it exports on /metrics,
// and whether the alert rule of that stall fires on those scraped values. Ages come from clocks the test moves: the
// worker's wall clock (`now`) for the cursor, the faked monotonic clock for the lease.

const rules: { alert: string; expr: string }[] = parse(
  readFileSync(new URL('../../deploy/kubernetes/monitoring/alert-rules.yaml', import.meta.url), 'utf8'),
).spec.groups.flatMap((group: { rules: unknown[] }) => group.rules);
const exprOf = (alert: string) => rules.find((rule) => rule.alert === alert)?.expr as string;

const MINUTE = 60_000;
let harness: TestHarness;
let source: MemorySource;

async function get(url: string): Promise<{ status: number; body: string }> {
  const answer = await request(url, { reset: true });
  return { status: answer.statusCode, body: await answer.body.text() };
}

/** The worker's /readyz answer, parsed, with its status code as `code`. */
async function readiness(worker: ConnectorWorker<MemoryConnector | PushConnector>) {
  const { status, body } = await get(`${worker.operationsUrl}/readyz`);
  return { code: status, ...JSON.parse(body) };
}

/** Whether the alert rule fires on what the worker's /metrics answers now: the series its expression keeps. */
async function fires(worker: ConnectorWorker<MemoryConnector | PushConnector>, alert: string) {
  const { body } = await get(`${worker.operationsUrl}/metrics`);
  return evaluate(exprOf(alert), parseSamples(body));
}

describe('a frozen cursor', () => {
  let clock: number;
  beforeEach(async () => {
    ({ harness, source } = await openHarness({ approvals: ['PO-1', 'PO-2', 'PO-3'] }));
    clock = Date.now();
  });

  it('shows in /readyz and in the metrics, and fires ApprovalConnectorCursorFrozen, then clears once it moves', async () => {
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
      sync: { frozenCursorMs: 30 * MINUTE },
      now: () => clock,
    });
    // The source yields changes, then fails each run before its end: an unordered source's cursor never moves.
    source.failAfter = 2;
    await expect(worker.syncNow()).rejects.toThrow('source read failed');
    expect(await fires(worker, 'ApprovalConnectorCursorFrozen')).toEqual([]);

    clock += 30 * MINUTE;
    const ready = await readiness(worker);
    expect(ready).toMatchObject({
      code: 200,
      status: 'ready',
      checks: {
        cursor: { status: 'frozen', lastModified: null, ageSeconds: 30 * 60, frozenAfterSeconds: 30 * 60 },
        sync: { status: 'failing', lastRun: { mode: 'incremental', outcome: 'failure' } },
      },
    });
    expect(await fires(worker, 'ApprovalConnectorCursorFrozen')).toEqual([
      { name: 'approval_connector_sync_cursor_frozen', labels: {}, value: 1 },
    ]);
    const { body } = await get(`${worker.operationsUrl}/metrics`);
    expect(body).toMatch(/^approval_connector_sync_cursor_age_seconds 1800$/m);

    // The source mends: the next run saves the cursor past every change, and the alert clears.
    source.failAfter = undefined;
    await worker.syncNow();
    expect(await fires(worker, 'ApprovalConnectorCursorFrozen')).toEqual([]);
    expect((await readiness(worker)).checks.cursor).toMatchObject({
      status: 'ok',
      lastModified: at(0),
      ageSeconds: 0,
    });
  });

  it('fires ApprovalConnectorSyncFailing at the third failed run in a row, not before, and clears at a success', async () => {
    const worker = await harness.start(new MemoryConnector(source), { operations: { port: 0 } });
    source.failAfter = 0;
    for (let run = 1; run <= 2; run += 1) await expect(worker.syncNow()).rejects.toThrow();
    expect(await fires(worker, 'ApprovalConnectorSyncFailing')).toEqual([]);
    await expect(worker.syncNow()).rejects.toThrow();
    expect(await fires(worker, 'ApprovalConnectorSyncFailing')).toEqual([
      {
        name: 'approval_connector_sync_consecutive_failures',
        labels: { mode: 'incremental' },
        value: 3,
      },
    ]);
    expect((await readiness(worker)).checks.sync.failuresInARow).toEqual({ incremental: 3 });
    source.failAfter = undefined;
    await worker.syncNow();
    expect(await fires(worker, 'ApprovalConnectorSyncFailing')).toEqual([]);
  });
});

describe('a stalled poller', () => {
  beforeEach(async () => {
    // The monotonic clock only: the backend, the client and the worker's timers run on real time.
    vi.useFakeTimers({ toFake: ['performance'] });
    ({ harness, source } = await openHarness({ approvals: ['PO-1', 'PO-2'] }));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows in /readyz and in the metrics, and fires ApprovalConnectorNotLeasing while a task waits, then clears', async () => {
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
      poller: { concurrency: 1 },
    });
    await worker.syncNow();
    // Its one slot held by a handler that does not end; a second task waits in the service.
    const gate = Promise.withResolvers<void>();
    worker.connector.gate = gate.promise;
    const held = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await worker.connector.atGate;
    const waiting = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
    expect(await fires(worker, 'ApprovalConnectorNotLeasing')).toEqual([]);

    vi.advanceTimersByTime(5 * MINUTE + 1_000);
    expect(harness.task(waiting.id)?.status).toBe('waiting');
    const ready = await readiness(worker);
    // Still ready: the watchdog sees a poller that is busy, not stalled; the lease age says no task is taken.
    expect(ready).toMatchObject({
      code: 200,
      status: 'ready',
      checks: { poller: { status: 'not leasing', lastLeaseAgeSeconds: 301, running: 1, concurrency: 1 } },
    });
    expect(await fires(worker, 'ApprovalConnectorNotLeasing')).toEqual([
      { name: 'approval_connector_lease_age_seconds', labels: {}, value: 301 },
    ]);

    gate.resolve();
    expect(await harness.awaitResult(held)).toEqual({ status: 'success' });
    expect(await harness.awaitResult(waiting)).toEqual({ status: 'success' });
    expect(await fires(worker, 'ApprovalConnectorNotLeasing')).toEqual([]);
    expect((await readiness(worker)).checks.poller).toMatchObject({ status: 'ok' });
  });
});

describe('a degraded push', () => {
  beforeEach(async () => {
    ({ harness, source } = await openHarness({ approvals: ['PO-1'] }));
  });

  it('shows in /readyz and in the metrics, and fires ApprovalConnectorPushDegraded, then clears with a delivery', async () => {
    const worker = await harness.start(new PushConnector(source), {
      operations: { port: 0 },
      push: { secret: WEBHOOK_SECRET, missedGraceMs: 0, degradedAfterMissed: 2 },
    });
    await worker.syncNow();
    // Changes in the source that no event announces: the sync finds each.
    source.put('PO-2', at(30));
    await worker.syncNow();
    expect(await fires(worker, 'ApprovalConnectorPushDegraded')).toEqual([]);
    source.put('PO-3', at(40));
    await worker.syncNow();

    expect((await readiness(worker)).checks.push).toMatchObject({
      status: 'degraded',
      missed: 2,
      missedSinceLastDelivery: 2,
    });
    expect(await fires(worker, 'ApprovalConnectorPushDegraded')).toEqual([
      { name: 'approval_connector_push_degraded', labels: {}, value: 1 },
    ]);

    // The next verified delivery ends it.
    expect(await harness.deliver(worker, signed({ ids: ['PO-3'] }))).toBe(202);
    expect(await fires(worker, 'ApprovalConnectorPushDegraded')).toEqual([]);
    expect((await readiness(worker)).checks.push).toMatchObject({ status: 'healthy' });
  });
});
