import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type SavedPushHealth, savedPushHealthOf } from '../../src/internal/saved-push-health.js';
import { ConnectorMetrics, createLogger } from '../../src/worker/operations/index.js';
import { PushHealth } from '../../src/worker/push/health.js';

const GRACE = 60_000;
const T0 = Date.UTC(2026, 4, 1, 10);
let degradedCalls: number;
/** What push health asked to keep in connector state, in order, and whether to write it at once. */
let saves: { health: SavedPushHealth; writeNow: boolean }[];

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  degradedCalls = 0;
  saves = [];
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
    save: (saved, writeNow) => saves.push({ health: saved, writeNow }),
  });
}

const iso = (ms: number) => new Date(ms).toISOString();

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

describe('push health in connector state', () => {
  it('is written as push goes live, turns degraded and recovers; counts and deliveries wait for the next write', async () => {
    const watched = health(0);
    syncRun(watched, ['PO-0']);
    expect(saves).toEqual([]);
    watched.live();
    expect(saves).toEqual([
      {
        health: { state: 'healthy', since: iso(T0), missed: 0, missedSinceLastDelivery: 0 },
        writeNow: true,
      },
    ]);
    syncRun(watched, []);
    await vi.advanceTimersByTimeAsync(60_000);
    syncRun(watched, ['PO-1']);
    expect(saves.at(-1)).toEqual({
      health: { state: 'healthy', since: iso(T0), missed: 1, missedSinceLastDelivery: 1 },
      writeNow: false,
    });
    await vi.advanceTimersByTimeAsync(60_000);
    syncRun(watched, ['PO-2']);
    expect(saves.at(-1)).toEqual({
      health: { state: 'degraded', since: iso(T0 + 120_000), missed: 2, missedSinceLastDelivery: 2 },
      writeNow: true,
    });
    await vi.advanceTimersByTimeAsync(5_000);
    watched.delivered();
    const recovered = { since: iso(T0 + 125_000), lastDeliveryAt: iso(T0 + 125_000) };
    expect(saves.at(-1)).toEqual({
      health: { state: 'healthy', ...recovered, missed: 2, missedSinceLastDelivery: 0 },
      writeNow: true,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    watched.delivered();
    expect(saves.at(-1)).toEqual({
      health: {
        state: 'healthy',
        since: recovered.since,
        lastDeliveryAt: iso(T0 + 126_000),
        missed: 2,
        missedSinceLastDelivery: 0,
      },
      writeNow: false,
    });
    expect(saves.filter((save) => save.writeNow)).toHaveLength(3);
  });

  it('says stopped once stopped, with the state the worker saves as it stops; nothing before push was live', async () => {
    const never = health(0);
    never.stop();
    expect(saves).toEqual([]);
    const watched = health(0);
    watched.live();
    await vi.advanceTimersByTimeAsync(30_000);
    watched.stop();
    expect(saves.at(-1)).toEqual({
      health: { state: 'stopped', since: iso(T0 + 30_000), missed: 0, missedSinceLastDelivery: 0 },
      writeNow: false,
    });
  });

  it('is bounded: a state, two instants and two counts, never an approval id, whatever the sync finds', () => {
    const watched = health(0);
    watched.live();
    syncRun(watched, []);
    syncRun(
      watched,
      Array.from({ length: 5_000 }, (_, n) => `PO-${n}`),
    );
    const saved = saves.at(-1)?.health;
    expect(saved).toMatchObject({ state: 'degraded', missed: 5_000 });
    expect(Object.keys(saved ?? {}).sort()).toEqual(['missed', 'missedSinceLastDelivery', 'since', 'state']);
    expect(JSON.stringify(saved)).not.toContain('PO-');
    // With every field, the most it ever weighs: under 200 bytes.
    watched.delivered();
    const whole = saves.at(-1)?.health;
    expect(whole).toHaveProperty('lastDeliveryAt');
    expect(JSON.stringify({ ...whole, missed: Number.MAX_SAFE_INTEGER }).length).toBeLessThan(200);
  });
});

describe('savedPushHealthOf', () => {
  const saved = { state: 'degraded', since: iso(T0), missed: 3, missedSinceLastDelivery: 3 };

  it('reads push health where the worker keeps it, and drops what is not push health', () => {
    expect(savedPushHealthOf({ kit: { push: { health: { ...saved, approvalIds: ['PO-1'] } } } })).toEqual(
      saved,
    );
  });

  it.each([
    ['no state', undefined],
    ['a state without push', { kit: { version: 1, sync: {} } }],
    ['an unknown state', { kit: { push: { health: { ...saved, state: 'on fire' } } } }],
    ['a count that is no count', { kit: { push: { health: { ...saved, missed: -1 } } } }],
    ['an instant that is no instant', { kit: { push: { health: { ...saved, since: 'yesterday' } } } }],
    ['a list', { kit: [saved] }],
  ])('reads nothing from %s', (_what, state) => {
    expect(savedPushHealthOf(state)).toBeUndefined();
  });
});
