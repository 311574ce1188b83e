import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChangeWindow,
  Connector,
  incremental,
  type SourceApproval,
  snapshot,
  task,
} from '../../src/connector/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import type { ConnectorOptions } from '../../src/worker/index.js';
import { savedCursorOf } from '../../src/worker/internal.js';
import { at, openHarness } from './support/harness.js';
import { taskInputs } from './support/memory-source.js';

/** What a source's HTTP client throws for a `429 Too Many Requests` with `Retry-After` (as the examples' do). */
function tooManyRequests(retryAfterMs: number): Error {
  return Object.assign(new Error('429 Too Many Requests'), { status: 429, retryAfterMs });
}

function approval(id: string, lastModified?: string, patch: Partial<SourceApproval> = {}): SourceApproval {
  return {
    id,
    schemaId: 'po',
    approver: 'ada',
    resolved: false,
    data: { title: `Request ${id}` },
    ...(lastModified === undefined ? {} : { lastModified }),
    ...patch,
  };
}

/**
 * A source behind a rate limit: a token bucket on the monotonic clock, each record one call (a page of one), and a
 * call without a token answered `429` with `Retry-After` in whole seconds, as an HTTP server sends it.
 */
class ThrottledSource {
  readonly records: SourceApproval[] = [];
  /** Calls answered `429`, and how many times the source was opened. */
  throttled = 0;
  opened = 0;
  #tokens: number;
  /** When the bucket was last filled up: from the first call, on the clock the test runs then. */
  #refilledAt: number | undefined;

  constructor(
    readonly capacity: number,
    readonly perSecond: number,
  ) {
    this.#tokens = capacity;
  }

  async *changes(window: ChangeWindow): AsyncIterable<SourceApproval> {
    this.opened += 1;
    const since = window.since?.getTime() ?? Number.NEGATIVE_INFINITY;
    const found = this.records.filter((record) => Date.parse(String(record.lastModified)) >= since);
    for (const record of found) {
      this.#take();
      yield structuredClone(record);
    }
  }

  #take(): void {
    const now = performance.now();
    const elapsedMs = now - (this.#refilledAt ?? now);
    this.#tokens = Math.min(this.capacity, this.#tokens + (elapsedMs / 1000) * this.perSecond);
    this.#refilledAt = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return;
    }
    this.throttled += 1;
    const waitMs = ((1 - this.#tokens) / this.perSecond) * 1000;
    throw tooManyRequests(Math.ceil(waitMs / 1000) * 1000);
  }
}

class SourceConnector extends Connector {
  readonly tasks = {
    approve: task({ input: taskInputs.approve, run: async () => {} }),
    reject: task({ input: taskInputs.reject, run: async () => {} }),
  };

  constructor(readonly source: Connector['source']) {
    super();
  }
}

let harness: TestHarness;
beforeEach(async () => ({ harness } = await openHarness()));
afterEach(() => {
  vi.useRealTimers();
});

/** Options of a worker that only syncs when asked: no task polling, whose waits would run on the fake clock too. */
const syncOnly = (sync: ConnectorOptions['sync'] = {}): Partial<ConnectorOptions> => ({
  poller: { enabled: false },
  sync,
});

/** What the service holds, as id → approval. */
const held = () => Object.fromEntries(harness.approvals().map((stored) => [stored.id, stored]));
const savedCursor = () => savedCursorOf(harness.state().state);

/**
 * Fakes the timers and the monotonic clock (the kit's waits, the bucket's refill), and settles `run` by moving that
 * clock on in steps, giving the real sockets to the reference backend a turn between them.
 */
async function onFakeClock<T>(start: () => Promise<T>): Promise<PromiseSettledResult<T>> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  let outcome: PromiseSettledResult<T> | undefined;
  start().then(
    (value) => {
      outcome = { status: 'fulfilled', value };
    },
    (reason: unknown) => {
      outcome = { status: 'rejected', reason };
    },
  );
  while (outcome === undefined) {
    await vi.advanceTimersByTimeAsync(100);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return outcome;
}

describe('a source read that fails with what may succeed later is read again in place', () => {
  it('waits the Retry-After the source asked for, then goes on, where the run used to fail at once', async () => {
    let calls = 0;
    const source = incremental({
      async *changes() {
        calls += 1;
        if (calls === 1) throw tooManyRequests(3_000);
        yield approval('PO-1', at(0));
      },
    });
    const worker = await harness.start(new SourceConnector(source), syncOnly());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const run = worker.syncNow();
    await vi.advanceTimersByTimeAsync(2_999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    vi.useRealTimers();
    expect(await run).toMatchObject({ pushed: 1, changed: 1 });
    expect(Object.keys(held())).toEqual(['PO-1']);
  });

  it('completes under a token bucket smaller than one run (20 calls, 10 a second, 40 approvals)', async () => {
    const source = new ThrottledSource(20, 10);
    for (let n = 0; n < 40; n += 1) source.records.push(approval(`PO-${String(n).padStart(2, '0')}`, at(n)));
    const connector = new SourceConnector(
      incremental({ ordered: true, changes: (window) => source.changes(window) }),
    );
    const worker = await harness.start(connector, syncOnly({ overlapMs: 0 }));

    const outcome = await onFakeClock(() => worker.syncNow());

    expect(outcome).toMatchObject({ status: 'fulfilled', value: { changed: 40 } });
    expect(source.throttled).toBeGreaterThan(0);
    expect(Object.keys(held())).toHaveLength(40);
    expect(savedCursor()).toEqual({ lastModified: at(39), id: 'PO-39' });
  });

  it('resumes an ordered source at the last acknowledged record, re-reading the records that share its instant', async () => {
    const records = ['A', 'B', 'C', 'D'].map((id) => approval(id, at(0)));
    records.push(approval('E', at(1)));
    let calls = 0;
    const windows: ChangeWindow[] = [];
    const source = incremental({
      ordered: true,
      async *changes(window) {
        calls += 1;
        windows.push(window);
        const since = window.since?.getTime() ?? Number.NEGATIVE_INFINITY;
        let count = 0;
        for (const record of records) {
          if (Date.parse(String(record.lastModified)) < since) continue;
          // The first read is throttled after B; Retry-After: 0 asks for no wait.
          if (calls === 1 && count === 2) throw tooManyRequests(0);
          count += 1;
          yield record;
        }
      },
    });
    const worker = await harness.start(new SourceConnector(source), syncOnly({ overlapMs: 60_000 }));

    const report = await worker.syncNow();

    // Read again from B's instant (not the run's window, and without the overlap): A and B come twice.
    expect(windows[1]).toEqual({ since: new Date(at(0)), cursor: { lastModified: at(0), id: 'B' } });
    expect(report).toEqual({ pushed: 7, changed: 5, resent: 2, resolved: 0 });
    expect(Object.keys(held()).sort()).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(savedCursor()).toEqual({ lastModified: at(1), id: 'E' });
  });

  it('counts re-reading the records at the resume point as no progress: a source stuck there fails the run', async () => {
    let opened = 0;
    const source = incremental({
      ordered: true,
      async *changes(window) {
        opened += 1;
        if (window.since === undefined) {
          yield approval('A', at(0));
          yield approval('B', at(1));
        } else {
          // From B's instant: B comes again, and the source is throttled before anything new.
          yield approval('B', at(1));
        }
        throw tooManyRequests(0);
      },
    });
    const worker = await harness.start(new SourceConnector(source), syncOnly());

    // The first read got to B (progress, the budget starts afresh); then it is read again five times (the default
    // sync.sourceRetry.retries) without getting further, and the run fails.
    await expect(worker.syncNow()).rejects.toMatchObject({ status: 429 });
    expect(opened).toBe(6);
    expect(savedCursor()).toEqual({ lastModified: at(1), id: 'B' });
  });

  it('gives up, bounded, on an unordered source that a rate limit never lets read to its end', async () => {
    const source = new ThrottledSource(20, 10);
    for (let n = 0; n < 40; n += 1) source.records.push(approval(`PO-${String(n).padStart(2, '0')}`, at(n)));
    const connector = new SourceConnector(incremental({ changes: (window) => source.changes(window) }));
    const worker = await harness.start(connector, syncOnly({ sourceRetry: { retries: 3 } }));

    const outcome = await onFakeClock(() => worker.syncNow());

    // Each read starts again from the top and, past the first, gets no further than the best before it (a token
    // may come in while it reads): three such retries in a row, then the run fails with the source's answer. What it
    // read reached the service; the cursor waits, as for any unordered run.
    expect(outcome).toMatchObject({ status: 'rejected', reason: { status: 429 } });
    expect(source.opened).toBeGreaterThanOrEqual(4);
    const arrived = Object.keys(held()).length;
    expect(arrived).toBeGreaterThanOrEqual(20);
    expect(arrived).toBeLessThan(40);
    expect(savedCursor()).toBeUndefined();
  });

  it('fails the run at once when the source asks for a wait beyond the budget, or fails for good', async () => {
    let failure: Error = tooManyRequests(600_000);
    let calls = 0;
    const source = incremental({
      // biome-ignore lint/correctness/useYield: a source that fails before its first record
      async *changes() {
        calls += 1;
        throw failure;
      },
    });
    const worker = await harness.start(new SourceConnector(source), syncOnly());
    await expect(worker.syncNow()).rejects.toBe(failure);
    expect(calls).toBe(1);

    failure = Object.assign(new Error('400 Bad Request: the JQL is invalid'), {
      status: 400,
      retryAfterMs: 0,
    });
    await expect(worker.syncNow()).rejects.toBe(failure);
    expect(calls).toBe(2);
  });

  it('reads a snapshot again from its start, and marks resolved only what the complete read no longer lists', async () => {
    const service = ['K-1', 'K-2', 'K-3'];
    const first = await harness.start(
      new SourceConnector(
        snapshot({
          snapshot: async function* () {
            yield* service.map((id) => approval(id));
          },
        }),
      ),
      syncOnly(),
    );
    await first.syncNow();
    await first.stop();

    let calls = 0;
    const reads: string[][] = [];
    const source = snapshot({
      async *snapshot() {
        calls += 1;
        const listed: string[] = [];
        reads.push(listed);
        // The first read lists K-1 and a new K-4 before it is throttled; by the second, K-4 is gone again.
        const open = calls === 1 ? ['K-1', 'K-4', 'K-2'] : ['K-1', 'K-3'];
        for (const id of open) {
          if (calls === 1 && listed.length === 2) throw tooManyRequests(0);
          listed.push(id);
          yield approval(id);
        }
      },
    });
    const worker = await harness.start(new SourceConnector(source), syncOnly());

    const report = await worker.syncNow();

    // K-2 was not marked resolved by the partial read (it never finished); the complete one no longer lists K-2 nor
    // K-4. K-1 is not pushed again: its content is what the service holds.
    expect(reads).toEqual([
      ['K-1', 'K-4'],
      ['K-1', 'K-3'],
    ]);
    expect(report).toEqual({ pushed: 3, changed: 3, resent: 0, resolved: 2 });
    const byId = held();
    expect(byId['K-1']).toMatchObject({ resolved: false });
    expect(byId['K-2']).toMatchObject({ resolved: true });
    expect(byId['K-3']).toMatchObject({ resolved: false });
    expect(byId['K-4']).toMatchObject({ resolved: true });
  });

  it('asks lookup() again for a chunk whose lookup was throttled', async () => {
    let calls = 0;
    const connector = new SourceConnector(
      incremental({
        changes: async function* () {
          yield* ['L-1', 'L-2'].map((id) => approval(id, at(0)));
        },
        lookup: async function* (ids) {
          calls += 1;
          if (calls === 1) throw tooManyRequests(0);
          for (const id of ids) if (id === 'L-1') yield approval(id, at(5), { data: { v: 2 } });
        },
      }),
    );
    const worker = await harness.start(connector, syncOnly());
    await worker.syncNow();

    expect(await worker.reconcileNow()).toEqual({ pushed: 2, changed: 1, resent: 1, resolved: 1 });
    expect(calls).toBe(2);
    expect(held()['L-1']).toMatchObject({ resolved: false, data: { v: 2 } });
    expect(held()['L-2']).toMatchObject({ resolved: true });
  });
});
