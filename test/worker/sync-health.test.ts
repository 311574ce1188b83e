import { beforeEach, describe, expect, it } from 'vitest';
import type { IntegrationClient } from '../../src/client/index.js';
import { createLogger } from '../../src/worker/index.js';
import { type CursorKey, StateStore, SyncHealth } from '../../src/worker/sync/index.js';

const T0 = Date.UTC(2026, 4, 1, 10);
const MINUTE = 60_000;
const key = (minute: number, id = 'PO-1'): CursorKey => ({ at: T0 + minute * MINUTE, id });

/** A connector state on a service that keeps what it is given; `failing` makes its writes fail. */
function stateOf(saved?: { lastModified: string; id: string; lastRunAt?: string }) {
  const service = {
    failing: false,
    getState: async () => ({
      state:
        saved === undefined
          ? {}
          : { kit: { version: 1, sync: { cursor: saved, lastRunAt: saved.lastRunAt } } },
    }),
    putState: async () => {
      if (service.failing) throw new Error('the service is down');
    },
  };
  return { service, state: new StateStore<object>(service as unknown as IntegrationClient) };
}

let now: number;
let lines: { level: number; msg: string; [field: string]: unknown }[];
let state: StateStore<object>;
let service: ReturnType<typeof stateOf>['service'];
let health: SyncHealth;

function watch(parts: { watchesCursor?: boolean; syncs?: boolean } = {}): SyncHealth {
  return new SyncHealth({
    state,
    now: () => now,
    logger: createLogger({ destination: { write: (line: string) => void lines.push(JSON.parse(line)) } }),
    frozenCursorMs: 60 * MINUTE,
    watchesCursor: parts.watchesCursor ?? true,
    syncs: parts.syncs ?? true,
  });
}

/** The cursor moves to `to` at the current time, and is saved. */
async function moveCursor(to: CursorKey): Promise<void> {
  state.advanceCursor(to, new Date(now));
  await state.flush();
}

beforeEach(async () => {
  now = T0 + 24 * 60 * MINUTE;
  lines = [];
  ({ state, service } = stateOf({
    lastModified: new Date(key(0).at).toISOString(),
    id: 'PO-1',
    lastRunAt: new Date(T0).toISOString(),
  }));
  await state.load();
  health = watch();
});

describe("the sync cursor's age", () => {
  it('stays 0 while the source is quiet, however long ago the cursor last moved', () => {
    // The cursor last moved a day ago; the runs read only what is at or before it (the overlap).
    health.read(key(0));
    health.read(key(-3, 'PO-0'));
    now += 10 * 60 * MINUTE;
    expect(health.cursor()).toEqual({ ageMs: 0, frozen: false });
  });

  it('counts from the first change read past the cursor, not from the cursor’s last move', () => {
    health.read(key(5));
    now += 30 * MINUTE;
    health.read(key(7));
    expect(health.cursor()).toEqual({ ageMs: 30 * MINUTE, frozen: false });
  });

  it('counts a change at the cursor’s instant with a later id as past it', () => {
    health.read(key(0, 'PO-2'));
    now += MINUTE;
    expect(health.cursor()?.ageMs).toBe(MINUTE);
  });

  it('ends the wait once the saved cursor passes every change read', async () => {
    health.read(key(5));
    now += 20 * MINUTE;
    await moveCursor(key(5));
    expect(health.cursor()).toEqual({ ageMs: 0, frozen: false });
  });

  it('counts from the last move while the cursor moves but changes still wait past it', async () => {
    health.read(key(5));
    health.read(key(9));
    now += 20 * MINUTE;
    await moveCursor(key(5));
    now += 5 * MINUTE;
    expect(health.cursor()?.ageMs).toBe(5 * MINUTE);
  });

  it('does not count a cursor advanced but not saved as moved', async () => {
    health.read(key(5));
    now += 20 * MINUTE;
    service.failing = true;
    state.advanceCursor(key(5), new Date(now));
    await expect(state.flush()).rejects.toThrow('the service is down');
    now += 5 * MINUTE;
    expect(health.cursor()?.ageMs).toBe(25 * MINUTE);
  });

  it('is frozen at frozenCursorMs, logs it once as an error, and logs when it moves again', async () => {
    health.read(key(5));
    now += 60 * MINUTE - 1;
    expect(health.cursor()).toEqual({ ageMs: 60 * MINUTE - 1, frozen: false });
    now += 1;
    expect(health.cursor()).toEqual({ ageMs: 60 * MINUTE, frozen: true });
    health.ended('incremental', 'failure');
    now += MINUTE;
    expect(health.cursor()?.frozen).toBe(true);
    expect(lines.map(({ level, msg }) => ({ level, msg }))).toEqual([
      {
        level: 50,
        msg: 'the sync cursor is frozen: changes past it have waited longer than sync.frozenCursorMs',
      },
    ]);
    expect(lines[0]).toMatchObject({
      cursor: { lastModified: '2026-05-01T10:00:00.000Z', id: 'PO-1' },
      ageMs: 60 * MINUTE,
      frozenCursorMs: 60 * MINUTE,
    });

    await moveCursor(key(5));
    health.ended('incremental', 'success');
    expect(health.cursor()).toEqual({ ageMs: 0, frozen: false });
    expect(lines.map(({ msg }) => msg)).toEqual([
      'the sync cursor is frozen: changes past it have waited longer than sync.frozenCursorMs',
      'the sync cursor moves again',
    ]);
    expect(lines[1]).toMatchObject({
      level: 30,
      cursor: { lastModified: '2026-05-01T10:05:00.000Z', id: 'PO-1' },
    });
  });

  it('counts every change past the cursor as waiting before the first cursor is saved', async () => {
    ({ state } = stateOf());
    await state.load();
    health = watch();
    health.read(key(-600));
    now += 2 * MINUTE;
    expect(health.cursor()?.ageMs).toBe(2 * MINUTE);
  });

  it('is not watched where this worker runs no incremental sync', () => {
    health = watch({ watchesCursor: false });
    health.read(key(5));
    now += 120 * MINUTE;
    expect(health.cursor()).toBeUndefined();
    expect(health.cursorCheck()).toEqual({ status: 'off' });
  });
});

describe("the sync's runs", () => {
  it('count the failures of each mode in a row; a success of the mode ends them, an interrupted run changes nothing', () => {
    health.ended('incremental', 'failure');
    health.ended('reconcile', 'failure');
    health.ended('incremental', 'failure');
    health.ended('incremental', 'interrupted');
    expect(Object.fromEntries(health.failuresInARow())).toEqual({ incremental: 2, reconcile: 1 });
    health.ended('incremental', 'success');
    expect(Object.fromEntries(health.failuresInARow())).toEqual({ incremental: 0, reconcile: 1 });
  });

  it('show how the last run ended, and when, in the sync check', () => {
    expect(health.syncCheck()).toEqual({
      status: 'ok',
      lastRun: null,
      lastSuccess: null,
      failuresInARow: {},
    });
    health.ended('incremental', 'success');
    const succeededAt = now;
    now += 90_000;
    health.ended('incremental', 'failure');
    now += 30_000;
    expect(health.syncCheck()).toEqual({
      status: 'failing',
      lastRun: {
        mode: 'incremental',
        outcome: 'failure',
        finishedAt: new Date(now - 30_000).toISOString(),
        ageSeconds: 30,
      },
      lastSuccess: {
        mode: 'incremental',
        outcome: 'success',
        finishedAt: new Date(succeededAt).toISOString(),
        ageSeconds: 120,
      },
      failuresInARow: { incremental: 1 },
    });
  });

  it('are off in a worker that does not sync, until a lookup after a task runs there', () => {
    health = watch({ watchesCursor: false, syncs: false });
    expect(health.syncCheck()).toEqual({ status: 'off' });
    health.ended('lookup', 'success');
    expect(health.syncCheck()).toMatchObject({ status: 'ok', lastRun: { mode: 'lookup' } });
  });

  it('show the cursor in its own check', async () => {
    health.read(key(5));
    now += 90 * MINUTE;
    expect(health.cursorCheck()).toEqual({
      status: 'frozen',
      lastModified: '2026-05-01T10:00:00.000Z',
      movedAt: '2026-05-01T10:00:00.000Z',
      ageSeconds: 90 * 60,
      frozenAfterSeconds: 3600,
    });
  });
});
