/**
 * The conformance kit: one call builds the battery that proves an author's connector against the kit's guarantees
 * (nothing lost under crashes, ties and overlap; failures in their documented statuses; nothing run twice;
 * registration, UI templates and keys), with a source driver the author writes for their test double. Each check
 * runs against the reference backend in-process; a failure says what was expected, what happened and the seed that
 * reproduces it. See `docs/conformance.md`.
 *
 * @example
 * <!-- example: typecheck, because it registers tests with the reader's test runner -->
 * ```ts
 * import { conformanceSuite } from 'approval-connector-kit/conformance';
 * import { describe, it } from 'vitest'; // or 'node:test'
 *
 * conformanceSuite(
 *   { driver: () => new RequestsDriver(), connector: (driver) => new MyConnector(driver.requests) },
 *   { describe, it },
 * );
 * ```
 * @module
 */

// First, so that an unsupported Node.js gets a clear error before any dependency fails on it.
import '../node-guard.js';

export {
  CHECK_NAMES,
  type ConformanceOptions,
  type ConformanceSuiteOptions,
  conformanceSuite,
  runConformance,
  type TestRunner,
} from './battery.js';
export {
  type ConformanceSubject,
  type ConnectorProcess,
  type ExpectedApproval,
  type FailureScope,
  type NewSourceRequest,
  type PushDriver,
  type PushTarget,
  type RestoreSource,
  SOURCE_OPERATIONS,
  type SourceDriver,
  type SourceFailure,
  type SourceOperation,
} from './driver.js';
export {
  type CheckResult,
  type CheckStatus,
  ConformanceFailure,
  type ConformanceReport,
  formatReport,
} from './report.js';
export { FAILURE_STATUS } from './task-checks.js';
