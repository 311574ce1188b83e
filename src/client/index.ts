/**
 * Typed clients of the Approval Service: {@link IntegrationClient} (v2, for connectors) and
 * {@link ManagementClient} (v1, for an organization's users, mappings and systems).
 *
 * @example
 * ```ts
 * import { IntegrationClient, RateLimitedError } from 'approval-connector-kit';
 *
 * const client = new IntegrationClient({ baseUrl: 'https://approvals.example.com', token });
 * try {
 *   await client.putState({ cursor: '2026-05-01T10:00:00.000Z' });
 * } catch (error) {
 *   if (error instanceof RateLimitedError) console.log('still rate limited after retries');
 * }
 * ```
 * @module
 */
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
  RateLimitedError,
  type RequestTarget,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from './errors.js';
export { type ApprovalsQuery, IntegrationClient, type LeasedTask } from './integration-client.js';
export { CLIENT_BODY_BUDGET_BYTES, type IterateOptions, ManagementClient } from './management-client.js';
export {
  type ClientOptions,
  DEFAULT_MAX_RESPONSE_BYTES,
  type RequestOptions,
  type ResolvedClientOptions,
  resolveClientOptions,
  type TokenSource,
} from './options.js';
export { isRetryable, type Repeatability, type RetryEvent, type RetryReason } from './retry.js';
