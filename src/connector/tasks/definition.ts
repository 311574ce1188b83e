import type { z } from 'zod';
import type { Task, TaskResult } from '../../api/index.js';
import type { Credentials } from '../keys/index.js';
import type { Logger } from '../operations/index.js';

/** The task types a connector supports, each with the schema of the task data its handler needs. */
export type TaskSchemas = Readonly<Record<string, z.ZodType>>;

/** What a handler gets besides its validated input. */
export interface TaskContext {
  /** The task's id. */
  readonly taskId: string;
  /** The task's type. */
  readonly type: string;
  /**
   * A key for the source system's idempotency mechanism, if it has one (a request header, a comment marker): the same
   * for every delivery of one task.
   */
  readonly idempotencyKey: string;
  /**
   * Aborted at the task's deadline (`poller.timeoutMs` after its receipt, with a `TimeoutError`) or when the worker is
   * shutting down and the grace time is over, whichever comes first; pass it to the source's calls.
   */
  readonly signal: AbortSignal;
  /** A child logger bound to the task. It writes none of the task's credential values, wherever one appears in a line. */
  readonly logger: Logger;
  /** The approver's decrypted credentials, when the connector has `authRequired`; every field is a `Secret`. */
  readonly credentials: Credentials | undefined;
  /** The task as the service sent it (credentials still sealed). */
  readonly task: Task;
}

/** What a handler may return: nothing, or `meta` for the task result (no secrets: they are scrubbed anyway). */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing is the common case
export type TaskOutcome = void | { meta?: Record<string, unknown> };

/** Runs one task type in the source. Throwing reports a failure status; see `docs/failure-mapping.md`. */
export type TaskHandler<Input> = (input: Input, context: TaskContext) => Promise<TaskOutcome>;

/** One handler per declared task type, each typed by its schema. A missing one is a compile error. */
export type TaskHandlers<Schemas extends TaskSchemas> = {
  readonly [Type in keyof Schemas]: TaskHandler<z.output<Schemas[Type]>>;
};

/**
 * What a pre-check decides: `true` to run the handler, or a result to report without running it (for example
 * `{status: 'systemError', meta: {code: 'already_decided', message: '…'}}` when the approval was decided in the source).
 */
export type PrecheckVerdict = true | TaskResult;
