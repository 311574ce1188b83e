import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectorMetrics, createLogger } from '../../src/worker/operations/index.js';
import { PushHealth } from '../../src/worker/push/health.js';

const GRACE = 60_000;
let degradedCalls: number;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 4, 1, 10) });
  degradedCalls = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

function health(graceMs = GRACE) {
  return new PushHealth({
    graceMs,
    degradedAfterMissed: 2,
    metrics: new ConnectorMetrics().push,
    logger: createLogger({ level: 'silent' }),
    now: Date.now,
    onDegraded: () => {
      degradedCalls += 1;
    },
  });
}

/** A sync run that finds these approvals changed (each last modified now), and ends. */
function syncRun(watched: PushHealth, ids: string[], mode: 'incremental' | 'reconcile' = 'incremental') {
  const run = watched.begin(mode);
  for (const id of ids) run?.changed(id, new Date().toISOString());
  run?.end(true);
}

describe('push health', () => {
  it('judges nothing before push is live, nor, in the first run, what changed before', () => {
    const watched = health(0);
    expect(watched.begin('incremental')).toBeUndefined();
    watched.live();
    const first = watched.begin('incremental');
    first?.changed('PO-OLD', new Date(Date.now() - 1_000).toISOString());
    first?.changed('PO-SNAPSHOT', undefined);
    first?.end(true);
    expect(watched.report.missed).toBe(0);
    syncRun(watched, ['PO-NEW']);
    expect(watched.report.missed).toBe(1);
  });

  it('counts a change no event named as missed once the grace is over, not one an event names in time', async () => {
    const watched = health();
    watched.live();
    syncRun(watched, []);
    watched.announced(['PO-1']);
    syncRun(watched, ['PO-1', 'PO-2', 'PO-3']);
    // An event in flight as the run read the source still counts.
    await vi.advanceTimersByTimeAsync(GRACE - 1);
    watched.announced(['PO-2']);
    expect(watched.report.missed).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(watched.report).toMatchObject({ missed: 1, missedSinceLastDelivery: 1, state: 'healthy' });
  });

  it('counts an event from before the previous run of its kind as no announcement of a later change', async () => {
    const watched = health(0);
    watched.live();
    watched.announced(['PO-1']);
    await vi.advanceTimersByTimeAsync(5_000);
    syncRun(watched, ['PO-1']);
    expect(watched.report.missed).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    syncRun(watched, ['PO-1']);
    expect(watched.report.missed).toBe(1);
    // A reconciliation counts from its own previous run: the hour-old event still announces its change.
    watched.announced(['PO-9']);
    await vi.advanceTimersByTimeAsync(3_600_000);
    syncRun(watched, ['PO-9'], 'reconcile');
    expect(watched.report.missed).toBe(1);
  });

  it('turns degraded when push is quiet while the sync keeps finding changes, and recovers with a delivery', () => {
    const watched = health(0);
    watched.live();
    syncRun(watched, []);
    syncRun(watched, ['PO-1']);
    expect(watched.report.state).toBe('healthy');
    syncRun(watched, ['PO-2']);
    expect(watched.report).toMatchObject({ state: 'degraded', missed: 2, missedSinceLastDelivery: 2 });
    expect(degradedCalls).toBe(1);
    syncRun(watched, ['PO-3']);
    expect(degradedCalls).toBe(1);
    watched.delivered();
    expect(watched.report).toMatchObject({ state: 'healthy', missed: 3, missedSinceLastDelivery: 0 });
    expect(watched.report.lastDeliveryAt).toBe(new Date().toISOString());
  });

  it('drops the judgements waiting for their grace when stopped', async () => {
    const watched = health();
    watched.live();
    syncRun(watched, []);
    syncRun(watched, ['PO-1']);
    watched.stop();
    await vi.advanceTimersByTimeAsync(GRACE);
    expect(watched.report.missed).toBe(0);
  });
});
