import type { FastifyInstance } from 'fastify';
import { endpoints } from '../../../api/index.js';
import { ServiceError } from '../../errors.js';
import type { ServiceContext } from '../context.js';
import { defineRoute } from '../route.js';

/** The largest connector state, in bytes of JSON. */
export const MAX_STATE_BYTES = 1024 * 1024;

/** Endpoints 12 to 18: registration, tasks, state and UI templates. */
export function registerConnectorRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  defineRoute(app, ctx, endpoints.registerConnector, ({ body, principal }) => {
    ctx.store.connectors.register(principal.systemId, body);
    return { status: 'success' };
  });

  defineRoute(app, ctx, endpoints.getTask, ({ principal, duplicateTask }) => {
    const task = ctx.store.tasks.lease(principal.systemId, ctx.leaseMs, !duplicateTask);
    return { status: 'success', data: { task } };
  });

  defineRoute(app, ctx, endpoints.reportTaskResult, ({ params, body, principal, traceId }) => {
    ctx.store.tasks.complete(principal.systemId, params.taskId, body.taskResult, traceId);
    return { status: 'success' };
  });

  defineRoute(app, ctx, endpoints.getState, ({ principal }) => ({
    status: 'success',
    data: { state: ctx.store.states.get(principal.systemId) },
  }));

  defineRoute(app, ctx, endpoints.putState, ({ body, principal }) => {
    if (Buffer.byteLength(JSON.stringify(body.state)) > MAX_STATE_BYTES) {
      throw new ServiceError('Payload Too Large', `state: must be at most ${MAX_STATE_BYTES} bytes of JSON`);
    }
    ctx.store.states.put(principal.systemId, body.state);
    return { status: 'success' };
  });

  defineRoute(app, ctx, endpoints.getUiTemplates, ({ principal }) => ({
    status: 'success',
    data: { uiTemplates: ctx.store.templates.list(principal.systemId) },
  }));

  defineRoute(app, ctx, endpoints.putUiTemplates, ({ body, principal }) => {
    ctx.store.templates.putMany(principal.systemId, body.uiTemplates);
    return { status: 'success' };
  });
}
