import type { FastifyInstance } from 'fastify';
import { endpoints, MANAGEMENT_BODY_LIMIT_BYTES, type UserQueryField } from '../../../api/index.js';
import { ServiceError } from '../../errors.js';
import type { UserRecord } from '../../store/index.js';
import type { ServiceContext } from '../context.js';
import { defineRoute } from '../route.js';
import { checkLimit } from './paging.js';

/** A user as Get users answers it: the first name spelled `firastName`, as published. */
export function toWireUser(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    firastName: user.firstName,
    lastName: user.lastName,
    orgId: user.orgId,
  };
}

function fields(list: string | undefined): UserQueryField[] {
  return [...new Set((list ?? '').split(',').map((name) => name.trim() as UserQueryField))];
}

/** Endpoints 1 to 3: Get users, Add users, Delete users. */
export function registerUserRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  defineRoute(app, ctx, endpoints.getUsers, ({ query, principal }) => {
    checkLimit(query.limit);
    if (query.searchableFields !== undefined && query.search === undefined) {
      throw ServiceError.invalid([
        { path: ['search'], message: 'is required when searchableFields is given', code: 'invalid_type' },
      ]);
    }
    if (query.filterFields !== undefined && query.filter === undefined) {
      throw ServiceError.invalid([
        { path: ['filter'], message: 'is required when filterFields is given', code: 'invalid_type' },
      ]);
    }
    return ctx.store.users
      .list(principal.orgId, {
        page: query.page,
        limit: query.limit,
        search:
          query.search === undefined
            ? undefined
            : { term: query.search, fields: fields(query.searchableFields) },
        filter:
          query.filter === undefined ? undefined : { term: query.filter, fields: fields(query.filterFields) },
      })
      .map(toWireUser);
  });

  defineRoute(
    app,
    ctx,
    endpoints.addUsers,
    ({ params, body, principal }) => {
      if (params.id !== principal.orgId) throw ServiceError.notFound('orgs', params.id);
      return ctx.store.users.addMany(principal.orgId, body);
    },
    { bodyLimit: MANAGEMENT_BODY_LIMIT_BYTES },
  );

  defineRoute(
    app,
    ctx,
    endpoints.deleteUsers,
    ({ body, principal }) => ({ deleted: ctx.store.users.deleteMany(principal.orgId, body) }),
    { bodyLimit: MANAGEMENT_BODY_LIMIT_BYTES },
  );
}
