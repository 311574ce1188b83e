import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { runWorker } from 'approval-connector-kit';
import { parseSeed, type ReferenceBackend, startReferenceBackend } from 'approval-connector-kit/backend';
import { ManagementClient } from 'approval-connector-kit/client';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { JiraSimulator } from '../simulator/simulator.js';
import { sourceApprovalId } from '../src/approvals.js';
import build from '../src/connector.js';

// The connector on one machine, as the README runs it: the simulated Jira (`npm run simulator`), the reference
// backend seeded with simulator/service-seed.json (`npm run service`), and the worker the default export builds,
// configured by .env.example as copied (its user mappings' token and system are the seed's; its push ingress, to
// which the connector registers its webhook in the simulated Jira), but for the service's URL and the connector's
// token, which the seeded service prints, and the ports, free ones here.
const seedFile = fileURLToPath(new URL('../simulator/service-seed.json', import.meta.url));
const seed = parseSeed(JSON.parse(readFileSync(seedFile, 'utf8')));
const organization = seed.organizations[0]!;
const system = organization.systems[0]!;
const example = parseEnv(readFileSync(new URL('../.env.example', import.meta.url), 'utf8'));

let simulator: JiraSimulator;
let backend: ReferenceBackend;
let management: ManagementClient;
let folder: string;

beforeEach(async () => {
  simulator = await JiraSimulator.start({ seed: 1 });
  backend = await startReferenceBackend({ seed: seedFile });
  management = new ManagementClient({ baseUrl: backend.url, token: organization.managementTokens[0]! });
  folder = mkdtempSync(join(tmpdir(), 'jira-connector-'));
});

afterEach(async () => {
  await management.close();
  await backend.close();
  await simulator.close();
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

it('syncs the simulated Jira, maps its approvers, and carries out there a task created in the service', async () => {
  const signals = new EventEmitter();
  const pushPort = await freePort();
  const exitCode = runWorker(build, {
    env: {
      ...example,
      APPROVAL_SERVICE_URL: backend.url,
      APPROVAL_CONNECTOR_TOKEN: system.connectorTokens[0],
      JIRA_BASE_URL: simulator.url,
      OPERATIONS_PORT: '',
      PUSH_PORT: String(pushPort),
      PUSH_PUBLIC_URL: `http://127.0.0.1:${pushPort}/push`,
      CONNECTOR_KEYS_FILE: join(folder, 'keys.json'),
      LOG_LEVEL: 'silent',
    },
    argv: [],
    signals,
  });
  const approvers = simulator
    .requests()
    .flatMap(({ approvals }) => approvals.flatMap((approval) => approval.approvers));
  await vi.waitFor(() => expect(backend.listApprovals(system.id!)).toHaveLength(approvers.length), {
    timeout: 10_000,
  });
  // Every approver is mapped to the user of the seeded organization with their name: by the connector, by the email
  // Jira shows, and Alan, who hides his, by the seed, as an administrator maps such an approver by hand.
  await vi.waitFor(
    async () => {
      const mappings = await management.getSystemUserMappings(system.id!);
      expect(new Set(mappings.map(({ systemUserId }) => systemUserId))).toEqual(
        new Set(approvers.map(({ accountId }) => accountId)),
      );
    },
    { timeout: 10_000 },
  );
  const shown = await consoleGet<{
    approvals: { approver: string; approverUser?: { firstName: string; lastName: string } }[];
  }>(`/systems/${system.id}/approvals?limit=100`);
  expect(shown.approvals.length).toBeGreaterThan(0);
  for (const { approver, approverUser } of shown.approvals) {
    const { displayName } = simulator.approvers.find(({ accountId }) => accountId === approver)!;
    expect(`${approverUser?.firstName} ${approverUser?.lastName}`).toBe(displayName);
  }

  const request = simulator.requests().find(({ approvals }) => approvals[0]?.finalDecision === 'pending')!;
  const approval = request.approvals[0]!;
  const { accountId } = approval.approvers.find(({ decision }) => decision === 'pending')!;
  const { email, apiToken } = simulator.approvers.find((approver) => approver.accountId === accountId)!;
  const task = backend.createTask({
    systemId: system.id!,
    type: 'approve',
    approvalId: sourceApprovalId({ issueId: request.id, approvalId: approval.id, accountId }),
    // As the console's sign-in form sends them.
    credentials: { username: email, password: apiToken },
  });

  await vi.waitFor(() => expect(backend.getTask(task.id)?.result).toMatchObject({ status: 'success' }), {
    timeout: 10_000,
  });
  expect(simulator.decisions({ via: 'api' })).toMatchObject([
    { issueKey: request.key, approvalId: approval.id, accountId, decision: 'approved' },
  ]);

  // A decision taken in Jira itself shows within seconds, long before the next sync run (a minute after the first):
  // Jira delivers it to the webhook the connector registered.
  const other = simulator
    .requests()
    .find(
      ({ approvals }) => approvals[0]?.finalDecision === 'pending' && approvals[0].approvers.length === 1,
    )!;
  const approver = other.approvals[0]!.approvers[0]!.accountId;
  const decided = sourceApprovalId({
    issueId: other.id,
    approvalId: other.approvals[0]!.id,
    accountId: approver,
  });
  simulator.decideInSource(other.key, other.approvals[0]!.id, approver, 'declined');
  await vi.waitFor(
    () => expect(backend.listApprovals(system.id!).find(({ id }) => id === decided)?.resolved).toBe(true),
    { timeout: 10_000 },
  );
  // The answer the task gave in Jira was delivered too: each change of a request is.
  expect(
    simulator.deliveries().map(({ issueKey, outcome, webhook }) => [issueKey, outcome, webhook.kind]),
  ).toEqual([
    [request.key, 'delivered', 'admin'],
    [other.key, 'delivered', 'admin'],
  ]);
  signals.emit('SIGTERM', 'SIGTERM');
  expect(await exitCode).toBe(0);
});

it("offers the simulator's approvers' sign-ins in the console, one click away on an action", async () => {
  const { demoSignIns } = await consoleGet<{ demoSignIns: unknown[] }>(`/systems/${system.id}`);
  expect(demoSignIns).toEqual(
    simulator.approvers.map(({ accountId, email, apiToken }) => ({
      approver: accountId,
      username: email,
      password: apiToken,
    })),
  );
});
