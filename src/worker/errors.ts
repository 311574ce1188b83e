/**
 * The errors of the connector's runtime: its shape, and the reasons its signals abort with when it
 * stops. The failures a task handler throws are in `failures.ts`; those of keys and the operations port beside them.
 * @module
 */
import type { ApiError } from '../client/index.js';
import { ApprovalKitError } from '../errors.js';
import { shownUrl } from '../internal/shown-url.js';

/** The connector cannot run as written: it does not implement what its use needs (`lookup()` for a reconciliation). */
export class InvalidConnectorError extends ApprovalKitError<'invalid_connector'> {
  constructor(message: string) {
    super('invalid_connector', message);
  }
}

// The reason the signals of the author's code abort with when the worker stops: the author's contract holds it.
export { StoppingError } from '../connector/index.js';

/** The shutdown deadline (`shutdown.graceMs + shutdown.forceMs`) has passed: what every call still waiting aborts with. */
export class ShutdownDeadlineError extends ApprovalKitError<'shutdown_deadline'> {
  constructor() {
    super('shutdown_deadline', 'The shutdown deadline has passed');
  }
}

/**
 * The service refused the worker's connector token when it started (401 or 403): the token is not one of the
 * service's, or not a connector token. The message names the URL and where the token is set, never the token; the
 * service's answer is the `cause`.
 */
export class ConnectorTokenRejectedError extends ApprovalKitError<'connector_token_rejected'> {
  /** The service's base URL, without credentials or query. */
  readonly url: string;

  constructor(baseUrl: URL, cause: ApiError) {
    const url = shownUrl(baseUrl);
    super(
      'connector_token_rejected',
      `The Approval Service at ${url} refused the connector token (${cause.method} ${cause.path} answered ` +
        `${cause.status}): set APPROVAL_CONNECTOR_TOKEN (service.token) to the connector token of this system`,
      { cause },
    );
    this.url = url;
  }
}

/**
 * There is no Approval Service API at the worker's base URL: a call it made when it started answered 404. The base
 * URL is most likely wrong (a path too many, or another server's port). The service's answer is the `cause`.
 */
export class ServiceNotFoundError extends ApprovalKitError<'service_not_found'> {
  /** The service's base URL, without credentials or query. */
  readonly url: string;

  constructor(baseUrl: URL, cause: ApiError) {
    const url = shownUrl(baseUrl);
    super(
      'service_not_found',
      `There is no Approval Service API at ${url} (${cause.method} ${cause.path} answered ${cause.status}): ` +
        'set APPROVAL_SERVICE_URL (service.baseUrl) to the URL the service answers under, the part before /v2/',
      { cause },
    );
    this.url = url;
  }
}
