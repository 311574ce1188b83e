import { conformanceSuite } from 'approval-connector-kit/conformance';
import { describe, it } from 'vitest';
import { conformance } from '../src/conformance.js';

// The kit's conformance battery: sync under crashes and ties, every task type's failures, registration. A failure
// names the check, what was expected, what happened and the seed; `seed` in the options runs it again.
conformanceSuite(conformance, { describe, it });
