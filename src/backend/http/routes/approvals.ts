import type { FastifyInstance } from 'fastify';
import { endpoints } from '../../../api/index.js';
import { ServiceError } from '../../errors.js';
import type { ServiceContext } from '../context.js';
import { defineRoute } from '../route.js';

/** The most approvals one Update approvals request may carry. */
export const MAX_APPROVALS_PER_BATCH = 500;

/** Endpoints 8 to 11: raw approvals. */
export function registerApprovalRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  defineRoute(app, ctx, endpoints.getApproval, ({ params, principal }) => {
    const approval = ctx.store.approvals.find(principal.systemId, params.approvalId);
    if (approval === undefined) throw ServiceError.notFound('approvals', params.approvalId);
    return { status: 'success', data: { approval } };
  });

  defineRoute(app, ctx, endpoints.putApproval, ({ params, body, principal }) => {
    ctx.store.approvals.write(principal.systemId, params.approvalId, body.approval);
    return { status: 'success' };
  });

  defineRoute(app, ctx, endpoints.getApprovals, ({ query, principal }) => {
    const after = query['lastModified[gt]'];
    const approvals = ctx.store.approvals.list(principal.systemId, {
      after: after === undefined ? undefined : Date.parse(after),
      resolved: query.resolved,
      view: query.view,
    });
    return { status: 'success', data: { approvals } };
  });

  defineRoute(app, ctx, endpoints.putApprovals, ({ body, principal }) => {
    if (body.approvals.length > MAX_APPROVALS_PER_BATCH) {
      throw ServiceError.invalid([
        {
          path: ['approvals'],
          message: `must hold at most ${MAX_APPROVALS_PER_BATCH} approvals`,
          code: 'too_big',
        },
      ]);
    }
    // Inside the route's transaction: one invalid approval rolls back the ones before it.
    body.approvals.forEach(({ id, ...change }, index) => {
      ctx.store.approvals.write(principal.systemId, id, change, ['approvals', index]);
    });
    return { status: 'success' };
  });
}
