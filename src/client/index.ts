/**
 * Typed clients of the Approval Service: {@link IntegrationClient} (v2, for connectors) and
 * {@link ManagementClient} (v1, for an organization's users, mappings and systems), with the wire types they take
 * and return and the errors they throw. `approval-connector-kit/client` is this entry alone, for a program that
 * needs the clients without the connector.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { IntegrationClient, isRetryable } from 'approval-connector-kit/client';
 *
 * const client = new IntegrationClient({ baseUrl, token });
 * try {
 *   await client.putState({ cursor: '2026-05-01T10:00:00.000Z' });
 * } catch (error) {
 *   if (isRetryable(error, 'safe')) console.log('the service is still unavailable after retries');
 * }
 * ```
 * @module
 */

// First, so that an unsupported Node.js gets a clear error before any dependency fails on it.
import '../node-guard.js';

// The wire types the clients take and return.
export {
  AddUserResult,
  Approval,
  ApprovalFields,
  ApprovalWrite,
  ConnectorRegistration,
  ConnectorState,
  EncryptedCredentials,
  type EndpointName,
  GetUsersQuery,
  MAX_APPROVAL_ID_LENGTH,
  MAX_JSON_DEPTH,
  NewUser,
  NewUserMapping,
  PageQuery,
  System,
  Task,
  TaskResult,
  TaskResultStatus,
  UiTemplate,
  UiTemplateWrite,
  User,
  UserMapping,
  UserQueryField,
} from '../api/index.js';
// The errors they throw.
export {
  ApprovalKitError,
  type ErrorCode,
  ValidationError,
  type ValidationIssue,
  type ValidationIssueCode,
} from '../errors.js';
export {
  ApiError,
  type ApiErrorCode,
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
  type RequestTarget,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from './errors.js';
// The clients, their options and their retries.
export { type ApprovalsQuery, IntegrationClient, type LeasedTask } from './integration-client.js';
export { type IterateOptions, ManagementClient } from './management-client.js';
export {
  type ClientOptions,
  DEFAULT_MAX_RESPONSE_BYTES,
  type RequestOptions,
  type TokenSource,
} from './options.js';
export { isRetryable, type Repeatability, type RetryEvent, type RetryReason } from './retry.js';
