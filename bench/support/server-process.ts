/**
 * The server side of the backend benchmarks, run in a process of its own (see {@link startServerProcess}) so that
 * the load generator does not share its thread and its CPU time can be read alone. Started with its kind as the
 * first argument:
 *
 * - `reference`: the reference backend on 127.0.0.1, logs silent, with a tenant for the Integration API and an
 *   organization of as many users as the second argument says;
 * - `bare`: a bare fastify app answering the same two v2 routes: Update approvals parses its body with fastify's
 *   own JSON parser and answers success, Get task answers a constant `{task: null}`.
 *
 * It reports `{type: 'ready', url, fixture}` over IPC, answers `{type: 'cpu'}` with the CPU time it has used, and
 * exits on `{type: 'close'}` or when the parent goes.
 */
import Fastify from 'fastify';
import pino from 'pino';
import { startReferenceBackend } from '../../src/backend/index.js';
import type { ServerFixture, ServerKind, ToParent, ToServer } from './server.js';

/** The management token of the organization of users. */
const USERS_TOKEN = 'bench-users-management';

function send(message: ToParent): void {
  process.send?.(message);
}

/** An organization of `count` users: `First<i mod 1000> Last<i>`, `user<i>@acme.example`. */
function users(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    email: `user${i}@acme.example`,
    firstName: `First${i % 1000}`,
    lastName: `Last${i}`,
  }));
}

async function startReference(
  userCount: number,
): Promise<{ url: string; fixture: ServerFixture; close: () => Promise<void> }> {
  const backend = await startReferenceBackend({ logger: pino({ level: 'silent' }) });
  const tenant = backend.createTenant();
  backend.seed({
    organizations: [{ name: 'Users', managementTokens: [USERS_TOKEN], users: users(userCount) }],
  });
  return {
    url: backend.url,
    fixture: { connectorToken: tenant.connectorToken, managementToken: USERS_TOKEN },
    close: () => backend.close(),
  };
}

async function startBare(): Promise<{ url: string; fixture: ServerFixture; close: () => Promise<void> }> {
  const app = Fastify({ bodyLimit: 5 * 1024 * 1024 });
  app.put('/v2/rawapprovals', async () => ({ status: 'success' }));
  app.get('/v2/connector/tasks', async () => ({ status: 'success', data: { task: null } }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, fixture: { connectorToken: 'unused', managementToken: 'unused' }, close: () => app.close() };
}

async function main(): Promise<void> {
  const kind = process.argv[2] as ServerKind;
  const server =
    kind === 'reference' ? await startReference(Number(process.argv[3] ?? 0)) : await startBare();
  process.on('message', (message: ToServer) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', micros: user + system });
    } else {
      void server.close().then(() => process.exit(0));
    }
  });
  // An orphan would keep its port and its CPU: leave with the parent.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', url: server.url, fixture: server.fixture });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
