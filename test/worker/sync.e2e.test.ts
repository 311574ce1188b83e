import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type ChangeWindow,
  Connector,
  incremental,
  type SourceApproval,
  snapshot,
  type TaskContext,
  task,
} from '../../src/connector/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import { type ConnectorOptions, ConnectorWorker } from '../../src/worker/index.js';
import { savedCursorOf } from '../../src/worker/internal.js';
import { at, openHarness } from './support/harness.js';
import { MemoryConnector, type MemorySource, taskInputs } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness()));

/** Starts a worker of a {@link MemoryConnector} over the test's source; `ordered` is the source's declaration. */
const start = (overrides: Partial<ConnectorOptions> = {}, declared: { ordered?: boolean } = {}) =>
  harness.start(new MemoryConnector(source, declared), overrides);

/** What the service holds, as id → lastModified. */
const held = () =>
  Object.fromEntries(harness.approvals().map((approval) => [approval.id, approval.lastModified]));
const savedCursor = () => savedCursorOf(harness.state().state);

describe('incremental sync', () => {
  it('pushes every change, saves the cursor, and re-reads only the overlap window next time', async () => {
    for (let n = 0; n < 25; n += 1) source.put(`PO-${n}`, at(n * 60));
    const worker = await start({ sync: { batchSize: 4, concurrency: 3, overlapMs: 120_000 } });
    const first = await worker.syncNow();
    expect(first).toMatchObject({ pushed: 25, changed: 25, resent: 0 });
    expect(Object.keys(held())).toHaveLength(25);
    expect(savedCursor()).toEqual({ lastModified: at(24 * 60), id: 'PO-24' });

    source.yielded = 0;
    source.put('PO-25', at(25 * 60));
    const second = await worker.syncNow();
    // The overlap of two minutes re-reads the changes at 23 and 24 minutes (and the one exactly 2 minutes back).
    expect(source.yielded).toBe(4);
    expect(second).toMatchObject({ pushed: 4, changed: 1, resent: 3 });
  });

  it('delivers records sharing a timestamp across a batch boundary, and resumes inside such a group', async () => {
    for (const id of ['A', 'B', 'C', 'D', 'E']) source.put(id, at(0));
    source.put('F', at(1));
    // The source fails after A, B, C (a failure trying again cannot mend): the batch (A, B) is acknowledged, and C,
    // read but not yet sent, is sent before the run gives up.
    source.failAfter = 3;
    const first = await start({ sync: { batchSize: 2, concurrency: 1, overlapMs: 0 } }, { ordered: true });
    await expect(first.syncNow()).rejects.toThrow('source read failed');
    expect(Object.keys(held()).sort()).toEqual(['A', 'B', 'C']);
    expect(savedCursor()).toEqual({ lastModified: at(0), id: 'C' });
    await first.stop();

    // The cursor sits inside the group of records stamped at(0); the next read starts at that instant, inclusive.
    source.failAfter = undefined;
    const second = await start({ sync: { batchSize: 2, overlapMs: 0 } }, { ordered: true });
    await second.syncNow();
    expect(Object.keys(held()).sort()).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(savedCursor()).toEqual({ lastModified: at(1), id: 'F' });
  });

  it('picks up a late write inside the overlap window', async () => {
    source.put('early', at(0));
    source.put('newest', at(600));
    const worker = await start({ sync: { overlapMs: 300_000 } });
    await worker.syncNow();
    // Committed late in the source: stamped 4 minutes before the cursor, visible only now.
    source.put('late', at(360));
    await worker.syncNow();
    expect(held()).toHaveProperty('late', at(360));
  });

  it('handles a source that yields out of order: the cursor waits for the end of the run', async () => {
    for (let n = 0; n < 10; n += 1) source.put(`R-${n}`, at(n));
    source.shuffle = true;
    const worker = await start({ sync: { batchSize: 2 } }, { ordered: true });
    await worker.syncNow();
    expect(Object.keys(held())).toHaveLength(10);
    expect(savedCursor()).toEqual({ lastModified: at(9), id: 'R-9' });
  });

  it('never moves the cursor backwards, and a stale re-push does not overwrite newer data', async () => {
    source.put('X', at(100), { data: { v: 2 } });
    const worker = await start({ sync: { overlapMs: 0 } });
    await worker.syncNow();
    // The source now reports an older version (clock skew, restore from backup): nothing regresses.
    source.put('X', at(50), { data: { v: 1 } });
    await worker.resync();
    expect(harness.approvals().find((approval) => approval.id === 'X')?.data).toEqual({ v: 2 });
    expect(savedCursor()).toEqual({ lastModified: at(100), id: 'X' });
  });
});

describe('a sync interrupted at every stage resumes without loss or regress', () => {
  const records = 12;
  beforeEach(() => {
    for (let n = 0; n < records; n += 1) source.put(`S-${String(n).padStart(2, '0')}`, at(n));
  });

  async function resumeAndCheck(
    options: Partial<ConnectorOptions>,
    declared: { ordered?: boolean } = {},
  ): Promise<void> {
    harness.faults.clear();
    const before = savedCursor();
    // A new worker, as after a crash: only what the service holds carries over.
    const restarted = await start(options, declared);
    await restarted.syncNow();
    expect(Object.keys(held())).toHaveLength(records);
    const after = savedCursor();
    expect(after).toEqual({ lastModified: at(records - 1), id: `S-${records - 1}` });
    if (before !== undefined)
      expect(Date.parse(after!.lastModified)).toBeGreaterThanOrEqual(Date.parse(before.lastModified));
  }

  const noRetry = () => ({ service: harness.serviceOptions({ retry: { retries: 0 } }) });

  it('between batches (the source fails mid-read)', async () => {
    source.failAfter = 5;
    const first = await start({ ...noRetry(), sync: { batchSize: 2, concurrency: 1 } }, { ordered: true });
    await expect(first.syncNow()).rejects.toThrow('source read failed');
    const partial = savedCursor();
    expect(partial).toBeDefined();
    expect(Date.parse(partial?.lastModified ?? '')).toBeLessThan(Date.parse(at(5)));
    await first.stop();
    source.failAfter = undefined;
    await resumeAndCheck({ sync: { batchSize: 2 } }, { ordered: true });
  });

  it('mid-batch (the service commits a batch but its answer is lost)', async () => {
    harness.faults.inject({ method: 'PUT', path: '/v2/rawapprovals', fault: { type: 'dropAnswer' } });
    const first = await start({ ...noRetry(), sync: { batchSize: 5, concurrency: 1 } });
    await expect(first.syncNow()).rejects.toMatchObject({ code: 'network' });
    await first.stop();
    await resumeAndCheck({ sync: { batchSize: 5 } });
  });

  it('mid-run (the service refuses a batch after two it acknowledged): the cursor stays on those two', async () => {
    /**
     * Reads the source, but before its 7th record waits for the service to hold the first two batches (S-00 to
     * S-03), then has the service refuse every push from then on.
     */
    class RefusedAfterTwoBatches extends MemoryConnector {
      override readonly source = incremental({ ordered: true, changes: (window) => this.#changes(window) });

      async *#changes(window: ChangeWindow): AsyncIterable<SourceApproval> {
        let read = 0;
        for await (const record of this.system.changes(window)) {
          if (read === 6) {
            await vi.waitFor(() => expect(harness.approvals()).toHaveLength(4));
            harness.faults.inject({
              method: 'PUT',
              path: '/v2/rawapprovals',
              times: 1_000,
              fault: { type: 'status', status: 500 },
            });
          }
          read += 1;
          yield record;
        }
      }
    }
    const first = await harness.start(new RefusedAfterTwoBatches(source), {
      ...noRetry(),
      sync: { batchSize: 2, concurrency: 1 },
    });
    await expect(first.syncNow()).rejects.toMatchObject({ code: 'server' });
    expect(Object.keys(held()).sort()).toEqual(['S-00', 'S-01', 'S-02', 'S-03']);
    // Saved over the batches acknowledged, not over the one refused (S-04, S-05).
    expect(savedCursor()).toEqual({ lastModified: at(3), id: 'S-03' });
    await first.stop();
    await resumeAndCheck({ sync: { batchSize: 2 } }, { ordered: true });
  });

  it('between the push and the cursor save', async () => {
    harness.faults.inject({
      method: 'PUT',
      path: '/v2/connector/state',
      times: 5,
      fault: { type: 'status', status: 500 },
    });
    const first = await start({ ...noRetry(), sync: { batchSize: 50 } });
    await expect(first.syncNow()).rejects.toMatchObject({ code: 'server' });
    expect(Object.keys(held())).toHaveLength(records);
    expect(savedCursor()).toBeUndefined();
    await first.stop();
    await resumeAndCheck({ sync: { batchSize: 50 } });
  });
});

describe('snapshot sync and reconciliation', () => {
  const open = new Map<string, SourceApproval>();
  const lookups: string[][] = [];

  class SnapshotConnector extends Connector {
    readonly tasks = {
      approve: task({ input: taskInputs.approve, run: async () => {} }),
      reject: task({ input: taskInputs.reject, run: async () => {} }),
    };
    readonly source = snapshot({
      async *snapshot(): AsyncIterable<SourceApproval> {
        yield* open.values();
      },
    });
  }

  beforeEach(() => {
    open.clear();
    lookups.length = 0;
  });

  it('pushes what is new or changed, and marks resolved what vanished from the source', async () => {
    for (const id of ['K-1', 'K-2', 'K-3'])
      open.set(id, { id, schemaId: 'po', approver: 'ada', resolved: false, data: { v: 1 } });
    const worker = await harness.start(new SnapshotConnector());
    expect(await worker.syncNow()).toEqual({ pushed: 3, changed: 3, resent: 0, resolved: 0 });

    open.delete('K-2');
    open.set('K-3', { id: 'K-3', schemaId: 'po', approver: 'ada', resolved: false, data: { v: 2 } });
    expect(await worker.syncNow()).toEqual({ pushed: 2, changed: 2, resent: 0, resolved: 1 });
    const byId = Object.fromEntries(harness.approvals().map((approval) => [approval.id, approval]));
    expect(byId['K-1']).toMatchObject({ resolved: false, data: { v: 1 } });
    expect(byId['K-2']).toMatchObject({ resolved: true });
    expect(byId['K-3']).toMatchObject({ resolved: false, data: { v: 2 } });

    // Nothing changed: nothing is pushed.
    expect(await worker.syncNow()).toEqual({ pushed: 0, changed: 0, resent: 0, resolved: 0 });
  });

  it('reconciliation asks the source about open approvals and resolves those it no longer has', async () => {
    class Reconciling extends MemoryConnector {
      override readonly source = incremental({
        changes: (window) => this.system.changes(window),
        lookup: (ids) => this.#lookup(ids),
      });

      async *#lookup(ids: readonly string[]): AsyncIterable<SourceApproval> {
        lookups.push([...ids]);
        for (const id of ids) {
          const record = this.system.records.get(id);
          if (record !== undefined) yield record;
        }
      }
    }
    for (let n = 0; n < 7; n += 1) source.put(`Q-${n}`, at(n));
    const worker = await harness.start(new Reconciling(source), { sync: { reconcileChunkSize: 3 } });
    await worker.syncNow();
    // Deleted in the source without a change event the incremental read could see.
    source.records.delete('Q-1');
    source.records.delete('Q-5');
    source.put('Q-3', at(30), { resolved: true });
    const report = await worker.reconcileNow();
    // The five the source still has are sent again as it has them; the two marked resolved are the change.
    expect(report).toMatchObject({ pushed: 7, changed: 2, resent: 5, resolved: 2 });
    expect(lookups.map((chunk) => chunk.length)).toEqual([3, 3, 1]);
    const resolved = harness
      .approvals()
      .filter((approval) => approval.resolved)
      .map((approval) => approval.id)
      .sort();
    expect(resolved).toEqual(['Q-1', 'Q-3', 'Q-5']);
  });
});

describe('connector state', () => {
  it('keeps the author’s state beside the kit’s, each write keeping the other', async () => {
    source.put('P-1', at(0));
    const worker = await start();
    await worker.writeState({ jiraProject: 'OPS' });
    await worker.syncNow();
    expect(harness.state().state).toMatchObject({
      app: { jiraProject: 'OPS' },
      kit: { sync: { cursor: { id: 'P-1' } } },
    });
    await worker.stop();
    const restarted = await start();
    expect(restarted.readState()).toEqual({ jiraProject: 'OPS' });
  });

  it('reaches the handlers and the source through their context, and is saved with the kit’s part', async () => {
    /** Counts its approvals in its state, and notes what its source read of it before each sync. */
    class Counting extends Connector<{ approved: string[] }> {
      readonly seenBySource: unknown[] = [];
      readonly tasks = {
        approve: task({
          input: taskInputs.approve,
          run: async ({ approval }, { state }: TaskContext<{ approved: string[] }>) => {
            await state.write({ approved: [...(state.read()?.approved ?? []), approval.id] });
          },
        }),
      };
      readonly source = incremental<{ approved: string[] }>({
        changes: (window, { state }) => {
          this.seenBySource.push(state.read());
          return source.changes(window);
        },
      });
    }
    source.put('P-1', at(0));
    source.put('P-2', at(1));
    const worker = await harness.start(new Counting());
    await worker.syncNow();
    for (const approvalId of ['P-1', 'P-2']) {
      expect(await harness.awaitResult(harness.createTask(worker, { type: 'approve', approvalId }))).toEqual({
        status: 'success',
      });
    }
    expect(harness.state().state).toMatchObject({
      app: { approved: ['P-1', 'P-2'] },
      kit: { sync: { cursor: { id: 'P-2' } } },
    });
    await worker.syncNow();
    expect(worker.connector.seenBySource).toEqual([undefined, { approved: ['P-1', 'P-2'] }]);
    expect(worker.readState()).toEqual({ approved: ['P-1', 'P-2'] });
  });

  it('lets a task finishing in the grace time save the author’s state, and refuses a write once stopped', async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const contexts: TaskContext[] = [];
    class Finishing extends Connector {
      readonly tasks = {
        approve: task({
          input: taskInputs.approve,
          run: async ({ approval }, context) => {
            contexts.push(context);
            await released;
            await context.state.write({ lastApproved: approval.id });
          },
        }),
      };
      readonly source = incremental({ changes: (window) => source.changes(window) });
    }
    source.put('P-1', at(0));
    const worker = await harness.start(new Finishing());
    await worker.syncNow();
    const created = harness.createTask(worker, { type: 'approve', approvalId: 'P-1' });
    await vi.waitFor(() => expect(contexts).toHaveLength(1));
    const stopping = worker.stop();
    expect(worker.lifecycle).toBe('stopping');
    release();
    await stopping;
    expect(harness.task(created.id)?.result).toEqual({ status: 'success' });
    expect(harness.state().state).toMatchObject({
      app: { lastApproved: 'P-1' },
      kit: { sync: { cursor: { id: 'P-1' } } },
    });
    await expect(contexts[0]?.state.write({ lastApproved: 'later' })).rejects.toMatchObject({
      code: 'lifecycle',
      message: 'Cannot write the state of a connector that is stopped',
    });
    expect(harness.state().state).toMatchObject({ app: { lastApproved: 'P-1' } });
  });

  it('refuses a write before start, which would replace the saved cursor', async () => {
    source.put('P-1', at(0));
    await (await start()).syncNow();
    const idle = new ConnectorWorker(new MemoryConnector(source), harness.connectorOptions());
    await expect(idle.writeState({ jiraProject: 'OPS' })).rejects.toMatchObject({ code: 'lifecycle' });
    expect(harness.state().state).toMatchObject({ kit: { sync: { cursor: { id: 'P-1' } } } });
    await idle.stop();
  });
});
