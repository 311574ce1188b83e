import { describe, expect, it } from 'vitest';
import { runSoak } from './driver.js';

// The bounded soak; `npm run soak` runs the long one (docs/testing.md).
describe('the soak, bounded', () => {
  it('ends with exactly the source’s final versions, the cursor never moving back, through 3 kills, a SIGTERM and a faulty network', async () => {
    const report = await runSoak({
      seed: 20260501,
      approvals: 2_000,
      kills: 3,
      terms: 1,
      deadlineMs: 150_000,
    });

    expect(report.problems).toEqual([]);
    expect(report.generations.map((generation) => generation.signal).sort()).toEqual([
      'SIGKILL',
      'SIGKILL',
      'SIGKILL',
      'SIGTERM',
      'SIGTERM',
    ]);
    expect(report.generations.at(-1)).toMatchObject({ held: report.approvals, exit: { code: 0 } });
    expect(report.stateWrites).toBeGreaterThan(report.generations.length);
    const { none, ...faults } = report.faults;
    expect(none).toBeGreaterThan(0);
    expect(Object.values(faults).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
  }, 180_000);
});
