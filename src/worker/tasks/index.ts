/**
 * The task runtime: the `TaskPoller` the worker starts, which leases tasks from the service (`leasing.ts`), runs each
 * with its handler (`run-task.ts`) and reports each result until the service acknowledges it (`reporter.ts`). See
 * `docs/connector.md`.
 * @module
 */

export { type PollerParts, type PollerSettings, REPORT_RETRY_MS, TaskPoller } from './poller.js';
