import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { FaultRuleInput } from '../../src/backend/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import { at, openHarness } from './support/harness.js';
import { captureLogs } from './support/logs.js';
import { MemoryConnector, type MemorySource } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => {
  ({ harness, source } = await openHarness());
  for (let n = 0; n < 40; n += 1) source.put(`PO-${String(n).padStart(2, '0')}`, at(n * 60));
});

/** A worker that pushes a batch of one record at a time, and what it logs at `warn` and above. */
async function startOneBatchAtATime() {
  const log = captureLogs();
  const worker = await harness.start(new MemoryConnector(source, { ordered: true }), {
    logger: { level: 'warn', destination: log.destination },
    sync: { batchSize: 1, concurrency: 1 },
  });
  return { log, worker };
}

/** Every state write from now on meets the fault. */
const failEveryStateWrite = (fault: FaultRuleInput['fault']) =>
  harness.faults.inject({ method: 'PUT', path: '/v2/connector/state', times: 1_000, fault });

describe('saving the sync cursor as batches are acknowledged', () => {
  it('says once a run that saving the cursor failed, however many batches it saved after', async () => {
    const { log, worker } = await startOneBatchAtATime();
    failEveryStateWrite({ type: 'status', status: 400 });
    await expect(worker.syncNow()).rejects.toMatchObject({ code: 'bad_request' });
    expect(log.lines.filter((line) => line.msg.startsWith('saving the sync cursor failed'))).toHaveLength(1);
    await worker.stop();
  });

  it('logs no cursor save failure for each write a stop cuts short while the state write is slow', async () => {
    const { log, worker } = await startOneBatchAtATime();
    // Every state write hangs: the cursor saves of the acknowledged batches pile up behind the first.
    failEveryStateWrite({ type: 'delay', ms: 60_000 });
    const run = worker.syncNow().catch(() => {});
    await vi.waitFor(
      () => expect(harness.backend.listApprovals(harness.tenant.system.id).length).toBeGreaterThanOrEqual(20),
      {
        timeout: 10_000,
      },
    );
    await worker.stop();
    await run;
    const failures = log.lines.filter((line) => line.msg.startsWith('saving the sync cursor failed'));
    expect(failures).toEqual([]);
    // The stop says once that the state could not be saved.
    expect(log.lines.filter((line) => line.msg === 'saving the connector state failed')).toHaveLength(1);
  });
});
