/**
 * The error codes (Node's and undici's) of a network failure: the request did not complete, or never started. The
 * one list of the kit: the clients turn them into a `NetworkError`, and the failure mapping reports a handler that
 * met one as `serviceUnavailable`.
 */

/** Failures before a byte of the request can have reached the server: the request may be sent again safely. */
export const UNSENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A connection refused, reset, closed or unresolvable. */
export const CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** A connection or an answer that took too long. */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Whether `code` is the code of a network failure: one of {@link CONNECTION_CODES} or {@link TIMEOUT_CODES}. */
export function isNetworkCode(code: unknown): code is string {
  return typeof code === 'string' && (CONNECTION_CODES.has(code) || TIMEOUT_CODES.has(code));
}
