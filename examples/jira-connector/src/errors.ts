/**
 * What the Jira client throws. Each error has a stable `code`; an error that stands for an HTTP answer carries its
 * `status`, so the kit's failure mapping classifies it without more code (401/403 `authenticationError`; 408, 429
 * and 5xx `serviceUnavailable`; other 4xx `systemError`). A failed connection is thrown as the error `fetch` gives
 * as the cause of its `TypeError` (its `code`, such as `ECONNREFUSED`, is what the mapping reads), and an aborted
 * call rejects with its signal's reason.
 *
 * No error holds a credential: messages name the method and the path (never the query, never a header).
 * @module
 */

/** The base of every error of the Jira client. */
export class JiraError extends Error {
  /** A stable identifier of the kind of failure. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A value given to the client is unusable; nothing was sent. */
export class JiraArgumentError extends JiraError {
  constructor(message: string) {
    super('jira_invalid_argument', message);
  }
}

/**
 * A setting as one of the checks found it: its value, or what is wrong with it, as a phrase that follows the
 * setting's name (`must be a non-empty JQL query, …`). Each check is written once; the client names its option
 * (`jql`), the connector's configuration the variable (`JIRA_JQL`).
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The value of a check, or a {@link JiraArgumentError} naming the setting. */
export function orThrow<T>(name: string, checked: Checked<T>): T {
  if (!checked.ok) throw new JiraArgumentError(`${name} ${checked.problem}`);
  return checked.value;
}

/** Jira answered with an HTTP status that is not a success. */
export class JiraHttpError extends JiraError {
  readonly method: string;
  /** The path that was called, without its query. */
  readonly path: string;
  readonly status: number;
  /**
   * How long Jira asked to wait before calling again, from `Retry-After` (seconds or an HTTP date), when it said.
   * Jira sends it with `429 Too Many Requests`, and with some transient `5xx`.
   */
  readonly retryAfterMs: number | undefined;
  /** What Jira said: the platform's `errorMessages` and `errors`, or Service Management's `errorMessage`. */
  readonly errorMessages: readonly string[];

  constructor(
    target: { method: string; path: string },
    status: number,
    errorMessages: readonly string[],
    retryAfterMs: number | undefined,
  ) {
    const said = errorMessages.length > 0 ? `: ${errorMessages.join(' ')}` : '';
    // The kit's failure mapping carries the message, not the fields, into the task result: say when to try again.
    const wait = retryAfterMs === undefined ? '' : `; try again in ${Math.ceil(retryAfterMs / 1000)} s`;
    super(
      'jira_http_error',
      `${target.method} ${target.path} answered ${status}${said}${wait}`.slice(0, 500),
    );
    this.method = target.method;
    this.path = target.path;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.errorMessages = errorMessages;
  }
}

/** Jira answered with a success whose body is not what its documentation describes. */
export class JiraResponseError extends JiraError {
  readonly method: string;
  readonly path: string;

  constructor(target: { method: string; path: string }, problem: string) {
    super('jira_invalid_response', `${target.method} ${target.path} answered ${problem}`.slice(0, 500));
    this.method = target.method;
    this.path = target.path;
  }
}

/** No complete answer came within the client's `timeoutMs`; the `cause` is the `TimeoutError` of the deadline. */
export class JiraTimeoutError extends JiraError {
  readonly method: string;
  readonly path: string;
  readonly timeoutMs: number;

  constructor(target: { method: string; path: string }, timeoutMs: number, cause: unknown) {
    super('jira_timeout', `${target.method} ${target.path} did not answer within ${timeoutMs} ms`, { cause });
    this.method = target.method;
    this.path = target.path;
    this.timeoutMs = timeoutMs;
  }
}
