/**
 * The server side of the benchmarks, run in a process of its own (see {@link startServerProcess}) so that the load
 * generator or the connector does not share its thread and its CPU time can be read alone. Started with its kind as
 * the first argument:
 *
 * - `reference`: the reference backend on 127.0.0.1, logs silent, with a tenant for the Integration API and an
 *   organization of as many users as the second argument says; it can be reset to an empty store, and given systems
 *   and tasks;
 * - `bare`: a bare fastify app answering the same two v2 routes: Update approvals parses its body with fastify's
 *   own JSON parser and answers success, Get task answers a constant `{task: null}`.
 *
 * It answers the calls of `server.ts` (see `ipc.ts`) and exits on `close` or when the parent goes.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pino from 'pino';
import { type ReferenceBackend, startReferenceBackend } from '../../src/backend/index.js';
import { serve } from './ipc.js';
import type { BenchSystem, ServerFixture, ServerKind, TaskTimes } from './server.js';

/** The management token of the organization of users. */
const USERS_TOKEN = 'bench-users-management';

/** An organization of `count` users: `First<i mod 1000> Last<i>`, `user<i>@acme.example`. */
function users(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    email: `user${i}@acme.example`,
    firstName: `First${i % 1000}`,
    lastName: `Last${i}`,
  }));
}

interface Running {
  url: string;
  fixture: ServerFixture;
  backend: ReferenceBackend | undefined;
  close: () => Promise<void>;
}

async function startReference(userCount: number): Promise<Running> {
  const backend = await startReferenceBackend({ logger: pino({ level: 'silent' }) });
  const tenant = backend.createTenant();
  if (userCount > 0) {
    backend.seed({
      organizations: [{ name: 'Users', managementTokens: [USERS_TOKEN], users: users(userCount) }],
    });
  }
  return {
    url: backend.url,
    fixture: { connectorToken: tenant.connectorToken, managementToken: USERS_TOKEN },
    backend,
    close: () => backend.close(),
  };
}

async function startBare(): Promise<Running> {
  const app = Fastify({ bodyLimit: 5 * 1024 * 1024 });
  app.put('/v2/rawapprovals', async () => ({ status: 'success' }));
  app.get('/v2/connector/tasks', async () => ({ status: 'success', data: { task: null } }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    fixture: { connectorToken: 'unused', managementToken: 'unused' },
    backend: undefined,
    close: () => app.close(),
  };
}

/** A system with its connector registered for `approve`, one approval, and `tasks` tasks waiting for it. */
function createSystem(backend: ReferenceBackend, tasks: number): BenchSystem {
  const systemId = randomUUID();
  const token = `bench-${randomUUID()}`;
  backend.seed({
    organizations: [
      {
        name: `Organization of ${systemId}`,
        systems: [
          {
            id: systemId,
            name: 'Benchmark',
            connectorTokens: [token],
            connector: { taskTypes: ['approve'], authRequired: false },
            approvals: [
              {
                id: 'PO-1',
                schemaId: 'purchase-order',
                approver: 'approver-1',
                resolved: false,
                lastModified: '2026-01-01T00:00:00.000Z',
                data: { title: 'Purchase order 1' },
              },
            ],
          },
        ],
      },
    ],
  });
  for (let i = 0; i < tasks; i++) backend.createTask({ systemId, type: 'approve', approvalId: 'PO-1' });
  return { systemId, token };
}

async function main(): Promise<void> {
  const kind = process.argv[2] as ServerKind;
  const userCount = Number(process.argv[3] ?? 0);
  const start = () => (kind === 'reference' ? startReference(userCount) : startBare());
  let server = await start();
  const reference = () => {
    if (server.backend === undefined) throw new Error(`the ${kind} server has no store`);
    return server.backend;
  };
  serve(
    {
      info: () => ({ url: server.url, fixture: server.fixture }),
      cpu: () => {
        const { user, system } = process.cpuUsage();
        return user + system;
      },
      reset: async () => {
        reference();
        await server.close();
        server = await start();
        return { url: server.url, fixture: server.fixture };
      },
      system: ({ tasks }: { tasks: number }) => createSystem(reference(), tasks),
      task: ({ systemId }: { systemId: string }) => {
        reference().createTask({ systemId, type: 'approve', approvalId: 'PO-1' });
      },
      tasks: ({ systemId }: { systemId: string }): TaskTimes[] =>
        reference()
          .listTasks(systemId)
          .map((task) => ({
            createdAt: Date.parse(task.createdAt),
            completedAt: task.completedAt === undefined ? undefined : Date.parse(task.completedAt),
          })),
    },
    () => server.close(),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
