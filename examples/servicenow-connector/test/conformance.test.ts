import { conformanceSuite } from 'approval-connector-kit/conformance';
import { describe, it } from 'vitest';
import { conformance } from './servicenow-driver.js';

// The kit's conformance battery: the connector against a simulated instance of its own for each check, through the
// driver in servicenow-driver.ts. A failure prints its seed; give it back as CONFORMANCE_SEED to run the same checks.
const seed = process.env.CONFORMANCE_SEED;
conformanceSuite(
  conformance,
  { describe, it },
  { numRuns: 5, ...(seed === undefined ? {} : { seed: Number(seed) }) },
);
