import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { runWorker } from 'approval-connector-kit';
import { parseSeed, type ReferenceBackend, startReferenceBackend } from 'approval-connector-kit/backend';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { ServiceNowSimulator } from '../simulator/simulator.js';
import build from '../src/connector.js';

// The connector on one machine, as the README runs it: the simulated instance (`npm run simulator`), the reference
// backend seeded with simulator/service-seed.json (`npm run service`), and the worker the default export builds,
// configured by .env.example as copied (its user mappings' token and system are the seed's; its push ingress, to
// which the instance's business rules call out with its secret), but for the service's URL and the connector's token,
// which the seeded service prints, and the ports, free ones here.
const seedFile = fileURLToPath(new URL('../simulator/service-seed.json', import.meta.url));
const seed = parseSeed(JSON.parse(readFileSync(seedFile, 'utf8')));
const system = seed.organizations[0]!.systems[0]!;
const example = parseEnv(readFileSync(new URL('../.env.example', import.meta.url), 'utf8'));

let simulator: ServiceNowSimulator;
let backend: ReferenceBackend;
let folder: string;
/** The console's session cookie, once signed in with the admin token. */
let session: string | undefined;

beforeEach(async () => {
  [simulator, backend] = await Promise.all([
    ServiceNowSimulator.start({ seed: 1 }),
    startReferenceBackend({ seed: seedFile }),
  ]);
  folder = mkdtempSync(join(tmpdir(), 'servicenow-connector-'));
  session = undefined;
});

afterEach(async () => {
  await Promise.all([backend.close(), simulator.close()]);
  rmSync(folder, { recursive: true, force: true });
});

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What the console's page reads of `path` (its API), signed in as the console signs in. */
async function shownByConsole<T>(path: string): Promise<T> {
  if (session === undefined) {
    const signIn = await fetch(new URL('/console/api/session', backend.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: backend.adminToken }),
    });
    expect(signIn.ok).toBe(true);
    session = (signIn.headers.get('set-cookie') ?? '').replace(/;.*$/s, '');
  }
  const answer = await fetch(new URL(`/console/api${path}`, backend.url), { headers: { cookie: session } });
  expect(answer.ok, path).toBe(true);
  return (await answer.json()) as T;
}

it("syncs a change request's approval, maps the approvers by email, and approves it from the console as its approver", async () => {
  const signals = new EventEmitter();
  const pushPort = await freePort();
  // The business rules' REST message, pointed at the worker's push address, signing with the worker's secret.
  simulator.setPushTarget({ url: `http://127.0.0.1:${pushPort}/push`, secret: example.PUSH_SECRET! });
  const exitCode = runWorker(build, {
    env: {
      ...example,
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: system.connectorTokens[0],
      SERVICENOW_INSTANCE_URL: simulator.url,
      OPERATIONS_PORT: '',
      PUSH_PORT: String(pushPort),
      PUSH_PUBLIC_URL: `http://127.0.0.1:${pushPort}/push`,
      CONNECTOR_KEYS_FILE: join(folder, 'keys.json'),
      LOG_LEVEL: 'silent',
    },
    argv: [],
    signals,
  });
  const approvals = simulator.records('sysapproval_approver');
  await vi.waitFor(() => expect(backend.listApprovals(system.id!)).toHaveLength(approvals.length), {
    timeout: 10_000,
  });
  // The console shows each approver by the name of the organization's user the connector mapped them to.
  await vi.waitFor(
    async () => {
      const shown = await shownByConsole<{
        approvals: { approver: string; approverUser?: { firstName: string; lastName: string } }[];
      }>(`/systems/${system.id}/approvals?limit=100`);
      expect(shown.approvals).toHaveLength(approvals.length);
      for (const { approver, approverUser } of shown.approvals) {
        const { name } = simulator.approvers.find(({ sysId }) => sysId === approver)!;
        expect(`${approverUser?.firstName} ${approverUser?.lastName}`).toBe(name);
      }
    },
    { timeout: 10_000 },
  );

  const waiting = simulator.waitingApprovals().find(({ source_table }) => source_table === 'change_request')!;
  const approver = simulator.approvers.find(({ sysId }) => sysId === waiting.approver)!;
  const task = backend.createTask({
    systemId: system.id!,
    type: 'approve',
    approvalId: waiting.sys_id!,
    approveComments: 'Approved from the console',
    // As the console's sign-in form sends them.
    credentials: { username: approver.username, password: approver.password },
  });

  await vi.waitFor(() => expect(backend.getTask(task.id)?.result).toMatchObject({ status: 'success' }), {
    timeout: 10_000,
  });
  // The simulated instance shows the approval approved by that approver.
  expect(
    simulator.records('sysapproval_approver').find(({ sys_id }) => sys_id === waiting.sys_id),
  ).toMatchObject({
    state: 'approved',
    sys_updated_by: approver.username,
  });
  expect(simulator.decisions()).toEqual([
    {
      approval: waiting.sys_id,
      state: 'approved',
      userName: approver.username,
      comment: 'Approved from the console',
      via: 'api',
    },
  ]);

  // A decision taken in ServiceNow itself shows within seconds, long before the next sync run (a minute after the
  // first): the business rules call out to the worker.
  const other = simulator.waitingApprovals().find(({ sys_id }) => sys_id !== waiting.sys_id)!;
  simulator.decideInServiceNow(other.sys_id!, 'rejected', 'Not this quarter');
  await vi.waitFor(
    () =>
      expect(backend.listApprovals(system.id!).find(({ id }) => id === other.sys_id)?.resolved).toBe(true),
    { timeout: 10_000 },
  );
  await simulator.callouts.settled();
  expect(new Set(simulator.callouts.deliveries().map(({ outcome }) => outcome))).toEqual(new Set([202]));
  signals.emit('SIGTERM', 'SIGTERM');
  expect(await exitCode).toBe(0);
});

it("offers the simulator's approvers' sign-ins in the console, one click away on an action", async () => {
  const { demoSignIns } = await shownByConsole<{ demoSignIns: unknown[] }>(`/systems/${system.id}`);
  expect(demoSignIns).toEqual(
    simulator.approvers.map(({ sysId, username, password }) => ({ approver: sysId, username, password })),
  );
});
