import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { ConnectorActivity } from '../activity/index.js';
import { ServiceError, type ServiceErrorKind } from '../errors.js';
import type { FaultInjector } from './injector.js';
import type { FaultAction } from './schema.js';

/**
 * Applies injected faults to v1 and v2 requests as they arrive, before authentication, as a proxy or an overloaded
 * service would. The admin API and the OpenAPI document are never affected. Faults that act after the handler
 * (`dropAnswer`, `duplicateTask`) are noted in `pending` for the route to apply. A fault scoped to a system learns
 * the request's system from its token, through `activity`, which also notes the requests a fault answered.
 */
export function registerFaultHook(
  app: FastifyInstance,
  faults: FaultInjector,
  pending: WeakMap<IncomingMessage, FaultAction>,
  activity: ConnectorActivity,
): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/v1/') && !request.url.startsWith('/v2/')) return;
    const path = request.url.split('?', 1)[0] ?? '';
    const action = faults.take(request.method, path, () => activity.systemOf(request.raw));
    if (action === undefined) return;
    request.log.info({ fault: action }, 'injecting a fault');
    if (action.type === 'status' || action.type === 'drop') activity.injected(request.raw);
    switch (action.type) {
      case 'status': {
        const retryAfter = action.retryAfter ?? (action.status === 429 ? 1 : undefined);
        throw new ServiceError(kindOfStatus(action.status), 'injected fault', {
          status: action.status,
          ...(retryAfter === undefined ? {} : { retryAfter }),
        });
      }
      case 'drop':
        // Hijacked, the reply counts as sent, so fastify runs nothing more for this request.
        reply.hijack();
        request.raw.socket.destroy();
        activity.record(request.raw, request.routeOptions.url ?? path, 'dropped');
        return reply;
      case 'delay':
        await sleep(action.ms);
        return;
      default:
        pending.set(request.raw, action);
    }
  });
}

// The v1 kind of an injected status: the one the status stands for, `Bad Request` for any other 4xx (as a 431 is).
const KIND_OF_STATUS: ReadonlyMap<number, ServiceErrorKind> = new Map([
  [401, 'Unauthorized'],
  [403, 'Forbidden'],
  [404, 'Not Found'],
  [409, 'Conflict'],
  [413, 'Payload Too Large'],
  [429, 'Too Many Requests'],
]);

function kindOfStatus(status: number): ServiceErrorKind {
  return status >= 500 ? 'Internal Server Error' : (KIND_OF_STATUS.get(status) ?? 'Bad Request');
}
