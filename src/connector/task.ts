import type { z } from 'zod';
import type { Task, TaskResult } from '../api/index.js';
import type { TaskSignal } from './abort-reasons.js';
import type { Logger } from './logger.js';
import type { Credentials } from './secret.js';
import type { StateAccess } from './state.js';

/** What a task's `precheck` and `run` get besides its validated input. */
export interface TaskContext<AppState extends object = Record<string, unknown>> {
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
   * Aborted at the task's deadline (`poller.timeoutMs` after its receipt) or when the worker is shutting down and the
   * grace time is over, whichever comes first; pass it to the source's calls. Its `reason` says which: a
   * `TaskDeadlineError` (code `task_deadline`) or a `StoppingError` (code `stopping`).
   */
  readonly signal: TaskSignal;
  /** A child logger bound to the task. It writes none of the task's credential values, wherever one appears in a line. */
  readonly logger: Logger;
  /** The approver's decrypted credentials, when the connector has `authRequired`; every field is a `Secret`. */
  readonly credentials: Credentials | undefined;
  /** The task as the service sent it (credentials still sealed). */
  readonly task: Task;
  /** The author's own part of connector state. */
  readonly state: StateAccess<AppState>;
}

/** What a task's `run` may return: nothing, or `meta` for the task result (no secrets: they are scrubbed anyway). */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing is the common case
export type TaskOutcome = void | { meta?: Record<string, unknown> };

/**
 * What a pre-check decides: `true` to run the handler, or a result to report without running it (for example
 * `{status: 'systemError', meta: {code: 'already_decided', message: '…'}}` when the approval was decided in the source).
 */
export type PrecheckVerdict = true | TaskResult;

/**
 * One task type, as {@link task} declares it: the schema of the task data it needs, an optional pre-check and the
 * handler that carries the action out in the source. Both get the schema's output and the same {@link TaskContext}.
 */
export interface TaskDeclaration<
  Input extends z.ZodType = z.ZodType,
  AppState extends object = Record<string, unknown>,
> {
  /** The schema of the task data (`approval`, `approveComments`) the handler needs. */
  readonly input: Input;
  /**
   * Confirms in the source, before `run`, that the approval is still pending and unchanged: `true` runs the handler,
   * a result is reported instead.
   */
  precheck?(input: z.output<Input>, context: TaskContext<AppState>): Promise<PrecheckVerdict>;
  /** Carries the action out in the source. Throwing reports a failure status; see `docs/failure-mapping.md`. */
  run(input: z.output<Input>, context: TaskContext<AppState>): Promise<TaskOutcome>;
}

/** A connector's task types, each declared with {@link task}. */
export type TaskDeclarations<AppState extends object = Record<string, unknown>> = Readonly<
  Record<string, TaskDeclaration<z.ZodType, AppState>>
>;
