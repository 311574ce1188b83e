/**
 * Errors the reference backend raises on purpose. Each carries the HTTP status and the v1 `<kind>` it is answered
 * with; the HTTP layer turns them into the spec's error bodies, and the programmatic handle throws them as they are.
 * @module
 */
import { v1ErrorMessage } from '../api/errors.js';
import { ApprovalKitError, formatIssues, type ValidationIssue } from '../errors.js';

/** The `<kind>` part of a v1 error message, one per status the backend answers with. */
export type ServiceErrorKind =
  | 'Bad Request'
  | 'Unauthorized'
  | 'Forbidden'
  | 'Not Found'
  | 'Conflict'
  | 'Payload Too Large'
  | 'Too Many Requests'
  | 'Internal Server Error';

const KINDS: Record<ServiceErrorKind, { status: number; code: string }> = {
  'Bad Request': { status: 400, code: 'bad_request' },
  Unauthorized: { status: 401, code: 'unauthorized' },
  // Only the console answers it (a CSRF defence failed); the service's own APIs never do.
  Forbidden: { status: 403, code: 'forbidden' },
  'Not Found': { status: 404, code: 'not_found' },
  Conflict: { status: 409, code: 'conflict' },
  'Payload Too Large': { status: 413, code: 'payload_too_large' },
  'Too Many Requests': { status: 429, code: 'rate_limited' },
  // 503 (and any other 5xx) shares this kind, as the contract's table has it; the status is passed apart.
  'Internal Server Error': { status: 500, code: 'internal' },
};

/** The collections named in the published not-found message. */
export type Collection = 'users' | 'systems' | 'orgs' | 'approvals' | 'tasks';

/**
 * A request the service refuses. `code` is stable (`bad_request`, `unauthorized`, `forbidden`, `not_found`,
 * `conflict`, `payload_too_large`, `rate_limited`, `internal`); `message` is the v1 message `<kind>. <detail>`.
 */
export class ServiceError extends ApprovalKitError {
  readonly status: number;
  readonly kind: ServiceErrorKind;
  readonly detail: string;
  readonly issues: readonly ValidationIssue[];
  /** Seconds for a `Retry-After` header, on a 429 or 503. */
  readonly retryAfter: number | undefined;

  constructor(
    kind: ServiceErrorKind,
    detail: string,
    options?: { cause?: unknown; issues?: readonly ValidationIssue[]; status?: number; retryAfter?: number },
  ) {
    const { status, code } = KINDS[kind];
    super(code, v1ErrorMessage(kind, detail), options);
    this.status = options?.status ?? status;
    this.kind = kind;
    this.detail = detail;
    this.issues = options?.issues ?? [];
    this.retryAfter = options?.retryAfter;
  }

  /** The published wording, "the an" included. */
  static notFound(collection: Collection, id: string): ServiceError {
    return new ServiceError('Not Found', `Failed to find the an item ${collection} ${id}`);
  }

  /** The published wording of every authentication failure. */
  static unauthorized(): ServiceError {
    return new ServiceError('Unauthorized', '[Authentication] failed to get token data');
  }

  static invalid(issues: readonly ValidationIssue[]): ServiceError {
    return new ServiceError('Bad Request', formatIssues(issues), { issues });
  }

  static badRequest(detail: string): ServiceError {
    return new ServiceError('Bad Request', detail);
  }

  static conflict(detail: string): ServiceError {
    return new ServiceError('Conflict', detail);
  }
}
