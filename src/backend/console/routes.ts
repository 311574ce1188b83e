import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { EncryptedCredentials } from '../../api/index.js';
import type { ConnectorActivity } from '../activity/index.js';
import type { AdminOperations } from '../admin/operations.js';
import { ServiceError } from '../errors.js';
import type { FaultInjector } from '../faults/injector.js';
import { registerFaultRoutes } from '../faults/routes.js';
import { isAdminToken } from '../http/auth.js';
import { parseInput, pathParam } from '../http/request.js';
import { traceIdOf } from '../http/tracing.js';
import type { ApprovalRecord, Store, TaskInfo } from '../store/index.js';
import type { PageAssets } from './assets.js';
import { APPROVALS_PER_PAGE, MAX_COMMENT_CHARS } from './limits.js';
import type { ConsoleLive } from './live.js';
import { type ConsoleSessions, checkOrigin } from './sessions.js';

/** The prefix of the console's page and of its own endpoints. */
export const CONSOLE_PREFIX = '/console';

export interface ConsoleRouteContext {
  store: Store;
  /** The backend's clock. */
  now: () => number;
  operations: AdminOperations;
  faults: FaultInjector;
  activity: ConnectorActivity;
  adminToken: string;
  sessions: ConsoleSessions;
  live: ConsoleLive;
  /** Demo sign-ins of each system's approvers, which the page offers to fill in. */
  demoSignIns: ReadonlyMap<string, readonly DemoSignIn[]>;
  assets: PageAssets;
}

/**
 * An approver's sign-in in a simulated source (`npm start`'s, or a seed's `consoleSignIns`), which the console offers
 * to fill in on an action, so that a first approval needs no terminal. Only for demo accounts: the page shows them to
 * whoever is signed in.
 */
export interface DemoSignIn {
  /** The approver's id, as approvals name it. */
  approver: string;
  username: string;
  password: string;
}

/** The most approvals one page of the console shows. */
export const MAX_APPROVALS_SHOWN = 200;

const Schemas = {
  signIn: z.strictObject({ token: z.string().min(1) }),
  approvals: z.object({
    resolved: z.enum(['true', 'false']).optional(),
    search: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_APPROVALS_SHOWN).default(APPROVALS_PER_PAGE),
    offset: z.coerce.number().int().min(0).default(0),
  }),
  // Credentials only ever come sealed: the console never hands the backend plain ones.
  task: z.strictObject({
    type: z.string().min(1),
    approvalId: z.string().min(1),
    approveComments: z
      .string()
      .max(MAX_COMMENT_CHARS, `must be at most ${MAX_COMMENT_CHARS} characters`)
      .optional(),
    sealedCredentials: EncryptedCredentials.optional(),
  }),
  leases: z.strictObject({ systemId: z.string().min(1).optional() }),
};

/**
 * The console: its page at `/console`, and the endpoints the page calls under `/console/api`, each refused without
 * a session cookie (401), and, when it changes something, without the session's CSRF token (403). Errors are in
 * the admin API's shape.
 */
export function registerConsoleRoutes(app: FastifyInstance, ctx: ConsoleRouteContext): void {
  const { assets, sessions } = ctx;
  app.get(CONSOLE_PREFIX, async (_request, reply) => assets.sendHtml(reply));
  app.get(`${CONSOLE_PREFIX}/`, async (_request, reply) => assets.sendHtml(reply));
  app.get(`${CONSOLE_PREFIX}/app.js`, async (_request, reply) => assets.send(reply, 'app.js'));
  app.get(`${CONSOLE_PREFIX}/app.css`, async (_request, reply) => assets.send(reply, 'app.css'));

  // For tools and for a browser whose link is spent: a new one-time link, for the admin token.
  app.post(`${CONSOLE_PREFIX}/links`, async (request) => {
    if (!isAdminToken(request.headers.authorization, ctx.adminToken)) throw ServiceError.unauthorized();
    return { url: `http://${request.headers.host}${CONSOLE_PREFIX}/#login=${sessions.issueLoginToken()}` };
  });

  void app.register(
    async (api) => {
      const sessionOf = new WeakMap<FastifyRequest, string>();
      api.addHook('onRequest', async (request, reply) => {
        void reply.header('cache-control', 'no-store');
        if (request.method === 'POST' && request.routeOptions.url === `${CONSOLE_PREFIX}/api/session`) {
          checkOrigin(request);
          return;
        }
        sessionOf.set(request, sessions.require(request).id);
      });
      registerSessionRoutes(api, ctx, sessionOf);
      registerViewRoutes(api, ctx);
      registerActionRoutes(api, ctx);
    },
    { prefix: `${CONSOLE_PREFIX}/api` },
  );
}

/** Signing in and out, and the live event stream of a session. */
function registerSessionRoutes(
  api: FastifyInstance,
  { sessions, live }: ConsoleRouteContext,
  sessionOf: WeakMap<FastifyRequest, string>,
): void {
  api.post('/session', async (request, reply) =>
    sessions.signIn(request, reply, parseInput(Schemas.signIn, request.body).token),
  );
  api.get('/session', async (request) => ({ csrfToken: sessions.require(request).csrfToken }));
  api.delete('/session', async (request, reply) => {
    const session = sessionOf.get(request);
    sessions.signOut(request, reply);
    if (session !== undefined) live.endSession(session);
    return { status: 'success' };
  });

  api.get('/events', async (request, reply) => {
    reply.hijack();
    live.open(reply.raw, sessionOf.get(request) ?? '');
    return reply;
  });
}

/** What the page's views read: the organizations, a system's overview, its approvals and its tasks. */
function registerViewRoutes(api: FastifyInstance, ctx: ConsoleRouteContext): void {
  const { store, live } = ctx;
  const now = () => new Date(ctx.now()).toISOString();

  api.get('/organizations', async () =>
    store.organizations.list().map((organization) => ({
      ...organization,
      users: store.users.list(organization.id),
      systems: store.systems.listByOrg(organization.id).map((system) => ({
        ...system,
        mappings: store.mappings.listBySystem(system.id),
      })),
    })),
  );

  api.get('/systems/:systemId', async (request) => {
    const system = store.systems.get(pathParam(request, 'systemId'));
    return {
      system,
      organization: store.organizations.get(system.orgId),
      connector: store.connectors.get(system.id),
      templates: store.templates.list(system.id),
      state: store.states.get(system.id),
      health: ctx.activity.health(system.id),
      demoSignIns: ctx.demoSignIns.get(system.id) ?? [],
      now: now(),
    };
  });

  api.get('/systems/:systemId/approvals', async (request) => {
    const system = store.systems.get(pathParam(request, 'systemId'));
    const query = parseInput(Schemas.approvals, request.query);
    const { approvals, total } = store.approvals.browse(system.id, {
      resolved: query.resolved === undefined ? undefined : query.resolved === 'true',
      search: query.search,
      limit: query.limit,
      offset: query.offset,
    });
    return {
      total,
      offset: query.offset,
      approvals: approvals.map((approval) => shown(ctx, system, approval)),
    };
  });

  api.get('/systems/:systemId/approvals/:approvalId', async (request) => {
    const system = store.systems.get(pathParam(request, 'systemId'));
    const approvalId = pathParam(request, 'approvalId');
    const approval = store.approvals.find(system.id, approvalId);
    if (approval === undefined) throw ServiceError.notFound('approvals', approvalId);
    return {
      approval: shown(ctx, system, approval),
      tasks: store.tasks
        .listByApproval(system.id, approval.id)
        .map((task) => ({ ...task, timeline: live.timeline(task.id) })),
      now: now(),
    };
  });

  api.get('/systems/:systemId/tasks', async (request) => ({
    now: now(),
    tasks: ctx.operations.listTasks(pathParam(request, 'systemId')),
  }));
}

/** What a developer does from the page: act as an approver, switch faults, end leases. */
function registerActionRoutes(
  api: FastifyInstance,
  { store, operations: ops, faults }: ConsoleRouteContext,
): void {
  api.post('/systems/:systemId/tasks', async (request) => {
    const systemId = pathParam(request, 'systemId');
    const body = parseInput(Schemas.task, request.body);
    // An action on a resolved approval, or beside one still on its way, can only end as already answered.
    const approval = store.approvals.find(systemId, body.approvalId, 'shallow');
    if (approval?.resolved === true) {
      throw ServiceError.conflict(
        `approval ${body.approvalId} is resolved already: there is nothing to act on`,
      );
    }
    const inFlight = store.tasks.listByApproval(systemId, body.approvalId).find(isInFlight);
    if (inFlight !== undefined) {
      throw ServiceError.conflict(
        `approval ${body.approvalId} has a task on its way (${inFlight.type}, ${inFlight.status}): wait for its result`,
      );
    }
    return ops.createTask({ systemId, ...body }, traceIdOf(request));
  });

  registerFaultRoutes(api, faults, store.systems);
  api.post('/leases/expire', async (request) => ({
    expired: ops.expireLeases(parseInput(Schemas.leases, request.body)),
  }));
}

/** An approval as the console shows it: with its recent writes, and its approver as the organization knows them. */
function shown(
  { store, live }: ConsoleRouteContext,
  system: { id: string; orgId: string },
  approval: ApprovalRecord,
) {
  const mapping = store.mappings.findBySystemUser(system.id, approval.approver);
  const user = store.users.find(mapping?.userId ?? approval.approver);
  return {
    ...approval,
    history: live.history(system.id, approval.id),
    approverUser: user?.orgId === system.orgId ? user : undefined,
  };
}

function isInFlight(task: TaskInfo): boolean {
  return task.status !== 'completed';
}
