import { expect, it } from 'vitest';
import { measurePushLatency, pushLatencyRows } from '../../bench/push-latency.js';

// The benchmark's code path, small and quick: the figures themselves are bench/RESULTS.md's.
it('times every change from the source to the service with push and without, losing none, in coalesced lookups', async () => {
  const changes = 25;
  const measured = await measurePushLatency({ rate: 50, changes }, { scheduleMs: 300, requests: 10 });
  expect(measured.withPush).toHaveLength(changes);
  expect(measured.withoutPush).toHaveLength(changes);
  expect(measured.lost).toEqual({ withPush: 0, withoutPush: 0 });
  expect(measured.overflows).toBe(0);
  expect(measured.failedDeliveries).toBe(0);
  // Push alone brought the changes to the worker with push: its schedule is off, and it only looked up.
  expect(measured.reads.withPush.changes).toBe(0);
  expect(measured.reads.withPush.lookups).toBeGreaterThan(0);
  expect(measured.reads.withPush.lookedUp).toBeLessThanOrEqual(changes);
  expect(measured.reads.withoutPush).toMatchObject({ lookups: 0 });
  expect(measured.reads.withoutPush.changes).toBeGreaterThan(0);

  const rows = pushLatencyRows(measured, 300);
  expect(rows.map((row) => [row.name, row.goal])).toEqual([
    ['push latency, 50 changes/s (25): without push (sync every 300 ms)', undefined],
    [
      'push latency, 50 changes/s (25): with push (default push options, sync schedule off)',
      'p95 ≤ 2,000 ms',
    ],
    ['push latency, 50 changes/s (25): with push, source reads and losses', 'nothing lost'],
  ]);
  expect(rows[0]?.measurement).toMatch(/^p50 [\d,]+ ms, p95 [\d,]+ ms, p99 [\d,]+ ms$/);
  expect(rows[2]).toMatchObject({
    met: true,
    measurement: expect.stringMatching(/, 0 lost, 0 overflowed, /),
  });
}, 60_000);
