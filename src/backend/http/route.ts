import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Endpoint } from '../../api/index.js';
import { toIssues } from '../../errors.js';
import { ServiceError } from '../errors.js';
import type { Principal } from '../store/index.js';
import { authenticate } from './auth.js';
import type { ServiceContext } from './context.js';
import { coerceQuery } from './query.js';
import { traceIdOf } from './tracing.js';

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
type PrincipalOf<E extends Endpoint> = Extract<
  Principal,
  { kind: E['api'] extends 'v1' ? 'management' : 'connector' }
>;

/** What a route handler receives: the request validated by the endpoint's schemas, and who sent it. */
export interface RouteInput<E extends Endpoint> {
  params: Out<E['params']>;
  query: Out<E['query']>;
  body: Out<E['body']>;
  principal: PrincipalOf<E>;
  /** The duplicate-delivery fault matched this request. */
  duplicateTask: boolean;
  /** The trace the request carries (`traceparent`), or the backend's own server span's. */
  traceId: string | undefined;
}

export interface RouteOptions {
  /** Largest body in bytes; fastify answers a larger one with 413 before the handler runs. */
  bodyLimit?: number;
}

/**
 * Serves one endpoint of the table: authenticates (v1 takes management tokens, v2 connector tokens), validates
 * path, query and body with the endpoint's own schemas, then runs the handler in one transaction and answers 200
 * with what it returns.
 *
 * Authentication runs as the request arrives, before fastify reads the body, so that a request without a valid
 * token is a 401 whatever its body: malformed, of another content type, or over the endpoint's size limit.
 */
export function defineRoute<E extends Endpoint>(
  app: FastifyInstance,
  ctx: ServiceContext,
  endpoint: E,
  handler: (input: RouteInput<E>) => unknown,
  options: RouteOptions = {},
): void {
  const kind = endpoint.api === 'v1' ? 'management' : 'connector';
  const principals = new WeakMap<FastifyRequest, PrincipalOf<E>>();
  app.route({
    method: endpoint.method,
    url: endpoint.path,
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    onRequest: async (request) => {
      principals.set(request, authenticate(ctx.store, request.headers.authorization, kind) as PrincipalOf<E>);
    },
    handler: async (request, reply) => {
      const principal = principals.get(request);
      // onRequest authenticated it or refused it; should that ever not hold, the request is refused, never served.
      if (principal === undefined) throw ServiceError.unauthorized();
      const input: RouteInput<E> = {
        params: validate('params', endpoint.params, request.params) as Out<E['params']>,
        query: validate(
          'query',
          endpoint.query,
          endpoint.query === undefined
            ? {}
            : coerceQuery(endpoint.query, request.query as Record<string, unknown>),
        ) as Out<E['query']>,
        body: validate('body', endpoint.body, request.body) as Out<E['body']>,
        principal,
        duplicateTask: ctx.pending.get(request.raw)?.type === 'duplicateTask',
        traceId: traceIdOf(request),
      };
      const answer = ctx.store.transaction(() => handler(input));
      if (ctx.pending.get(request.raw)?.type === 'dropAnswer') {
        // The write is committed; the caller only loses the answer, as when a connection breaks mid-response.
        reply.hijack();
        request.raw.socket.destroy();
        return reply;
      }
      return reply.code(200).send(answer);
    },
  });
}

/** Parses one part of the request; a problem with the part as a whole is reported under the part's name. */
function validate(part: 'params' | 'query' | 'body', schema: z.ZodType | undefined, value: unknown): unknown {
  if (schema === undefined) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    throw ServiceError.invalid(
      toIssues(result.error).map((issue) => (issue.path.length === 0 ? { ...issue, path: [part] } : issue)),
    );
  }
  return result.data;
}
