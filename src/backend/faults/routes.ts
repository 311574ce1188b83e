import type { FastifyInstance } from 'fastify';
import { pathParam } from '../http/request.js';
import type { Store } from '../store/index.js';
import type { FaultInjector } from './injector.js';

/**
 * The fault endpoints, `/faults` and `/faults/:id` under the scope's prefix: list, add, remove all, remove one. The
 * admin API and the console both register them, each in its own scope, whose hooks decide who may call them. A
 * rule scoped to a system that does not exist is a 404, and adds nothing.
 */
export function registerFaultRoutes(
  scope: FastifyInstance,
  faults: FaultInjector,
  systems: Pick<Store['systems'], 'get'>,
): void {
  scope.get('/faults', async () => faults.list());
  scope.post('/faults', async (request) => {
    const rule = request.body as { systemId?: unknown } | undefined;
    if (typeof rule?.systemId === 'string') systems.get(rule.systemId);
    return faults.inject(request.body as never);
  });
  scope.delete('/faults', async () => {
    faults.clear();
    return { status: 'success' };
  });
  scope.delete('/faults/:id', async (request) => {
    faults.clear(Number(pathParam(request, 'id')));
    return { status: 'success' };
  });
}
