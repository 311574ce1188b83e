/**
 * What the ServiceNow client and connector throw. An error that stands for an HTTP answer carries its `status` (and
 * `retryAfterMs` when the instance said how long to wait), so the kit's failure mapping (`docs/failure-mapping.md`)
 * classifies it as it is: 401 and 403 an authentication error, 429 and 5xx "service unavailable", other 4xx a system
 * error. A failed connection is thrown as the error `fetch` gives as the cause of its `TypeError` (with the `code`,
 * such as `ECONNREFUSED`, that the mapping reads); a call that runs out of time rejects with the `TimeoutError` of its
 * deadline, and one aborted by its signal with the signal's reason.
 *
 * No error holds a credential: messages name the method, the table and the record, never a header or a password.
 * @module
 */

/** The stable codes of {@link ServiceNowError}. */
export type ServiceNowErrorCode =
  | 'servicenow_invalid_argument'
  | 'servicenow_http'
  | 'servicenow_invalid_response'
  | 'no_longer_requested'
  | 'decision_not_applied'
  | 'servicenow_invalid_delivery';

/** The base of the example's errors; `code` is a stable snake_case identifier. */
export class ServiceNowError extends Error {
  readonly code: ServiceNowErrorCode;

  constructor(code: ServiceNowErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A value given to the client or the connector is unusable; nothing was sent. */
export class ServiceNowArgumentError extends ServiceNowError {
  constructor(message: string) {
    super('servicenow_invalid_argument', message);
  }
}

/** A push delivery whose body is not what the business rules post: the kit counts it malformed and drops it. */
export class ServiceNowDeliveryError extends ServiceNowError {
  constructor(problem: string) {
    super('servicenow_invalid_delivery', `The push delivery ${problem}`);
  }
}

/**
 * A setting as a check found it: its value, or what is wrong with it, as a phrase that follows the setting's name
 * (`must be an http(s) URL, …`). Each check is written once; the client names its option (`instanceUrl`), the
 * connector's configuration its variable (`SERVICENOW_INSTANCE_URL`).
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The value of a check, or a {@link ServiceNowArgumentError} naming the setting. */
export function orThrow<T>(name: string, checked: Checked<T>): T {
  if (!checked.ok) throw new ServiceNowArgumentError(`${name} ${checked.problem}`);
  return checked.value;
}

/** What an answer of the instance was to: the method and the path, without the query. */
export interface CallTarget {
  method: string;
  path: string;
}

/** The instance answered with an HTTP status that is not a success (a redirect included: it is not followed). */
export class ServiceNowHttpError extends ServiceNowError {
  readonly method: string;
  /** The path that was called, without its query. */
  readonly path: string;
  readonly status: number;
  /** How long the instance asked to wait, from `Retry-After` (seconds), when it said: a `429`'s rate limit. */
  readonly retryAfterMs: number | undefined;
  /** The error body's `error.message` (`User Not Authenticated`, `Rate limit exceeded`, …), when there was one. */
  readonly serviceNowMessage: string | undefined;
  /** The error body's `error.detail`, when there was one. */
  readonly detail: string | undefined;

  constructor(
    target: CallTarget,
    status: number,
    said: { message?: string | undefined; detail?: string | undefined },
    retryAfterMs: number | undefined,
  ) {
    const text = [said.message, said.detail].filter((part) => part !== undefined && part !== '').join(': ');
    // The kit's failure mapping carries the message into the task result: say when to try again.
    const wait = retryAfterMs === undefined ? '' : `; try again in ${Math.ceil(retryAfterMs / 1000)} s`;
    super(
      'servicenow_http',
      `${target.method} ${target.path} answered ${status}${text === '' ? '' : `: ${text}`}${wait}`.slice(
        0,
        500,
      ),
    );
    this.method = target.method;
    this.path = target.path;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.serviceNowMessage = said.message;
    this.detail = said.detail;
  }
}

/** The instance answered a success whose body is not what the Table API describes. */
export class ServiceNowResponseError extends ServiceNowError {
  readonly method: string;
  readonly path: string;

  constructor(target: CallTarget, problem: string) {
    super('servicenow_invalid_response', `${target.method} ${target.path} answered ${problem}`.slice(0, 500));
    this.method = target.method;
    this.path = target.path;
  }
}

/**
 * A decision that did not land: the approval stopped waiting for this approver while the task was on its way
 * (`no_longer_requested`: cancelled by its workflow, no longer required, decided by someone else), or the instance
 * answered the update with the approval in another state (`decision_not_applied`: a business rule kept it). The
 * message is written for the approver; the code is the task result's `meta.code`.
 */
export class ServiceNowDecisionError extends ServiceNowError {
  constructor(
    code: 'no_longer_requested' | 'decision_not_applied',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}
