import { ApprovalKitError } from '../errors.js';

/** What the test harness waited for did not happen in time (a task's result, say); the message says what. */
export class HarnessTimeoutError extends ApprovalKitError<'harness_timeout'> {
  readonly timeoutMs: number;

  constructor(message: string, timeoutMs: number) {
    super('harness_timeout', message);
    this.timeoutMs = timeoutMs;
  }
}
