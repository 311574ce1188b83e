import { type AddUserResult, type NewUser, parseV1ErrorMessage, V1ErrorBody } from '../api/index.js';
import { ApprovalKitError, formatIssues, type ValidationIssue } from '../errors.js';
import { shownUrl } from '../internal/shown-url.js';

/** Where a request went: enough to find it in the service's logs, never the credential. */
export interface RequestTarget {
  method: string;
  /** The path and query as sent, without the base URL. */
  path: string;
}

/** The codes of {@link ApiError} and its subclasses, one per class. */
export type ApiErrorCode =
  | 'api'
  | 'bad_request'
  | 'unauthorized'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'server';

/**
 * The service answered with a status that is not a success, or with a v1 error body whatever the status. Subclasses
 * name the common cases; an `ApiError` itself (code `api`) is a status none of them covers.
 */
export class ApiError<Code extends ApiErrorCode = ApiErrorCode> extends ApprovalKitError<Code> {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The error body: parsed JSON when it was JSON, otherwise the raw text (or `undefined` when empty). */
  readonly body: unknown;
  /** For a v1 error `{"Error": "<kind>. <detail>"}`: the kind, such as `Not Found`. */
  readonly kind: string | undefined;
  /** For a v1 error: the detail after the kind. */
  readonly detail: string | undefined;

  constructor(code: Code, target: RequestTarget, status: number, body: unknown) {
    const v1 = V1ErrorBody.safeParse(body);
    const parsed = v1.success ? parseV1ErrorMessage(v1.data.Error) : undefined;
    const said = v1.success ? `: ${v1.data.Error}` : '';
    super(code, `${target.method} ${target.path} answered ${status}${said}`);
    this.method = target.method;
    this.path = target.path;
    this.status = status;
    this.body = body;
    this.kind = parsed?.kind;
    this.detail = parsed?.detail;
  }
}

/** 400 or 422 (or a v1 `Bad Request.` body): the service rejected the request as invalid. */
export class BadRequestError extends ApiError<'bad_request'> {
  constructor(target: RequestTarget, status: number, body: unknown) {
    super('bad_request', target, status, body);
  }
}

/** 401 or 403 (or a v1 `Unauthorized.` body): the credential is missing, unknown, or of the wrong kind. */
export class UnauthorizedError extends ApiError<'unauthorized'> {
  constructor(target: RequestTarget, status: number, body: unknown) {
    super('unauthorized', target, status, body);
  }
}

/** 404 (or a v1 `Not Found.` body): the item does not exist (or belongs to another organization or system). */
export class NotFoundError extends ApiError<'not_found'> {
  constructor(target: RequestTarget, status: number, body: unknown) {
    super('not_found', target, status, body);
  }
}

/** 409 (or a v1 `Conflict.` body): the request contradicts what the service holds. */
export class ConflictError extends ApiError<'conflict'> {
  constructor(target: RequestTarget, status: number, body: unknown) {
    super('conflict', target, status, body);
  }
}

/** 413: the body was larger than the service accepts. The clients split bodies so that this does not happen. */
export class PayloadTooLargeError extends ApiError<'payload_too_large'> {
  constructor(target: RequestTarget, status: number, body: unknown) {
    super('payload_too_large', target, status, body);
  }
}

/** 429: too many requests. Retried by the clients; thrown once retries are spent. */
export class RateLimitedError extends ApiError<'rate_limited'> {
  /** How long the service asked to wait, from `Retry-After`, when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(target: RequestTarget, status: number, body: unknown, retryAfterMs: number | undefined) {
    super('rate_limited', target, status, body);
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx: the service failed. Retried by the clients; thrown once retries are spent. */
export class ServerError extends ApiError<'server'> {
  readonly retryAfterMs: number | undefined;

  constructor(target: RequestTarget, status: number, body: unknown, retryAfterMs?: number) {
    super('server', target, status, body);
    this.retryAfterMs = retryAfterMs;
  }
}

/** The request did not complete: the connection failed, was refused, reset or closed. */
export class NetworkError extends ApprovalKitError<'network'> {
  readonly method: string;
  readonly path: string;
  /** The system's or undici's error code, such as `ECONNREFUSED` or `UND_ERR_SOCKET`. */
  readonly reason: string | undefined;
  /** True when the request provably never reached the server (refused, or the host was not found). */
  readonly unsent: boolean;

  constructor(target: RequestTarget, reason: string | undefined, unsent: boolean, cause: unknown) {
    super('network', `${target.method} ${target.path} failed: ${reason ?? 'network error'}`, { cause });
    this.method = target.method;
    this.path = target.path;
    this.reason = reason;
    this.unsent = unsent;
  }
}

/** No complete answer came within the request's timeout. */
export class TimeoutError extends ApprovalKitError<'timeout'> {
  readonly method: string;
  readonly path: string;
  readonly timeoutMs: number;

  constructor(target: RequestTarget, timeoutMs: number, options?: { cause?: unknown }) {
    super('timeout', `${target.method} ${target.path} timed out after ${timeoutMs} ms`, options);
    this.method = target.method;
    this.path = target.path;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The answer's body was larger than `ClientOptions.maxResponseBytes`. The request was aborted as soon as that was
 * known, before more of the body was read; it is not retried (the same request would get the same answer).
 */
export class ResponseTooLargeError extends ApprovalKitError<'response_too_large'> {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The limit that was passed, in bytes. */
  readonly limitBytes: number;

  constructor(target: RequestTarget, status: number, limitBytes: number) {
    super(
      'response_too_large',
      `${target.method} ${target.path} answered ${status} with a body over the limit of ${limitBytes} bytes ` +
        '(maxResponseBytes)',
    );
    this.method = target.method;
    this.path = target.path;
    this.status = status;
    this.limitBytes = limitBytes;
  }
}

/** The service answered success, but the body is not what the contract says (a required field is missing, say). */
export class InvalidResponseError extends ApprovalKitError<'invalid_response'> {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly issues: readonly ValidationIssue[];

  constructor(target: RequestTarget, status: number, issues: readonly ValidationIssue[]) {
    super(
      'invalid_response',
      `${target.method} ${target.path} answered ${status} with an unexpected body: ${formatIssues(issues)}`,
    );
    this.method = target.method;
    this.path = target.path;
    this.status = status;
    this.issues = issues;
  }
}

/** The error for an answer with a non-success status. */
export function errorForStatus(
  target: RequestTarget,
  status: number,
  body: unknown,
  retryAfterMs: number | undefined,
): ApiError {
  return errorOfClass(status, target, status, body, retryAfterMs);
}

// The kinds of v1 error message, each with the status whose error class it stands for.
const V1_KIND_STATUS: ReadonlyMap<string, number> = new Map([
  ['bad request', 400],
  ['unprocessable entity', 422],
  ['unauthorized', 401],
  ['forbidden', 403],
  ['not found', 404],
  ['conflict', 409],
  ['payload too large', 413],
  ['too many requests', 429],
  ['internal server error', 500],
  ['bad gateway', 502],
  ['service unavailable', 503],
  ['gateway timeout', 504],
]);

/**
 * Whether a v1 answer's body is the v1 error shape, exactly: an object whose one field `Error` holds `<kind>. <detail>`
 * (or `<kind>.` alone). The spec shows no status codes, so such a body is an error whatever the status says.
 */
export function isV1Error(body: unknown): body is { Error: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  const message = (body as { Error?: unknown }).Error;
  return keys.length === 1 && typeof message === 'string' && /^[^.]+\.(?: [\s\S]*)?$/.test(message);
}

/**
 * The error for a v1 error body that came with a success status: the class its kind names (`Not Found` gives a
 * {@link NotFoundError}), the status as received. An unknown kind gives an {@link ApiError} with code `api`.
 */
export function errorForV1Body(
  target: RequestTarget,
  status: number,
  body: { Error: string },
  retryAfterMs: number | undefined,
): ApiError {
  const { kind } = parseV1ErrorMessage(body.Error);
  return errorOfClass(V1_KIND_STATUS.get(kind.toLowerCase()) ?? 0, target, status, body, retryAfterMs);
}

function errorOfClass(
  classStatus: number,
  target: RequestTarget,
  status: number,
  body: unknown,
  retryAfterMs: number | undefined,
): ApiError {
  if (classStatus === 400 || classStatus === 422) return new BadRequestError(target, status, body);
  if (classStatus === 401 || classStatus === 403) return new UnauthorizedError(target, status, body);
  if (classStatus === 404) return new NotFoundError(target, status, body);
  if (classStatus === 409) return new ConflictError(target, status, body);
  if (classStatus === 413) return new PayloadTooLargeError(target, status, body);
  if (classStatus === 429) return new RateLimitedError(target, status, body, retryAfterMs);
  if (classStatus >= 500) return new ServerError(target, status, body, retryAfterMs);
  return new ApiError('api', target, status, body);
}

/** An iterator over pages cannot advance: the service returned a full page that does not move on. */
export class PagingStalledError extends ApprovalKitError<'paging_stalled'> {
  constructor(what: string) {
    super('paging_stalled', `${what}: a full page did not advance; stopping instead of looping`);
  }
}

/**
 * A split Add users failed after its first request. The users of the earlier requests were added: their results are
 * in `results`. The request that failed (with `cause`) carried `uncertain`: it may or may not have reached the
 * service, so check with Get users before sending them again. The users in `notSent` were not sent.
 */
export class PartialAddUsersError extends ApprovalKitError<'partial_add_users'> {
  readonly results: AddUserResult[];
  readonly uncertain: NewUser[];
  readonly notSent: NewUser[];

  constructor(results: AddUserResult[], uncertain: NewUser[], notSent: NewUser[], cause: unknown) {
    super(
      'partial_add_users',
      `Add users failed after ${results.length} results: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.results = results;
    this.uncertain = uncertain;
    this.notSent = notSent;
  }
}

/**
 * The service's base URL and the server disagree on TLS: an `https` URL whose server answers in plain HTTP, or an
 * `http` URL whose server speaks only TLS. Not retried: the same URL gets the same answer. The message names the URL
 * to use instead.
 */
export class ProtocolMismatchError extends ApprovalKitError<'protocol_mismatch'> {
  /** The base URL as given, without credentials or query. */
  readonly url: string;
  /** What the server speaks: `http` (plain) or `https` (TLS). */
  readonly serverSpeaks: 'http' | 'https';

  constructor(baseUrl: URL, serverSpeaks: 'http' | 'https', options?: { cause?: unknown }) {
    const given = shownUrl(baseUrl);
    const other = new URL(given);
    other.protocol = `${serverSpeaks}:`;
    super(
      'protocol_mismatch',
      serverSpeaks === 'http'
        ? `${given} answered in plain HTTP, not TLS: use ${other.href}, or put the service behind TLS`
        : `${given} speaks TLS, not plain HTTP: use ${other.href}`,
      options,
    );
    this.url = given;
    this.serverSpeaks = serverSpeaks;
  }
}

/** A request was made through a client after its `close()` or `destroy()`. */
export class ClientClosedError extends ApprovalKitError<'client_closed'> {
  constructor() {
    super('client_closed', 'The client is closed');
  }
}
