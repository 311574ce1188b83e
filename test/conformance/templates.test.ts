import { type ConformanceSubject, formatReport, runConformance } from 'approval-connector-kit/conformance';
import { expect, it } from 'vitest';
import { conformance as incremental } from '../../templates/incremental/src/conformance.js';
import { conformance as snapshot } from '../../templates/snapshot/src/conformance.js';

// The templates' own conformance tests run in their generated projects (test/e2e/templates/); this runs the same
// battery on the templates' sources here, quickly.
async function expectPasses(subject: ConformanceSubject<never>): Promise<string[]> {
  const report = await runConformance(subject, { seed: 7, numRuns: 5 });
  expect(formatReport(report)).not.toMatch(/^FAIL/m);
  expect(report.passed).toBe(true);
  return report.checks.filter((check) => check.status === 'skip').map((check) => check.name);
}

it('the incremental template passes the battery with its driver, its push path included', async () => {
  const skipped = await expectPasses(incremental as never);
  expect(skipped.filter((name) => name.startsWith('push.'))).toEqual([]);
}, 120_000);

it(
  'the snapshot template passes the battery with its driver',
  () => expectPasses(snapshot as never),
  120_000,
);
