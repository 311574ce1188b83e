/**
 * The task runtime: the `TaskPoller` the worker starts, which leases tasks from the service, runs each with its
 * handler and reports each result until the service acknowledges it. See `docs/connector.md`.
 * @module
 */

export { type PollerParts, type PollerSettings, REPORT_RETRY_MS, TaskPoller } from './poller.js';
