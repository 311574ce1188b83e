import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { toIssues, ValidationError } from '../../errors.js';
import { ServiceError } from '../errors.js';
import type { FaultInjector } from '../faults/injector.js';
import { isAdminToken } from '../http/auth.js';
import type { TaskInfo } from '../store/index.js';
import type { AdminOperations } from './operations.js';
import { AdminSchemas } from './schemas.js';

/** The prefix of every admin route. */
export const ADMIN_PREFIX = '/admin';

export interface AdminRouteContext {
  operations: AdminOperations;
  faults: FaultInjector;
  adminToken: string;
}

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw ServiceError.invalid(toIssues(result.error));
  return result.data;
}

function requireTask(ops: AdminOperations, taskId: string): TaskInfo {
  const task = ops.getTask(taskId);
  if (task === undefined) throw ServiceError.notFound('tasks', taskId);
  return task;
}

function param(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name] ?? '';
}

/**
 * The admin API: what the handle offers, over HTTP, for tools and for connectors under test in another process.
 * Opened only by the admin token; service tokens get a 401 here, and the admin token gets one on v1 and v2.
 */
export function registerAdminRoutes(app: FastifyInstance, ctx: AdminRouteContext): void {
  const { operations: ops, faults } = ctx;
  void app.register(
    async (admin) => {
      admin.addHook('onRequest', async (request) => {
        if (!isAdminToken(request.headers.authorization, ctx.adminToken)) throw ServiceError.unauthorized();
      });

      admin.post('/organizations', async (request) =>
        ops.createOrganization(parse(AdminSchemas.organization, request.body)),
      );
      admin.post('/organizations/:orgId/tokens', async (request) => ({
        token: ops.createManagementToken(param(request, 'orgId'), parse(AdminSchemas.token, request.body)),
      }));
      admin.post('/organizations/:orgId/users', async (request) =>
        ops.createUser(param(request, 'orgId'), parse(AdminSchemas.user, request.body)),
      );
      admin.post('/organizations/:orgId/systems', async (request) =>
        ops.createSystem(param(request, 'orgId'), parse(AdminSchemas.system, request.body)),
      );
      admin.post('/systems/:systemId/tokens', async (request) => ({
        token: ops.createConnectorToken(param(request, 'systemId'), parse(AdminSchemas.token, request.body)),
      }));
      admin.post('/tenants', async (request) => ops.createTenant(parse(AdminSchemas.tenant, request.body)));

      admin.post('/tasks', async (request) => ops.createTask(parse(AdminSchemas.task, request.body)));
      admin.get('/tasks/:taskId', async (request) => requireTask(ops, param(request, 'taskId')));
      admin.post('/tasks/:taskId/expire-lease', async (request) => {
        const taskId = requireTask(ops, param(request, 'taskId')).id;
        return { expired: ops.expireLeases({ taskId }) };
      });
      admin.post('/leases/expire', async (request) => ({
        expired: ops.expireLeases(parse(AdminSchemas.leases, request.body)),
      }));

      admin.get('/systems/:systemId/tasks', async (request) => ops.listTasks(param(request, 'systemId')));
      admin.get('/systems/:systemId/approvals', async (request) =>
        ops.listApprovals(param(request, 'systemId')),
      );
      admin.get('/systems/:systemId/connector', async (request) =>
        ops.getConnector(param(request, 'systemId')),
      );
      admin.get('/systems/:systemId/state', async (request) => ops.getState(param(request, 'systemId')));

      admin.post('/seed', async (request) => {
        try {
          ops.seed(request.body as never);
        } catch (error) {
          if (error instanceof ValidationError) throw ServiceError.invalid(error.issues);
          throw error;
        }
        return { status: 'success' };
      });

      admin.get('/faults', async () => faults.list());
      admin.post('/faults', async (request) => faults.inject(request.body as never));
      admin.delete('/faults', async () => {
        faults.clear();
        return { status: 'success' };
      });
      admin.delete('/faults/:id', async (request) => {
        faults.clear(Number(param(request, 'id')));
        return { status: 'success' };
      });
    },
    { prefix: ADMIN_PREFIX },
  );
}
