/**
 * Why the kit aborts a signal it gives the author's code: a task's deadline passed ({@link TaskDeadlineError}), or
 * the worker is stopping ({@link StoppingError}). A task's `context.signal` is a {@link TaskSignal}, whose `reason`
 * is typed as one of the two, so that a handler can tell them apart by `code` and leave the source consistent.
 * @module
 */
import { ApprovalKitError } from '../errors.js';

/**
 * A task's deadline (`poller.timeoutMs` from its receipt) has passed: the reason its handler's signal is aborted
 * with. A handler that fails with it (or with an error it caused) is reported as `serviceUnavailable` with
 * `meta.code` `TimeoutError`, as a timeout of `AbortSignal.timeout()` is (row 12 of `docs/failure-mapping.md`).
 */
export class TaskDeadlineError extends ApprovalKitError<'task_deadline'> {
  /** The deadline that passed, in milliseconds from the task's receipt. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super('task_deadline', `The task took longer than its deadline of ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The connector is stopping: the reason the signals of the source's calls and start-up steps abort with when
 * `stop()` begins, and those of the task handlers once the shutdown's grace time is over.
 */
export class StoppingError extends ApprovalKitError<'stopping'> {
  constructor(message = 'The connector is stopping') {
    super('stopping', message);
  }
}

/** Why a task handler's signal was aborted: its deadline passed, or the worker is shutting down. */
export type TaskAbortReason = TaskDeadlineError | StoppingError;

/**
 * The signal a task's `precheck` and `run` get: an `AbortSignal` whose `reason`, once it is aborted, says why.
 *
 * @example
 * <!-- example: typecheck, because it needs the reader's source system -->
 * ```ts
 * import { task } from 'approval-connector-kit';
 *
 * const approve = task({
 *   input: Approve,
 *   run: async ({ approval }, { signal, logger }) => {
 *     try {
 *       await source.approve(approval.id, { signal });
 *     } catch (error) {
 *       // Stopping: the task is handed back and offered again. The deadline: it is answered serviceUnavailable.
 *       if (signal.reason?.code === 'stopping') logger.info('the worker is shutting down; leaving the source as is');
 *       if (signal.reason?.code === 'task_deadline') logger.warn({ timeoutMs: signal.reason.timeoutMs }, 'too slow');
 *       throw error;
 *     }
 *   },
 * });
 * ```
 */
export interface TaskSignal extends AbortSignal {
  /** `undefined` until the signal is aborted; then a {@link TaskDeadlineError} or a {@link StoppingError}. */
  readonly reason: TaskAbortReason | undefined;
}
