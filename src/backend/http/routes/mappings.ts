import type { FastifyInstance } from 'fastify';
import { endpoints } from '../../../api/index.js';
import type { ServiceContext } from '../context.js';
import { defineRoute } from '../route.js';
import { checkLimit } from './paging.js';

/** Endpoints 4 to 6: a user's mappings, a system's mappings, Add user mappings. */
export function registerMappingRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  defineRoute(app, ctx, endpoints.getUserMappings, ({ params, principal }) => {
    const user = ctx.store.users.getInOrg(principal.orgId, params.id);
    return ctx.store.mappings.listByUser(user.id);
  });

  defineRoute(app, ctx, endpoints.getSystemUserMappings, ({ params, query, principal }) => {
    checkLimit(query.limit);
    const system = ctx.store.systems.getInOrg(principal.orgId, params.id);
    return ctx.store.mappings.listBySystem(system.id, query.page, query.limit);
  });

  defineRoute(app, ctx, endpoints.addUserMappings, ({ params, body, principal }) => {
    const system = ctx.store.systems.getInOrg(principal.orgId, params.id);
    for (const item of body) ctx.store.users.getInOrg(principal.orgId, item.userId);
    return ctx.store.mappings.addMany(system.id, body);
  });
}
