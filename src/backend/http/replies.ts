import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { adminErrorCode, ServiceError } from '../errors.js';
import { headersTooLarge } from './head.js';

/** Which error shape a request is answered in, chosen by its path. */
export type Api = 'v1' | 'v2' | 'admin';

/**
 * `/v1` and below answer in the v1 shape, `/admin` and `/console` and below in the admin shape, every other path in
 * the v2 shape.
 */
export function apiOf(url: string): Api {
  const path = url.split('?', 1)[0] ?? '';
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1';
  for (const prefix of ['/admin', '/console']) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return 'admin';
  }
  return 'v2';
}

/** The body of an error in the shape of its API: v1 `{Error}`, v2 `{status: 'failure'}`, admin `{error: {code, message}}`. */
export function errorBody(api: Api, error: ServiceError): Record<string, unknown> {
  if (api === 'v1') return { Error: error.message };
  if (api === 'admin') return { error: { code: adminErrorCode(error.kind), message: error.message } };
  return { status: 'failure' };
}

interface FrameworkError {
  statusCode?: number;
  code?: string;
  message: string;
}

/** Turns anything a route or fastify throws into a {@link ServiceError}; `undefined` for a server-side bug. */
export function toServiceError(error: unknown): ServiceError | undefined {
  if (error instanceof ServiceError) return error;
  const framework = error as FrameworkError;
  // The router's own refusal, before any route runs. (It never refuses a parameter for its length: see server.ts.)
  if (framework.code === 'FST_ERR_BAD_URL') {
    return ServiceError.badRequest('path: is not valid percent-encoded UTF-8');
  }
  if (framework.statusCode === 413) {
    return new ServiceError('Payload Too Large', 'the request body is larger than this endpoint accepts');
  }
  // Fastify's own 4xx: malformed JSON, an empty JSON body, a content type other than JSON.
  if (typeof framework.statusCode === 'number' && framework.statusCode >= 400 && framework.statusCode < 500) {
    return ServiceError.badRequest(`body: ${framework.message}`);
  }
  return undefined;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ServiceError): FastifyReply {
  if (error.retryAfter !== undefined) void reply.header('retry-after', String(error.retryAfter));
  return reply.code(error.status).send(errorBody(apiOf(request.url), error));
}

/**
 * Answers a request that Node's HTTP parser refused before fastify saw it (a malformed request line or header, a
 * head over even the parser's limit), in the shape of the API named by the path on its request line. The parser
 * hands over only the bytes it was reading, so when the request line is not among them the answer is in the v2
 * shape, as for any other path.
 */
export function answerUnreadableRequest(
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Socket,
): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const serviceError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? headersTooLarge()
      : ServiceError.badRequest('request: is not valid HTTP');
  const head = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.subarray(0, 8192).toString('latin1') : '';
  const requestLine = /^[!-~]+ (\S+)/.exec(head);
  const body = JSON.stringify(errorBody(apiOf(requestLine?.[1] ?? ''), serviceError));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${serviceError.status} ${STATUS_CODES[serviceError.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  // The rest of the request cannot be read, so the connection cannot carry another one.
  socket.destroy();
}
