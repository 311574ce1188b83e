/**
 * What the SAP client throws. Every error of an HTTP answer carries its `status` (and `retryAfterMs` when SAP said
 * how long to wait), so the kit's failure mapping (`docs/failure-mapping.md`) classifies it as it is: 401/403 an
 * authentication error, 404/409 and other 4xx a system error, 429 and 5xx "service unavailable".
 *
 * No error holds a request: not its headers, not the credentials, not the CSRF token or the session cookies.
 * @module
 */

/** The base of the SAP client's errors; `code` is a stable snake_case identifier. */
export class SapError extends Error {
  override name = 'SapError';

  constructor(
    message: string,
    readonly code: 'sap_http' | 'sap_response_invalid' | 'sap_inbox_unsettled' | 'sap_decision_unavailable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** SAP answered with an HTTP error status. */
export class SapHttpError extends SapError {
  override name = 'SapHttpError';
  /** The HTTP status SAP answered. */
  readonly status: number;
  /** How long SAP asked to wait, from `Retry-After`, when it said. */
  readonly retryAfterMs: number | undefined;
  /** The OData error's `error.code` (for example a T100 message id), when the answer carried one. */
  readonly sapCode: string | undefined;
  /** The OData error's `error.message.value`, when the answer carried one. */
  readonly sapMessage: string | undefined;

  constructor(
    what: string,
    status: number,
    details: {
      retryAfterMs?: number | undefined;
      sapCode?: string | undefined;
      sapMessage?: string | undefined;
    },
  ) {
    super(
      details.sapMessage === undefined
        ? `SAP answered ${status} to ${what}`
        : `SAP answered ${status} to ${what}: ${details.sapMessage}`,
      'sap_http',
    );
    this.status = status;
    this.retryAfterMs = details.retryAfterMs;
    this.sapCode = details.sapCode;
    this.sapMessage = details.sapMessage;
  }
}

/** SAP answered 2xx with a body that is not what the task-processing service documents. */
export class SapResponseError extends SapError {
  override name = 'SapResponseError';

  constructor(what: string, problem: string, options?: { cause?: unknown }) {
    super(`SAP's answer to ${what} was not understood: ${problem}`, 'sap_response_invalid', options);
  }
}

/**
 * The inbox kept changing under a paged read, so no complete list of the open tasks could be read. The read is
 * abandoned rather than missing a task (which a snapshot sync would mark resolved); the next sync reads again.
 */
export class SapInboxUnsettledError extends SapError {
  override name = 'SapInboxUnsettledError';

  constructor(attempts: number) {
    super(
      `The SAP inbox changed during each of ${attempts} attempts to read it page by page; the next sync reads it again`,
      'sap_inbox_unsettled',
    );
  }
}

/**
 * The task does not offer the decision asked for, or that decision needs a comment and none was given. Nothing was
 * sent to SAP. The message is written for the approver.
 */
export class SapDecisionUnavailableError extends SapError {
  override name = 'SapDecisionUnavailableError';

  constructor(
    message: string,
    readonly reason: 'not_offered' | 'comment_required',
  ) {
    super(message, 'sap_decision_unavailable');
  }
}
