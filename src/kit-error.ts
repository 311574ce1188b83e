/**
 * Every error class of the kit in one union, so that checking `code` narrows an error to its class.
 * @module
 */
import type { ServiceError } from './backend/index.js';
import type {
  ApiError,
  BadRequestError,
  ClientClosedError,
  ConflictError,
  InvalidResponseError,
  NetworkError,
  NotFoundError,
  PagingStalledError,
  PartialAddUsersError,
  PayloadTooLargeError,
  ProtocolMismatchError,
  RateLimitedError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from './client/index.js';
import type { ConformanceFailure } from './conformance/index.js';
import type {
  AuthenticationError,
  CredentialsUnreadableError,
  ServiceUnavailableError,
  SystemError,
  TaskDataInvalidError,
  TaskDeadlineError,
} from './connector/index.js';
import {
  isBrandedKitError,
  type PortInUseError,
  type UnsupportedNodeError,
  type ValidationError,
} from './errors.js';
import type { HarnessTimeoutError } from './testing/index.js';
import type {
  ConnectorTokenRejectedError,
  InvalidConnectorError,
  KeyRingInvalidError,
  KeyRingUnavailableError,
  KeyStoreReadOnlyError,
  LifecycleError,
  OperationsServerClosedError,
  OperationsServerListenError,
  ServiceNotFoundError,
  ShutdownDeadlineError,
  StoppingError,
} from './worker/index.js';

/**
 * Any error the kit throws: the union of its error classes, one per {@link ErrorCode}. Each class fixes `code` to its
 * own literal, so comparing `code` narrows a `KitError` to the one class that owns the code. {@link isKitError} turns
 * a caught `unknown` into a `KitError`.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { isKitError } from 'approval-connector-kit';
 *
 * async function send() {
 *   try {
 *     await client.putApprovals(approvals);
 *   } catch (error) {
 *     if (!isKitError(error)) throw error;
 *     switch (error.code) {
 *       case 'rate_limited': // error is a RateLimitedError
 *         return error.retryAfterMs;
 *       case 'validation': // error is a ValidationError
 *         return error.issues;
 *     }
 *     throw error;
 *   }
 * }
 * await send();
 * ```
 */
export type KitError =
  // Shared by every part.
  | ValidationError
  | UnsupportedNodeError
  | PortInUseError
  // The clients.
  | ApiError<'api'>
  | BadRequestError
  | UnauthorizedError
  | NotFoundError
  | ConflictError
  | PayloadTooLargeError
  | RateLimitedError
  | ServerError
  | NetworkError
  | TimeoutError
  | ResponseTooLargeError
  | InvalidResponseError
  | PagingStalledError
  | PartialAddUsersError
  | ClientClosedError
  | ProtocolMismatchError
  // The connector.
  | LifecycleError
  | ConnectorTokenRejectedError
  | ServiceNotFoundError
  | InvalidConnectorError
  | StoppingError
  | TaskDeadlineError
  | ShutdownDeadlineError
  | AuthenticationError
  | ServiceUnavailableError
  | SystemError
  | TaskDataInvalidError
  | CredentialsUnreadableError
  | KeyRingUnavailableError
  | KeyRingInvalidError
  | KeyStoreReadOnlyError
  | OperationsServerClosedError
  | OperationsServerListenError
  // The reference backend and the test harness.
  | ServiceError
  | HarnessTimeoutError
  | ConformanceFailure;

/**
 * Whether a value is an error the kit threw, typed as the {@link KitError} union so that its `code` narrows it. It
 * checks the kit's `Symbol.for` brand, not `instanceof`, so that it also recognises an error thrown by another copy
 * of the kit loaded in the same process.
 */
export function isKitError(error: unknown): error is KitError {
  return isBrandedKitError(error);
}
