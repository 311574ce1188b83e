import { beforeEach, describe, expect, it } from 'vitest';
import {
  Connector,
  type ConnectorSource,
  incremental,
  type SourceApproval,
  snapshot,
  task,
} from '../../src/connector/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import type { ConnectorOptions } from '../../src/worker/index.js';
import { at, openHarness } from './support/harness.js';
import { type MemorySource, taskInputs } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => {
  ({ harness, source } = await openHarness({ approvals: ['PO-1'] }));
  source.put('PO-2', at(1));
});

/**
 * A connector whose decisions change the source, as a real one's do: approving resolves the approval there, with a
 * new `lastModified`. It counts how it is read.
 */
class DecidingConnector extends Connector {
  reads = 0;
  readonly lookups: string[][] = [];
  readonly tasks = {
    approve: task({
      input: taskInputs.approve,
      run: async ({ approval }) => {
        const record = source.records.get(approval.id);
        if (record === undefined) throw new Error(`no approval ${approval.id}`);
        source.put(approval.id, at(60), { resolved: true });
      },
    }),
    reject: task({ input: taskInputs.reject, run: async () => {} }),
  };
  readonly source: ConnectorSource;

  constructor(kind: 'incremental' | 'snapshot', { lookup }: { lookup: boolean }) {
    super();
    const lookUp = async function* (this: DecidingConnector, ids: readonly string[]) {
      this.lookups.push([...ids]);
      for (const id of ids) {
        const record = source.records.get(id);
        if (record !== undefined) yield structuredClone(record);
      }
    }.bind(this);
    const changes = (window: Parameters<MemorySource['changes']>[0]) => {
      this.reads += 1;
      return source.changes(window);
    };
    const open = async function* (this: DecidingConnector): AsyncIterable<SourceApproval> {
      this.reads += 1;
      for (const record of source.records.values()) if (!record.resolved) yield structuredClone(record);
    }.bind(this);
    this.source =
      kind === 'incremental'
        ? incremental({ changes, ...(lookup ? { lookup: lookUp } : {}) })
        : snapshot({ snapshot: open, ...(lookup ? { lookup: lookUp } : {}) });
  }
}

/** Resolves once the service holds the approval as resolved: told by the backend of each write it commits. */
function resolvedInService(approvalId: string): Promise<void> {
  const isResolved = () =>
    harness.approvals().some((approval) => approval.id === approvalId && approval.resolved);
  return new Promise((resolve) => {
    const stop = harness.backend.watch((change) => {
      if (change.kind !== 'approval' || !isResolved()) return;
      stop();
      resolve();
    });
  });
}

/**
 * A worker that syncs soon after a task succeeds (which the harness turns off), with a shorter delay than the
 * default, and its next scheduled run an hour away: only the sync after the task can resolve the approval.
 */
async function startWorker(connector: DecidingConnector, sync: ConnectorOptions['sync'] = {}) {
  const worker = await harness.start(connector, {
    sync: { afterTaskMs: 200, schedule: 3_600_000, ...sync },
  });
  await worker.syncNow();
  connector.reads = 0;
  return worker;
}

async function approve(worker: Awaited<ReturnType<typeof startWorker>>, approvalId: string): Promise<void> {
  expect(harness.approvals().find((approval) => approval.id === approvalId)?.resolved).toBe(false);
  const resolved = resolvedInService(approvalId);
  const created = harness.createTask(worker, { type: 'approve', approvalId });
  expect(await harness.awaitResult(created)).toEqual({ status: 'success' });
  await resolved;
}

describe('a decision shows as resolved in the service soon after its task succeeds', () => {
  it('with lookup(): the worker looks up that approval only, leaving the source and the cursor alone', async () => {
    const connector = new DecidingConnector('incremental', { lookup: true });
    const worker = await startWorker(connector);
    const cursor = harness.state().state;

    await approve(worker, 'PO-1');

    expect(connector.lookups).toEqual([['PO-1']]);
    expect(connector.reads).toBe(0);
    expect(harness.state().state).toEqual(cursor);
    expect(harness.approvals().find((approval) => approval.id === 'PO-2')?.resolved).toBe(false);
  });

  it('with lookup(), also in a worker that only runs tasks (the tasks role)', async () => {
    const connector = new DecidingConnector('incremental', { lookup: true });
    const worker = await startWorker(connector, { enabled: false });

    await approve(worker, 'PO-2');

    expect(connector.lookups).toEqual([['PO-2']]);
  });

  it('without lookup(): the worker runs an incremental sync early', async () => {
    const connector = new DecidingConnector('incremental', { lookup: false });
    const worker = await startWorker(connector);

    await approve(worker, 'PO-1');

    expect(connector.reads).toBe(1);
    expect(connector.lookups).toEqual([]);
  });

  it('without lookup(): the worker runs a snapshot sync early, which resolves what the source no longer lists', async () => {
    const connector = new DecidingConnector('snapshot', { lookup: false });
    const worker = await startWorker(connector);

    await approve(worker, 'PO-2');

    expect(connector.reads).toBe(1);
  });
});

/**
 * A connector with a pre-check that reads the source, whose decisions fail as the source says: the request decided
 * there already (its verdict), the source refusing (a 409), or the source down (a 503).
 */
class CheckingConnector extends DecidingConnector {
  override readonly tasks = {
    approve: task({
      input: taskInputs.approve,
      precheck: async ({ approval }) =>
        source.records.get(approval.id)?.resolved
          ? {
              status: 'systemError' as const,
              meta: { code: 'already_decided', message: `${approval.id} is decided` },
            }
          : true,
      run: async ({ approval }) => {
        const failure = failures.get(approval.id);
        if (failure !== undefined)
          throw Object.assign(new Error(`the source answered ${failure}`), { status: failure });
      },
    }),
    reject: task({ input: taskInputs.reject, run: async () => {} }),
  };
}

const failures = new Map<string, number>();

describe('an approval the source holds decided shows so soon after a task finds it', () => {
  beforeEach(() => failures.clear());

  it("when the pre-check's verdict says the source decided it: the worker looks that approval up", async () => {
    const connector = new CheckingConnector('incremental', { lookup: true });
    const worker = await startWorker(connector);
    // Decided in the source itself, after the last sync: the service still shows it waiting.
    source.put('PO-1', at(30), { resolved: true });
    const resolved = resolvedInService('PO-1');
    const created = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    expect(await harness.awaitResult(created)).toMatchObject({
      status: 'systemError',
      meta: { code: 'already_decided' },
    });
    await resolved;
    expect(connector.lookups).toEqual([['PO-1']]);
  });

  it('when the source refuses the decision (systemError): the worker looks that approval up', async () => {
    const connector = new CheckingConnector('incremental', { lookup: true });
    const worker = await startWorker(connector);
    failures.set('PO-2', 409);
    source.put('PO-2', at(30), { resolved: true });
    // The pre-check saw it open: the decision is taken in the source between the pre-check and the action.
    const resolved = resolvedInService('PO-2');
    const created = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
    expect(await harness.awaitResult(created)).toMatchObject({ status: 'systemError' });
    await resolved;
    expect(connector.lookups).toEqual([['PO-2']]);
  });

  it('not when the source is down (serviceUnavailable): it said nothing of the approval', async () => {
    const connector = new CheckingConnector('incremental', { lookup: true });
    const worker = await startWorker(connector, { afterTaskMs: 1 });
    failures.set('PO-1', 503);
    const failed = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    expect(await harness.awaitResult(failed)).toMatchObject({ status: 'serviceUnavailable' });
    // A task that succeeds afterwards is looked up alone: nothing was asked for the one that failed.
    const resolved = resolvedInService('PO-2');
    source.put('PO-2', at(40), { resolved: true });
    const created = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
    expect(await harness.awaitResult(created)).toMatchObject({ status: 'systemError' });
    await resolved;
    expect(connector.lookups).toEqual([['PO-2']]);
  });
});
