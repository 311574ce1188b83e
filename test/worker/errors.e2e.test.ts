import { beforeEach, describe, expect, it } from 'vitest';
import { incremental, type SourceApproval } from '../../src/connector/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import { InvalidConnectorError, StoppingError } from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, type MemorySource } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1'] })));

describe('the errors a running connector throws', () => {
  it('aborts a sync run at stop() with a StoppingError of its own class, not a bare ApprovalKitError', async () => {
    let reading!: () => void;
    const started = new Promise<void>((resolve) => {
      reading = resolve;
    });
    class Waiting extends MemoryConnector {
      override readonly source = incremental({ changes: (_window, { signal }) => this.#wait(signal) });

      async *#wait(signal: AbortSignal): AsyncIterable<SourceApproval> {
        reading();
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      }
    }
    const worker = await harness.start(new Waiting(source));
    const run = worker.syncNow();
    await started;
    await worker.stop();
    const failure = await run.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoppingError);
    expect(failure).toMatchObject({ code: 'stopping', name: 'StoppingError' });
  });

  it('refuses a reconciliation of a connector without lookup() with an InvalidConnectorError, not a TypeError', async () => {
    const worker = await harness.start(new MemoryConnector(source));
    const failure = await worker.reconcileNow().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidConnectorError);
    expect(failure).toMatchObject({
      code: 'invalid_connector',
      message: 'The connector does not implement lookup()',
    });
    // Refused before a run starts: none is counted, and the worker syncs on as before.
    expect((await worker.metrics.render()).body).not.toMatch(/sync_runs_total\{mode="reconcile"/);
    await expect(worker.syncNow()).resolves.toMatchObject({ pushed: 1 });
  });
});
