import { describe, expectTypeOf, it } from 'vitest';
import type { IncrementalSource, SnapshotSource } from '../../src/connector/index.js';
import {
  hasLookup,
  type RunContext,
  runIncremental,
  runLookup,
  runReconcile,
  runSnapshot,
} from '../../src/worker/sync/runs.js';

describe('the sync runs', () => {
  it('take the source they read, so that a missing method does not compile', () => {
    const runs = (
      context: RunContext,
      incremental: IncrementalSource<object>,
      snapshot: SnapshotSource<object>,
    ) => {
      void runIncremental(context, incremental, { overlapMs: 0, full: false });
      void runSnapshot(context, snapshot);
      // @ts-expect-error: a snapshot source has no changes()
      void runIncremental(context, snapshot, { overlapMs: 0, full: false });
      // @ts-expect-error: an incremental source has no snapshot()
      void runSnapshot(context, incremental);
      // @ts-expect-error: lookup() is optional: a reconciliation takes a source known to have it
      void runReconcile(context, snapshot, { chunkSize: 1 });
      // @ts-expect-error: and so does a lookup
      void runLookup(context, incremental, ['PO-1'], { chunkSize: 1 });
      if (hasLookup(snapshot)) void runReconcile(context, snapshot, { chunkSize: 1 });
      if (hasLookup(incremental)) void runLookup(context, incremental, ['PO-1'], { chunkSize: 1 });
    };
    expectTypeOf(runs).toBeFunction();
  });
});
