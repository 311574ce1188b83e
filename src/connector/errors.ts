/**
 * The errors of the connector's runtime: its lifecycle, its shape, and the reasons its signals abort with when it
 * stops. The failures a task handler throws are in `failures.ts`; those of keys and the operations port beside them.
 * @module
 */
import { ApprovalKitError } from '../errors.js';
import type { LifecycleState } from './worker.js';

/** The worker was asked to do something its lifecycle state does not allow. */
export class LifecycleError extends ApprovalKitError<'lifecycle'> {
  constructor(action: string, state: LifecycleState) {
    super('lifecycle', `Cannot ${action} a connector that is ${state}`);
  }
}

/** The connector cannot run as written: it does not implement what its use needs (`lookup()` for a reconciliation). */
export class InvalidConnectorError extends ApprovalKitError<'invalid_connector'> {
  constructor(message: string) {
    super('invalid_connector', message);
  }
}

/**
 * The connector is stopping: the reason the signals of the source's calls and start-up steps abort with when
 * `stop()` begins, and those of the task handlers once the grace time is over.
 */
export class StoppingError extends ApprovalKitError<'stopping'> {
  constructor(message = 'The connector is stopping') {
    super('stopping', message);
  }
}

/** The shutdown deadline (`shutdown.graceMs + shutdown.forceMs`) has passed: what every call still waiting aborts with. */
export class ShutdownDeadlineError extends ApprovalKitError<'shutdown_deadline'> {
  constructor() {
    super('shutdown_deadline', 'The shutdown deadline has passed');
  }
}
