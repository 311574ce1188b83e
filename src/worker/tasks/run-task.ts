import type { TaskResult, TaskResultStatus } from '../../api/index.js';
import type { LeasedTask } from '../../client/index.js';
import {
  type Credentials,
  CredentialsUnreadableError,
  classifyFailure,
  type StateAccess,
  type TaskContext,
  TaskDataInvalidError,
  TaskDeadlineError,
  type TaskDeclarations,
} from '../../connector/index.js';
import { redactSecrets } from '../../connector/internal.js';
import { toIssues } from '../../errors.js';
import { causeChain, property } from '../../internal/causes.js';
import { inSpan } from '../../internal/tracing.js';
import { abortAfter } from '../../internal/wait.js';
import type { KeyRing } from '../keys/index.js';
import { type PinoLogger, secretScrubbingLogger } from '../operations/index.js';

/** What running one task takes, besides the task: the connector's parts, its deadline, and the signals of its end. */
export interface TaskRunInputs {
  /** The connector's task types: each one's input schema, pre-check and handler. */
  tasks: TaskDeclarations<object>;
  /** Present when the connector has `authRequired`. */
  keyRing: KeyRing | undefined;
  /** The connector's own failure classification, consulted before the kit's. */
  classifyFailure: ((error: unknown) => TaskResultStatus | undefined) | undefined;
  /** The author's part of connector state, as the task context gives it. */
  state: StateAccess<object>;
  /** The task's logger, its id and type bound. */
  logger: PinoLogger;
  /** The task's deadline, in milliseconds from now. */
  timeoutMs: number;
  /**
   * The handler's signal: aborted at the deadline here, or by the caller at forced shutdown. The caller owns it, so
   * that one listener of its own aborts every task's, rather than one listener per task on the shutdown's signal.
   */
  handler: AbortController;
  /** Aborted when shutdown interrupts the handlers: a task that then fails is handed back, not answered. */
  interrupted: AbortSignal;
}

/** A task's result, and how long it took in milliseconds (read from the monotonic clock). */
export interface TaskRun {
  result: TaskResult;
  tookMs: number;
  /** Whether the result is a pre-check's verdict: the pre-check read the source and answered for the handler. */
  byPrecheck: boolean;
}

/**
 * Whether a task's outcome says that the source may hold the approval otherwise than the service shows it, so that
 * the worker syncs it soon: the task succeeded (the decision is in the source), its pre-check returned a verdict
 * (it read the source and found it decided, say), or the source refused it (`systemError`: a business rule, a
 * decision already taken there). Not an outage, refused credentials or the kit's own refusal: the source said
 * nothing of the approval then.
 */
export function showsSourceState(run: Pick<TaskRun, 'result' | 'byPrecheck'>): boolean {
  return run.byPrecheck || run.result.status === 'success' || run.result.status === 'systemError';
}

/**
 * Runs one task: validates its data, opens its credentials, runs its type's pre-check and handler within its
 * deadline, and classifies a failure. Gives its result, or `undefined` when shutdown interrupted it: it is then not
 * reported, so its lease runs out and the service offers it again. Never rejects for what a task does.
 */
export async function runTask(leased: LeasedTask, inputs: TaskRunInputs): Promise<TaskRun | undefined> {
  const { logger, timeoutMs, handler } = inputs;
  let late = false;
  const due = abortAfter(
    timeoutMs,
    () => {
      late = true;
      logger.warn({ timeoutMs }, 'task passed its deadline; aborting its signal');
      return new TaskDeadlineError(timeoutMs);
    },
    handler,
  );
  try {
    const started = performance.now();
    const ended = await execute(leased, inputs);
    due.cancel();
    if (ended === undefined) {
      logger.warn('task interrupted by shutdown; handed back to the service');
      return undefined;
    }
    // A handler that stopped when its signal was aborted honoured the deadline: its failure is logged already.
    if (late && !ended.stoppedBySignal) {
      logger.warn(
        { status: ended.result.status, timeoutMs },
        'task finished after its deadline; reporting it late',
      );
    }
    return { result: ended.result, tookMs: performance.now() - started, byPrecheck: ended.byPrecheck };
  } finally {
    due.cancel();
  }
}

/**
 * Runs a task and gives its result, and whether it failed because its signal was aborted; `undefined` when shutdown
 * interrupted it.
 */
async function execute(
  leased: LeasedTask,
  inputs: TaskRunInputs,
): Promise<{ result: TaskResult; stoppedBySignal: boolean; byPrecheck: boolean } | undefined> {
  const { tasks, keyRing, state, logger } = inputs;
  const { signal } = inputs.handler;
  let credentials: Credentials | undefined;
  let taskLogger = logger;
  try {
    // Answered like data that fails its type's schema: the service would otherwise offer the task forever.
    if (!leased.valid) throw new TaskDataInvalidError(leased.type ?? '(unreadable)', leased.issues);
    const { task } = leased;
    const declared = Object.hasOwn(tasks, task.type) ? tasks[task.type] : undefined;
    if (declared === undefined) {
      throw new TaskDataInvalidError(task.type, [
        { path: ['type'], message: `no handler for task type "${task.type}"`, code: 'invalid_value' },
      ]);
    }
    const input = declared.input.safeParse(task.data);
    if (!input.success) throw new TaskDataInvalidError(task.type, toIssues(input.error));
    if (keyRing !== undefined) {
      const sealed = task.data.credentials;
      if (sealed === undefined) throw new CredentialsUnreadableError('The task carries no credentials');
      credentials = await keyRing.open(sealed);
      // As in the result's meta: an author's line may quote them (an error from the source, say).
      taskLogger = secretScrubbingLogger(logger, Object.values(credentials));
    }
    const context: TaskContext<object> = {
      taskId: task.id,
      type: task.type,
      idempotencyKey: task.id,
      signal,
      logger: taskLogger,
      credentials,
      task,
      state,
    };
    const { precheck } = declared;
    if (precheck !== undefined) {
      const verdict = await inSpan('precheck', {}, async (span) => {
        const said = await precheck(input.data, context);
        span.set({ 'approval_connector.precheck.verdict': said === true ? 'run' : said.status });
        return said;
      });
      if (verdict !== true) {
        return { result: scrub(verdict, credentials), stoppedBySignal: false, byPrecheck: true };
      }
    }
    const outcome = await inSpan('handler', {}, async () => declared.run(input.data, context));
    const meta = outcome?.meta;
    const result: TaskResult = meta === undefined ? { status: 'success' } : { status: 'success', meta };
    return { result: scrub(result, credentials), stoppedBySignal: false, byPrecheck: false };
  } catch (error) {
    if (inputs.interrupted.aborted) return undefined;
    return failed(error, inputs, credentials, taskLogger);
  }
}

/** A task's failure, classified (its secrets scrubbed) and logged. */
function failed(
  error: unknown,
  inputs: TaskRunInputs,
  credentials: Credentials | undefined,
  logger: PinoLogger,
): { result: TaskResult; stoppedBySignal: boolean; byPrecheck: boolean } {
  const { status, meta } = classifyFailure(error, {
    ...(inputs.classifyFailure ? { classifyFailure: inputs.classifyFailure } : {}),
    secrets: credentials === undefined ? [] : Object.values(credentials),
  });
  logger.warn({ status, code: meta.code }, 'task failed');
  return {
    result: { status, meta: { ...meta } },
    stoppedBySignal: causedByAbort(error, inputs.handler.signal),
    byPrecheck: false,
  };
}

/**
 * Whether `error` came of the abort of `signal`: it is, or was caused by, the signal's reason, or an abort of the
 * handler's own (an `AbortError`, as a library that does not pass the reason on rejects with) after the signal's.
 */
function causedByAbort(error: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  for (const link of causeChain(error)) {
    if (link === signal.reason || property(link, 'name') === 'AbortError') return true;
  }
  return false;
}

/** A result whose `meta` carries none of the task's credentials. */
function scrub(result: TaskResult, credentials: Credentials | undefined): TaskResult {
  if (result.meta === undefined || credentials === undefined) return result;
  return {
    ...result,
    meta: JSON.parse(redactSecrets(JSON.stringify(result.meta), Object.values(credentials))),
  };
}

/** A leased task's id and type, also when its data broke the contract (its type then as far as it could be read). */
export function idAndType(leased: LeasedTask): { id: string; type: string } {
  return leased.valid ? leased.task : { id: leased.id, type: leased.type ?? '' };
}
