import { runConformance } from 'approval-connector-kit/conformance';
import { expect, it } from 'vitest';
import { conformance } from './servicenow-driver.js';

// The battery passes a check it cannot run (its report says why), so the suite in conformance.test.ts would pass the
// push checks unseen for a driver without `push`. `push.gone` needs everything any push check needs (the connector's
// push path, the driver's `push`, its `delete()`): run, it proves none of the five is skipped.
it('has the battery run the push checks, the business rules calling out to its address, skipping none', async () => {
  const { checks } = await runConformance(conformance, { seed: 1, only: ['push.gone'] });

  expect(checks.map(({ name, status, happened }) => [name, status, happened])).toEqual([
    ['push.gone', 'pass', undefined],
  ]);
});
