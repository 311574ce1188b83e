import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../errors.js';
import { ServiceError } from '../errors.js';
import type { FaultInjector } from '../faults/injector.js';
import { registerFaultRoutes } from '../faults/routes.js';
import { isAdminToken } from '../http/auth.js';
import { parseInput, pathParam } from '../http/request.js';
import { traceIdOf } from '../http/tracing.js';
import type { Store, TaskInfo } from '../store/index.js';
import type { AdminOperations } from './operations.js';
import { AdminSchemas } from './schemas.js';

/** The prefix of every admin route. */
export const ADMIN_PREFIX = '/admin';

export interface AdminRouteContext {
  operations: AdminOperations;
  faults: FaultInjector;
  store: Store;
  adminToken: string;
}

function requireTask(ops: AdminOperations, taskId: string): TaskInfo {
  const task = ops.getTask(taskId);
  if (task === undefined) throw ServiceError.notFound('tasks', taskId);
  return task;
}

/**
 * The admin API: what the handle offers, over HTTP, for tools and for connectors under test in another process.
 * Opened only by the admin token; service tokens get a 401 here, and the admin token gets one on v1 and v2.
 */
export function registerAdminRoutes(app: FastifyInstance, ctx: AdminRouteContext): void {
  void app.register(
    async (admin) => {
      admin.addHook('onRequest', async (request) => {
        if (!isAdminToken(request.headers.authorization, ctx.adminToken)) throw ServiceError.unauthorized();
      });
      registerDirectoryRoutes(admin, ctx.operations);
      registerTaskRoutes(admin, ctx.operations);
      registerFaultRoutes(admin, ctx.faults, ctx.store.systems);
    },
    { prefix: ADMIN_PREFIX },
  );
}

/** Organizations, their users, systems and tokens, tenants at once, a seed, and what a system holds. */
function registerDirectoryRoutes(admin: FastifyInstance, ops: AdminOperations): void {
  admin.post('/organizations', async (request) =>
    ops.createOrganization(parseInput(AdminSchemas.organization, request.body)),
  );
  admin.post('/organizations/:orgId/tokens', async (request) => ({
    token: ops.createManagementToken(
      pathParam(request, 'orgId'),
      parseInput(AdminSchemas.token, request.body),
    ),
  }));
  admin.post('/organizations/:orgId/users', async (request) =>
    ops.createUser(pathParam(request, 'orgId'), parseInput(AdminSchemas.user, request.body)),
  );
  admin.post('/organizations/:orgId/systems', async (request) =>
    ops.createSystem(pathParam(request, 'orgId'), parseInput(AdminSchemas.system, request.body)),
  );
  admin.post('/systems/:systemId/tokens', async (request) => ({
    token: ops.createConnectorToken(
      pathParam(request, 'systemId'),
      parseInput(AdminSchemas.token, request.body),
    ),
  }));
  admin.post('/tenants', async (request) => ops.createTenant(parseInput(AdminSchemas.tenant, request.body)));
  admin.post('/seed', async (request) => {
    try {
      ops.seed(request.body as never);
    } catch (error) {
      if (error instanceof ValidationError) throw ServiceError.invalid(error.issues);
      throw error;
    }
    return { status: 'success' };
  });

  admin.get('/systems/:systemId/approvals', async (request) =>
    ops.listApprovals(pathParam(request, 'systemId')),
  );
  admin.get('/systems/:systemId/connector', async (request) =>
    ops.getConnector(pathParam(request, 'systemId')),
  );
  admin.get('/systems/:systemId/state', async (request) => ops.getState(pathParam(request, 'systemId')));
}

/** Tasks as an approver creates them, and leases ended early. */
function registerTaskRoutes(admin: FastifyInstance, ops: AdminOperations): void {
  admin.post('/tasks', async (request) =>
    ops.createTask(parseInput(AdminSchemas.task, request.body), traceIdOf(request)),
  );
  admin.get('/tasks/:taskId', async (request) => requireTask(ops, pathParam(request, 'taskId')));
  admin.get('/systems/:systemId/tasks', async (request) => ops.listTasks(pathParam(request, 'systemId')));
  admin.post('/tasks/:taskId/expire-lease', async (request) => {
    const taskId = requireTask(ops, pathParam(request, 'taskId')).id;
    return { expired: ops.expireLeases({ taskId }) };
  });
  admin.post('/leases/expire', async (request) => ({
    expired: ops.expireLeases(parseInput(AdminSchemas.leases, request.body)),
  }));
}
