import type { FastifyInstance } from 'fastify';
import { endpoints } from '../../../api/index.js';
import type { ServiceContext } from '../context.js';
import { defineRoute } from '../route.js';

/** Endpoint 7: Get systems. */
export function registerSystemRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  defineRoute(app, ctx, endpoints.getSystems, ({ principal }) =>
    ctx.store.systems.listByOrg(principal.orgId),
  );
}
