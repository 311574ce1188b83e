/**
 * The kit's one error hierarchy. Every error the kit throws is an {@link ApprovalKitError} whose `code` is one of
 * the {@link ErrorCode}s, and each code belongs to exactly one class: branch on `code` (or `instanceof`), never on
 * the message. The union of every class, which `code` narrows, is `KitError` (`kit-error.ts`).
 * @module
 */
import type { z } from 'zod';

/**
 * Every code an error of the kit carries, each owned by exactly one class (named beside it), whose name it echoes:
 * the class's name without `Error`, in snake_case (`PartialAddUsersError` has `partial_add_users`). Stable: a code
 * is never reused for another kind of failure. `docs/errors.md` lists them with their classes.
 */
export const ERROR_CODES = [
  // Shared by every part.
  'validation', // ValidationError
  'unsupported_node', // UnsupportedNodeError
  'port_in_use', // PortInUseError
  // The clients.
  'api', // ApiError (a status without a class of its own)
  'bad_request', // BadRequestError
  'unauthorized', // UnauthorizedError
  'not_found', // NotFoundError
  'conflict', // ConflictError
  'payload_too_large', // PayloadTooLargeError
  'rate_limited', // RateLimitedError
  'server', // ServerError
  'network', // NetworkError
  'timeout', // TimeoutError
  'response_too_large', // ResponseTooLargeError
  'invalid_response', // InvalidResponseError
  'paging_stalled', // PagingStalledError
  'partial_add_users', // PartialAddUsersError
  'client_closed', // ClientClosedError
  'protocol_mismatch', // ProtocolMismatchError
  // The connector.
  'lifecycle', // LifecycleError
  'connector_token_rejected', // ConnectorTokenRejectedError
  'service_not_found', // ServiceNotFoundError
  'invalid_connector', // InvalidConnectorError
  'stopping', // StoppingError
  'task_deadline', // TaskDeadlineError
  'shutdown_deadline', // ShutdownDeadlineError
  'authentication', // AuthenticationError
  'service_unavailable', // ServiceUnavailableError
  'system', // SystemError
  'task_data_invalid', // TaskDataInvalidError
  'credentials_unreadable', // CredentialsUnreadableError
  'key_ring_unavailable', // KeyRingUnavailableError
  'key_ring_invalid', // KeyRingInvalidError
  'key_store_read_only', // KeyStoreReadOnlyError
  'operations_server_closed', // OperationsServerClosedError
  'operations_server_listen', // OperationsServerListenError
  // The reference backend and the test harness.
  'service', // ServiceError
  'harness_timeout', // HarnessTimeoutError
  // The conformance kit.
  'conformance_failure', // ConformanceFailure
] as const;

/** The code of an error of the kit: one of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The brand of every error of the kit. `Symbol.for` gives the same symbol to every copy of the kit in a process (an
 * application and a connector package may each install one), so the brand tells an error of another copy, which
 * `instanceof` does not: each copy has its own classes.
 */
const KIT_ERROR_BRAND = Symbol.for('approval-connector-kit.error');

/**
 * Base class of every error the kit throws. It is abstract: each {@link ErrorCode} has its own subclass, which fixes
 * `code` to that one literal, so that checking `code` on a `KitError` narrows it to the class.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { isKitError } from 'approval-connector-kit';
 *
 * try {
 *   await client.putState(state);
 * } catch (error) {
 *   if (isKitError(error) && error.code === 'rate_limited') console.log(error.retryAfterMs); // a RateLimitedError
 *   throw error;
 * }
 * ```
 */
export abstract class ApprovalKitError<Code extends ErrorCode = ErrorCode> extends Error {
  /** Stable, machine-readable identifier of the kind of failure: one class per code. */
  readonly code: Code;

  static {
    // On the prototype, not on each error: every subclass inherits it, and it stays out of what logs print.
    Object.defineProperty(ApprovalKitError.prototype, KIT_ERROR_BRAND, { value: true });
  }

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Whether `value` is an {@link ApprovalKitError} of any copy of the kit: it carries the kit's brand. */
export function isBrandedKitError(value: unknown): value is ApprovalKitError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [KIT_ERROR_BRAND]?: unknown })[KIT_ERROR_BRAND] === true
  );
}

/** zod's kind of a validation issue (`invalid_type`, `too_small`, `unrecognized_keys`, `custom`, …). */
export type ValidationIssueCode = z.core.$ZodIssueCode;

/** One problem found while validating input: where it is and what is wrong. */
export interface ValidationIssue {
  /** Path to the offending value, as property names and array indexes. Empty for the value itself. */
  path: ReadonlyArray<string | number>;
  /** What is wrong, in plain words. */
  message: string;
  /**
   * What kind of problem it is, in zod's terms: the issue's own code when zod found it, `custom` for the kit's own
   * rules that have no closer zod code.
   */
  code: ValidationIssueCode;
}

/**
 * Input failed validation: a request before it was sent, an option, a config file, or a request the reference
 * backend received. Carries every issue found, not just the first.
 */
export class ValidationError extends ApprovalKitError<'validation'> {
  readonly issues: readonly ValidationIssue[];

  constructor(subject: string, issues: readonly ValidationIssue[], options?: { cause?: unknown }) {
    super('validation', `Invalid ${subject}: ${formatIssues(issues)}`, options);
    this.issues = issues;
  }
}

/** The kit was loaded on a Node.js older than it supports; the message names both versions. */
export class UnsupportedNodeError extends ApprovalKitError<'unsupported_node'> {
  constructor(message: string) {
    super('unsupported_node', message);
  }
}

/** Where a server was to listen, and what the person who started it changes to pick another port. */
export interface PortInUseDetails {
  port: number;
  host: string;
  /**
   * The flag, variable or option that sets the port, as the person who started the server knows it: `--port`,
   * `OPERATIONS_PORT`, the `port` option.
   */
  setting: string;
}

/**
 * A server could not listen: its port is in use, by another server or by a connection that holds it as its own end.
 * The message names the port and the setting that changes it, never more.
 */
export class PortInUseError extends ApprovalKitError<'port_in_use'> {
  readonly port: number;
  readonly host: string;
  readonly setting: string;

  constructor({ port, host, setting }: PortInUseDetails, options?: { cause?: unknown }) {
    super(
      'port_in_use',
      `Port ${port} on ${host} is already in use: free it, or choose another port with ${setting} (0 picks a free one)`,
      options,
    );
    this.port = port;
    this.host = host;
    this.setting = setting;
  }

  /**
   * The error a server's failure to listen is: a `PortInUseError` when the port was in use (`EADDRINUSE`),
   * otherwise the failure itself. A `PortInUseError` already is one, named after `setting` now.
   */
  static from(error: unknown, details: PortInUseDetails): unknown {
    if (error instanceof PortInUseError) return new PortInUseError(details, { cause: error.cause });
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'EADDRINUSE' ? new PortInUseError(details, { cause: error }) : error;
  }
}

/** Converts a zod error into the kit's issue list, keeping each issue's path, message and code. */
export function toIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.filter((part): part is string | number => typeof part !== 'symbol'),
    message: issue.message,
    code: issue.code,
  }));
}

/**
 * Renders issues as `path: message; path: message`, the form used in every validation message. A message that names
 * its own path already, as an option's does (``Expected `sync.schedule` to be …``), is shown as it is.
 */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) => {
      const path = formatPath(issue.path);
      return path === '' || issue.message.includes(`\`${path}\``)
        ? issue.message
        : `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** Renders a path as `a.b[0].c`. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('');
}
