/**
 * Errors the reference backend raises on purpose. Each carries the HTTP status and the v1 `<kind>` it is answered
 * with; the HTTP layer turns them into the spec's error bodies, and the programmatic handle throws them as they are.
 * @module
 */
import { v1ErrorMessage } from '../api/index.js';
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

// The status of each kind, and the code the admin API answers it with (`{"error": {"code", "message"}}`).
const KINDS: Record<ServiceErrorKind, { status: number; adminCode: string }> = {
  'Bad Request': { status: 400, adminCode: 'bad_request' },
  Unauthorized: { status: 401, adminCode: 'unauthorized' },
  // Only the console answers it (a CSRF defence failed); the service's own APIs never do.
  Forbidden: { status: 403, adminCode: 'forbidden' },
  'Not Found': { status: 404, adminCode: 'not_found' },
  Conflict: { status: 409, adminCode: 'conflict' },
  'Payload Too Large': { status: 413, adminCode: 'payload_too_large' },
  'Too Many Requests': { status: 429, adminCode: 'rate_limited' },
  // 503 (and any other 5xx) shares this kind, as the contract's table has it; the status is passed apart.
  'Internal Server Error': { status: 500, adminCode: 'internal' },
};

/** The collections named in the published not-found message. */
export type Collection = 'users' | 'systems' | 'orgs' | 'approvals' | 'tasks';

/**
 * A request the service refuses (code `service`). `kind` says why (`Not Found`, `Conflict`, …) and
 * `status` with which HTTP status it is answered; `message` is the v1 message `<kind>. <detail>`.
 */
export class ServiceError extends ApprovalKitError<'service'> {
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
    super('service', v1ErrorMessage(kind, detail), options);
    this.status = options?.status ?? KINDS[kind].status;
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

/**
 * The code the admin API answers an error with, one per kind (`bad_request`, `unauthorized`, `forbidden`,
 * `not_found`, `conflict`, `payload_too_large`, `rate_limited`, `internal`): the admin API's own wire field, not an
 * error class's.
 */
export function adminErrorCode(kind: ServiceErrorKind): string {
  return KINDS[kind].adminCode;
}
