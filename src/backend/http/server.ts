import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { type ConnectorActivity, registerActivityHook } from '../activity/index.js';
import type { AdminOperations } from '../admin/operations.js';
import { registerAdminRoutes } from '../admin/routes.js';
import { ServiceError } from '../errors.js';
import { registerFaultHook } from '../faults/hook.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import type { ServiceContext } from './context.js';
import { headBytes, headersTooLarge, MAX_HEAD_BYTES, PARSER_HEAD_BYTES } from './head.js';
import { registerJsonParser } from './json.js';
import { parseQueryString } from './query.js';
import { answerUnreadableRequest, sendError, toServiceError } from './replies.js';
import { registerApprovalRoutes } from './routes/approvals.js';
import { registerConnectorRoutes } from './routes/connector.js';
import { registerMappingRoutes } from './routes/mappings.js';
import { registerSystemRoutes } from './routes/systems.js';
import { registerUserRoutes } from './routes/users.js';
import { registerTraceHooks, requestLogger } from './tracing.js';

/** The largest v2 (and admin) body: 5 MiB. Add users and Delete users have their own 100K limit. */
export const BODY_LIMIT_BYTES = 5 * 1024 * 1024;

export interface ServerOptions extends ServiceContext {
  logger: Logger;
  adminToken: string;
  operations: AdminOperations;
  /** Where the connectors' requests are recorded as they end, for the console's health view. */
  activity: ConnectorActivity;
}

const INTERNAL_ERROR = new ServiceError('Internal Server Error', 'the request could not be handled');

function toServiceErrorOrInternal(error: unknown): ServiceError {
  return toServiceError(error) ?? INTERNAL_ERROR;
}

/**
 * Fastify logs two lines for each request at info; here they are debug lines, so that at the default level a
 * worker's own lines beside the backend are not drowned. A request that errs is still logged at error.
 */
class RequestLinesAtDebug extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) super.requestCompleted(error, request, reply);
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** Builds the fastify app: the 18 endpoints, the admin API, the OpenAPI document, faults and error shapes. */
export function buildServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger.child(
      { component: 'reference-backend' },
      { redact: ['req.headers.authorization', 'headers.authorization', 'token'] },
    ) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    logController: new RequestLinesAtDebug(),
    childLoggerFactory: requestLogger,
    forceCloseConnections: true,
    // Every answer in the API's shape, also the router's (a path that does not decode) and the HTTP parser's.
    frameworkErrors: (error, request, reply) => sendError(request, reply, toServiceErrorOrInternal(error)),
    clientErrorHandler: answerUnreadableRequest,
    http: { maxHeaderSize: PARSER_HEAD_BYTES },
    routerOptions: {
      querystringParser: parseQueryString,
      // No path parameter is longer than the request head the HTTP parser reads, so the router never refuses one
      // for its length: the head limit or the endpoint's schema does (an approval id, for one, as in a body).
      maxParamLength: PARSER_HEAD_BYTES,
    },
  });
  // Endpoint 18 is published as GET with a JSON body; by default fastify never reads the body of a GET.
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  registerJsonParser(app);

  registerTraceHooks(app);
  // Before faults and authentication, as the HTTP parser would refuse it.
  app.addHook('onRequest', async (request) => {
    if (headBytes(request.raw) > MAX_HEAD_BYTES) throw headersTooLarge();
  });
  registerFaultHook(app, options.faults, options.pending, options.activity);
  registerActivityHook(app, options.activity);

  app.setErrorHandler((error, request, reply) => {
    const serviceError = toServiceError(error);
    if (serviceError !== undefined) return sendError(request, reply, serviceError);
    request.log.error({ err: error }, 'request failed');
    return sendError(request, reply, INTERNAL_ERROR);
  });

  app.setNotFoundHandler((request, reply) => {
    const detail = `no endpoint ${request.method} ${request.url.split('?', 1)[0]}`;
    return sendError(request, reply, new ServiceError('Not Found', detail));
  });

  registerUserRoutes(app, options);
  registerMappingRoutes(app, options);
  registerSystemRoutes(app, options);
  registerApprovalRoutes(app, options);
  registerConnectorRoutes(app, options);
  registerAdminRoutes(app, options);

  // Built on first request: it takes as long as the rest of the start, and most backends are never asked for it.
  let openapi: ReturnType<typeof buildOpenApiDocument> | undefined;
  app.get('/openapi.json', async () => {
    openapi ??= buildOpenApiDocument();
    return openapi;
  });
  return app;
}
