/**
 * How a task handler's failure becomes one of the five task result statuses. The whole rule is one table in
 * `docs/failure-mapping.md`; this file implements it.
 * @module
 */
import { TaskResultStatus } from '../api/index.js';
import { ApprovalKitError, formatIssues, isBrandedKitError, type ValidationIssue } from '../errors.js';
import { causeChain, property } from '../internal/causes.js';
import { isNetworkCode } from '../internal/network-codes.js';
import { redactSecrets, type Secret } from './secret.js';

/**
 * A task's credentials could not be decrypted: sealed to a key this connector does not have (or no longer has),
 * tampered with, or not a JSON object. The handler was not run. Reported as `internalError`
 * (see `docs/failure-mapping.md`).
 */
export class CredentialsUnreadableError extends ApprovalKitError<'credentials_unreadable'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('credentials_unreadable', message, options);
  }
}

/**
 * The source system refused the approver's credentials (or they are missing): the approver has to sign in again.
 * Reported as `authenticationError`.
 */
export class AuthenticationError extends ApprovalKitError<'authentication'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('authentication', message, options);
  }
}

/** The source system cannot be reached or is overloaded; trying later may work. Reported as `serviceUnavailable`. */
export class ServiceUnavailableError extends ApprovalKitError<'service_unavailable'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('service_unavailable', message, options);
  }
}

/**
 * The source system answered and refused the action (for example, the approval is locked or already decided).
 * Reported as `systemError`.
 */
export class SystemError extends ApprovalKitError<'system'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('system', message, options);
  }
}

/** A task's data does not match its task type's schema; the handler was not run. Reported as `internalError`. */
export class TaskDataInvalidError extends ApprovalKitError<'task_data_invalid'> {
  readonly taskType: string;
  readonly issues: readonly ValidationIssue[];

  constructor(taskType: string, issues: readonly ValidationIssue[], options?: { cause?: unknown }) {
    super('task_data_invalid', `Invalid data for task type "${taskType}": ${formatIssues(issues)}`, options);
    this.taskType = taskType;
    this.issues = issues;
  }
}

/** What a task result's `meta` carries about a failure: a stable code and a message free of secrets. */
export interface FailureMeta {
  code: string;
  message: string;
}

/** A failure, classified: the task result to report, and when trying again may work. */
export interface FailureClassification {
  status: TaskResultStatus;
  meta: FailureMeta;
  /**
   * How long the failing system asked to be left alone, in milliseconds: the `retryAfterMs` of the first error along
   * the chain that carries one (a finite number from 0 up, as the kit's clients and the examples' read it from
   * `Retry-After`). Only when `status` is `serviceUnavailable`; absent when nothing said how long.
   */
  retryAfterMs?: number;
}

/** Options of {@link classifyFailure}. */
export interface ClassifyFailureOptions {
  /**
   * The connector author's own rule, consulted before the kit's. Return a status to decide, or `undefined` to
   * leave the decision to the kit. A rule that throws or returns something else is ignored.
   * @default no rule
   */
  classifyFailure?: (error: unknown) => TaskResultStatus | undefined;
  /**
   * Values to scrub from the message, typically the task's decrypted credentials and the source system's token.
   * @default []
   */
  secrets?: Iterable<Secret | string | undefined>;
}

/** Longest `meta.message`; a source system's error may quote a whole response body. */
export const MAX_META_MESSAGE_LENGTH = 500;

interface Decision {
  status: TaskResultStatus;
  code: string;
}

/**
 * Maps anything a task handler threw to exactly one task result status, with a `meta` safe to send: a stable code
 * and the message with every known secret scrubbed and no stack. The rule, in order: the author's `classifyFailure`; then,
 * along the error and its causes, the kit's failure classes, an HTTP status, a network or timeout code; otherwise
 * `internalError`. See `docs/failure-mapping.md`.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { classifyFailure } from 'approval-connector-kit';
 *
 * classifyFailure(Object.assign(new Error('Forbidden'), { status: 403 }));
 * // { status: 'authenticationError', meta: { code: 'HTTP_403', message: 'Forbidden' } }
 * ```
 */
export function classifyFailure(error: unknown, options: ClassifyFailureOptions = {}): FailureClassification {
  const decision = decide(error, options.classifyFailure);
  const meta = { code: decision.code, message: safeMessage(error, decision.code, options.secrets) };
  const retryAfterMs = decision.status === 'serviceUnavailable' ? retryAfterOf(error) : undefined;
  return retryAfterMs === undefined
    ? { status: decision.status, meta }
    : { status: decision.status, meta, retryAfterMs };
}

/** The first `retryAfterMs` along the error's chain that is a finite number from 0 up. */
function retryAfterOf(error: unknown): number | undefined {
  for (const link of causeChain(error)) {
    const hint = property(link, 'retryAfterMs');
    if (typeof hint === 'number' && Number.isFinite(hint) && hint >= 0) return hint;
  }
  return undefined;
}

function decide(error: unknown, ownRule: ClassifyFailureOptions['classifyFailure']): Decision {
  const byAuthor = authorStatus(error, ownRule);
  if (byAuthor !== undefined) return { status: byAuthor, code: ownCode(error) };
  for (const link of causeChain(error)) {
    const decision = decideLink(link);
    if (decision !== undefined) return decision;
  }
  return { status: 'internalError', code: ownCode(error) };
}

function authorStatus(
  error: unknown,
  ownRule: ClassifyFailureOptions['classifyFailure'],
): TaskResultStatus | undefined {
  if (ownRule === undefined) return undefined;
  try {
    const status = TaskResultStatus.safeParse(ownRule(error));
    return status.success ? status.data : undefined;
  } catch {
    return undefined;
  }
}

function decideLink(link: object): Decision | undefined {
  if (link instanceof AuthenticationError) return { status: 'authenticationError', code: link.code };
  if (link instanceof ServiceUnavailableError) return { status: 'serviceUnavailable', code: link.code };
  if (link instanceof SystemError) return { status: 'systemError', code: link.code };
  if (link instanceof TaskDataInvalidError || link instanceof CredentialsUnreadableError) {
    return { status: 'internalError', code: link.code };
  }
  const status = httpStatusOf(link);
  if (status !== undefined) {
    const code = `HTTP_${status}`;
    if (status === 401 || status === 403) return { status: 'authenticationError', code };
    if (status >= 500 || status === 429 || status === 408) return { status: 'serviceUnavailable', code };
    return { status: 'systemError', code };
  }
  const code = property(link, 'code');
  if (isNetworkCode(code)) return { status: 'serviceUnavailable', code };
  // AbortSignal.timeout() rejects with a DOMException named TimeoutError, the task's deadline with a
  // TaskDeadlineError (of any copy of the kit); an abort caused by one carries it in `cause`, which the chain reaches
  // next. Any other AbortError (a shutdown) is not the source's fault.
  if (stringProperty(link, 'name') === 'TimeoutError' || isTaskDeadline(link)) {
    return { status: 'serviceUnavailable', code: 'TimeoutError' };
  }
  return undefined;
}

/** Whether `link` is the reason of a task's deadline, from this copy of the kit or another. */
function isTaskDeadline(link: object): boolean {
  return isBrandedKitError(link) && link.code === 'task_deadline';
}

/** The HTTP error status (400 to 599) an error carries, on any of the shapes common HTTP clients use. */
function httpStatusOf(link: object): number | undefined {
  const response = objectProperty(link, 'response');
  const metadata = objectProperty(link, '$metadata');
  const candidates = [
    property(link, 'status'),
    property(link, 'statusCode'),
    response === undefined ? undefined : property(response, 'status'),
    response === undefined ? undefined : property(response, 'statusCode'),
    metadata === undefined ? undefined : property(metadata, 'httpStatusCode'),
  ];
  return candidates.find(
    (value): value is number =>
      typeof value === 'number' && Number.isInteger(value) && value >= 400 && value < 600,
  );
}

function ownCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'nonErrorThrown';
  const code = stringProperty(error, 'code');
  if (code !== undefined && /^[A-Za-z][\w.-]{0,63}$/.test(code)) return code;
  const name = stringProperty(error, 'name');
  if (name !== undefined && /^[A-Za-z][\w.-]{0,63}$/.test(name)) return name;
  return 'internalError';
}

function safeMessage(error: unknown, code: string, secrets: ClassifyFailureOptions['secrets']): string {
  const raw =
    typeof error === 'string'
      ? error
      : typeof error === 'object' && error !== null
        ? (stringProperty(error, 'message') ?? '')
        : '';
  // Scrub before truncating: a secret cut in half would no longer be recognised.
  const message = redactSecrets(raw.trim(), secrets);
  if (message === '') return code;
  return message.length > MAX_META_MESSAGE_LENGTH
    ? `${message.slice(0, MAX_META_MESSAGE_LENGTH - 1)}…`
    : message;
}

// Getters of arbitrary thrown objects may throw; classification must not.
function stringProperty(value: object, key: string): string | undefined {
  const found = property(value, key);
  return typeof found === 'string' ? found : undefined;
}

function objectProperty(value: object, key: string): object | undefined {
  const found = property(value, key);
  return typeof found === 'object' && found !== null ? found : undefined;
}
