import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { runWorker } from 'approval-connector-kit';
import { parseSeed, type ReferenceBackend, startReferenceBackend } from 'approval-connector-kit/backend';
import { ManagementClient } from 'approval-connector-kit/client';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { SapInboxSimulator } from '../simulator/simulator.js';
import build from '../src/connector.js';
import { approvalId } from '../src/mapping.js';

// The connector on one machine, as the README runs it: the simulated SAP system (`npm run simulator`), the reference
// backend seeded with simulator/service-seed.json (`npm run service`), and the worker the default export builds,
// configured by .env.example and the token the seeded service prints.
const seedFile = fileURLToPath(new URL('../simulator/service-seed.json', import.meta.url));
const seed = parseSeed(JSON.parse(readFileSync(seedFile, 'utf8')));
const organization = seed.organizations[0]!;
const system = organization.systems[0]!;
const example = parseEnv(readFileSync(new URL('../.env.example', import.meta.url), 'utf8'));

let sap: SapInboxSimulator;
let backend: ReferenceBackend;
let management: ManagementClient;
let folder: string;
// The worker, stopped by its stand-in SIGTERM; also after a failed test, before what it talks to closes.
const signals = new EventEmitter();
let exitCode: Promise<number> | undefined;

beforeEach(async () => {
  sap = await SapInboxSimulator.start();
  backend = await startReferenceBackend({ seed: seedFile });
  management = new ManagementClient({ baseUrl: backend.url, token: organization.managementTokens[0]! });
  folder = mkdtempSync(join(tmpdir(), 'sap-connector-'));
});

afterEach(async () => {
  if (exitCode !== undefined) {
    signals.emit('SIGTERM', 'SIGTERM');
    await exitCode;
    exitCode = undefined;
  }
  await management.close();
  await backend.close();
  await sap.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A console API answer, as the console page reads it after signing in with the admin token. */
async function consoleGet<T>(path: string): Promise<T> {
  const session = await fetch(`${backend.url}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: backend.adminToken }),
  });
  expect(session.status).toBe(200);
  const cookie = session.headers.get('set-cookie')!.split(';', 1)[0]!;
  const answer = await fetch(`${backend.url}/console/api${path}`, { headers: { cookie } });
  expect(answer.status).toBe(200);
  return (await answer.json()) as T;
}

it('syncs the simulated SAP system for mapped approvers, and carries out there a task created in the service', async () => {
  // Syncs often, so that the decision's effect on the inbox shows without waiting the default minute.
  const config = join(folder, 'config.json');
  writeFileSync(config, JSON.stringify({ sync: { schedule: 50 } }));
  exitCode = runWorker(build, {
    env: {
      ...example,
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: system.connectorTokens[0],
      SAP_SERVICE_URL: sap.serviceUrl,
      OPERATIONS_PORT: '',
      CONNECTOR_CONFIG: config,
      CONNECTOR_KEYS_FILE: join(folder, 'keys.json'),
      LOG_LEVEL: 'silent',
    },
    argv: [],
    signals,
  });
  const open = sap
    .openTasks()
    .flatMap((task) =>
      (task.status === 'RESERVED' && task.processor ? [task.processor] : task.potentialOwners).map((user) =>
        approvalId({ origin: task.origin, instanceId: task.instanceId }, user.username),
      ),
    );
  await vi.waitFor(
    () =>
      expect(
        backend
          .listApprovals(system.id!)
          .map(({ id }) => id)
          .sort(),
      ).toEqual(open.sort()),
    { timeout: 10_000 },
  );
  // Every approver is a user of the seeded organization, mapped by the SAP user name.
  const mapped = new Set(
    (await management.getSystemUserMappings(system.id!)).map(({ systemUserId }) => systemUserId),
  );
  for (const { approver } of backend.listApprovals(system.id!)) expect(mapped).toContain(approver);
  // And so the console shows each approver by name.
  const shown = await consoleGet<{
    approvals: { approver: string; approverUser?: { firstName: string; lastName: string } }[];
  }>(`/systems/${system.id}/approvals?limit=100`);
  expect(shown.approvals).toHaveLength(open.length);
  for (const { approver, approverUser } of shown.approvals) {
    const { displayName } = sap.approvers.find(({ username }) => username === approver)!;
    expect(`${approverUser?.firstName} ${approverUser?.lastName}`).toBe(displayName);
  }

  const task = sap.openTasks().find((candidate) => candidate.status === 'READY')!;
  const owner = sap.approvers.find(({ username }) => username === task.potentialOwners[0]?.username)!;
  const id = approvalId({ origin: task.origin, instanceId: task.instanceId }, owner.username);
  const created = backend.createTask({
    systemId: system.id!,
    type: 'approve',
    approvalId: id,
    // As the console's sign-in form sends them.
    credentials: { username: owner.username, password: owner.password },
  });

  await vi.waitFor(() => expect(backend.getTask(created.id)?.result).toEqual({ status: 'success' }), {
    timeout: 10_000,
  });
  expect(sap.decisions()).toMatchObject([
    { instanceId: task.instanceId, decisionKey: '0001', username: owner.username, via: 'odata' },
  ]);
  await vi.waitFor(
    () =>
      expect(backend.listApprovals(system.id!).find((approval) => approval.id === id)?.resolved).toBe(true),
    { timeout: 10_000 },
  );
  signals.emit('SIGTERM', 'SIGTERM');
  expect(await exitCode).toBe(0);
  exitCode = undefined;
});

it("offers the simulator's approvers' sign-ins in the console, one click away on an action", async () => {
  const { demoSignIns } = await consoleGet<{ demoSignIns: unknown[] }>(`/systems/${system.id}`);
  expect(demoSignIns).toEqual(
    sap.approvers.map(({ username, password }) => ({ approver: username, username, password })),
  );
});
