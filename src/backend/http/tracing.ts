/**
 * The reference backend's side of the kit's traces: each request's W3C `traceparent` is read (without the
 * OpenTelemetry API, so that a backend in a process without it still does), its trace id put on the request's log
 * lines and given to the routes that remember it (a task's creation and result). Where the application has
 * registered an OpenTelemetry SDK, each request is also a server span, the child of the caller's.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { ChildLoggerOptions } from 'fastify/types/logger.js';
import {
  parseTraceparent,
  type RemoteParent,
  remoteContext,
  startSpan,
  type TraceSpan,
} from '../../internal/tracing.js';

/** What the backend knows of a request's trace: the caller's, and its own server span. */
interface RequestTrace {
  parent: RemoteParent | undefined;
  span: TraceSpan | undefined;
}

const traces = new WeakMap<IncomingMessage, RequestTrace>();

function traceOfRaw(raw: IncomingMessage): RequestTrace {
  let trace = traces.get(raw);
  if (trace === undefined) {
    trace = { parent: parseTraceparent(raw.headers.traceparent, raw.headers.tracestate), span: undefined };
    traces.set(raw, trace);
  }
  return trace;
}

/**
 * The trace id a request carries: its `traceparent`'s, or else its server span's (where an SDK is registered);
 * `undefined` when it has neither.
 */
export function traceIdOf(request: FastifyRequest): string | undefined {
  const trace = traceOfRaw(request.raw);
  return trace.parent?.traceId ?? trace.span?.traceId;
}

/**
 * The `childLoggerFactory` of the backend's fastify: each request's logger carries `trace_id`, the caller's trace,
 * on every line it writes, from `incoming request` on.
 */
export function requestLogger(
  this: unknown,
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: ChildLoggerOptions,
  raw: IncomingMessage,
): FastifyBaseLogger {
  const { parent } = traceOfRaw(raw);
  return logger.child(parent === undefined ? bindings : { ...bindings, trace_id: parent.traceId }, options);
}

/**
 * Makes each request a server span, as OpenTelemetry's semantic conventions for HTTP server spans name it, under the
 * caller's span. Registered first, so that it starts as the request arrives.
 */
export function registerTraceHooks(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const trace = traceOfRaw(request.raw);
    const method = request.method;
    const route = request.routeOptions.url;
    trace.span = startSpan(route === undefined ? method : `${method} ${route}`, {
      kind: 'server',
      root: trace.parent === undefined,
      ...(trace.parent === undefined ? {} : { parent: remoteContext(trace.parent) }),
      attributes: {
        'http.request.method': method,
        'url.path': request.url.split('?', 1)[0],
        'url.scheme': request.protocol,
        'http.route': route,
        'network.protocol.version': request.raw.httpVersion,
        'server.port': request.raw.socket.localPort,
      },
    });
    // A request that came without a trace of its own is logged under the backend's.
    const { traceId } = trace.span;
    if (trace.parent === undefined && traceId !== undefined) {
      request.log = request.log.child({ trace_id: traceId });
      reply.log = request.log;
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    const { span } = traceOfRaw(request.raw);
    span?.set({ 'http.response.status_code': reply.statusCode });
    // On a server span, only a 5xx is the server's failure.
    if (reply.statusCode >= 500) span?.fail(String(reply.statusCode));
    span?.end();
  });
  app.addHook('onRequestAbort', async (request) => {
    const { span } = traceOfRaw(request.raw);
    span?.fail('aborted');
    span?.end();
  });
}
