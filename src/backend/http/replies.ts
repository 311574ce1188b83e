import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';

/** Which error shape a request is answered in, chosen by its path. */
export type Api = 'v1' | 'v2' | 'admin';

export function apiOf(url: string): Api {
  if (url.startsWith('/v1/')) return 'v1';
  if (url.startsWith('/admin/') || url === '/admin') return 'admin';
  return 'v2';
}

/** The body of an error in the shape of its API: v1 `{Error}`, v2 `{status: 'failure'}`, admin `{error: {code, message}}`. */
export function errorBody(api: Api, error: ServiceError): Record<string, unknown> {
  if (api === 'v1') return { Error: error.message };
  if (api === 'admin') return { error: { code: error.code, message: error.message } };
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
