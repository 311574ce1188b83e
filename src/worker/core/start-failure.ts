/**
 * What a failed start is, for the person who started the worker: a rejected token, a base URL with no service
 * behind it, a TLS mismatch, a port in use, each an error of its own whose message names the fix, logged as one
 * line without a stack. Any other failure is logged as it is, with its stack.
 * @module
 */
import { NotFoundError, ProtocolMismatchError, UnauthorizedError } from '../../client/index.js';
import { PortInUseError } from '../../errors.js';
import { ConnectorTokenRejectedError, ServiceNotFoundError } from '../errors.js';
import { OperationsServerListenError, type PinoLogger } from '../operations/index.js';

/** A start failure whose message says what to change: logged without a stack, which would say nothing more. */
export type DiagnosedStartFailure =
  | ConnectorTokenRejectedError
  | ServiceNotFoundError
  | ProtocolMismatchError
  | PortInUseError;

/**
 * The error a failed start rejects with: a 401 or 403 of the service is a {@link ConnectorTokenRejectedError}, a 404
 * (Get connector state's excepted: no state yet) a {@link ServiceNotFoundError}, an operations port in use a
 * {@link PortInUseError} naming `OPERATIONS_PORT`; anything else is `error` itself.
 */
export function startFailure(error: unknown, baseUrl: URL): unknown {
  if (error instanceof UnauthorizedError) return new ConnectorTokenRejectedError(baseUrl, error);
  if (error instanceof NotFoundError) return new ServiceNotFoundError(baseUrl, error);
  if (error instanceof OperationsServerListenError) {
    const { port, address } = (error.cause ?? {}) as { port?: unknown; address?: unknown };
    if (typeof port !== 'number' || typeof address !== 'string') return error;
    const setting = 'OPERATIONS_PORT (operations.port)';
    const mapped = PortInUseError.from(error.cause, { port, host: address, setting });
    return mapped instanceof PortInUseError ? mapped : error;
  }
  return error;
}

/** Whether a start failure's message names its fix. */
export function isDiagnosed(error: unknown): error is DiagnosedStartFailure {
  return (
    error instanceof ConnectorTokenRejectedError ||
    error instanceof ServiceNotFoundError ||
    error instanceof ProtocolMismatchError ||
    error instanceof PortInUseError
  );
}

/**
 * Logs a failed start: one line, `the connector failed to start: <what to change>`, with the error's `code`, when
 * the failure names its fix; otherwise the error with its stack.
 */
export function logStartFailure(logger: PinoLogger, error: unknown): void {
  if (isDiagnosed(error)) {
    logger.error({ code: error.code }, `the connector failed to start: ${error.message}`);
  } else {
    logger.error({ err: error }, 'the connector failed to start');
  }
}
