import { rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type DevSession, startDev } from '../../../src/cli/dev/index.js';
import { parseLogLine } from '../../../src/cli/dev/logs.js';
import { copyFixture, isRunning, until, workFolder } from '../support/dev-project.js';

// startDev, as a command that runs several connectors uses it: real worker processes against one backend, over HTTP.

const work = workFolder();
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A stand-in for stdout that is no terminal, and the log lines written to it. */
function pipe() {
  let text = '';
  return {
    stream: { write: (chunk: string) => (text += chunk) },
    text: () => text,
    lines: () => text.split('\n').flatMap((line) => parseLogLine(line) ?? []),
  };
}

describe('startDev', () => {
  it('runs several connectors against one backend, each in its system, its lines labelled, a status each', async () => {
    const output = pipe();
    let session: DevSession | undefined;
    try {
      session = await startDev({
        connectors: [
          { name: 'jira', project: copyFixture(work) },
          { name: 'sap', project: copyFixture(work) },
        ],
        port: 0,
        output: output.stream,
      });
      const [jira, sap] = session.connectors;
      expect(jira!.tenant.connectorToken).toBe('dev-connector-jira');
      expect(sap!.tenant.connectorToken).toBe('dev-connector-sap');
      expect(jira!.tenant.system.id).not.toBe(sap!.tenant.system.id);
      expect(output.text()).toContain('Connector jira: dist/connector.js');
      expect(output.text()).toContain('Connector sap: dist/connector.js');

      const backend = session.backend;
      for (const { tenant } of session.connectors) {
        await until(() => backend.listApprovals(tenant.system.id).length === 2);
      }
      const running = output.lines().filter((line) => line.msg === 'connector running');
      expect(running.map((line) => line.connector).sort()).toEqual(['jira', 'sap']);
      expect(session.status().map(({ name, approvals }) => ({ name, synced: approvals.synced }))).toEqual([
        { name: 'jira', synced: 2 },
        { name: 'sap', synced: 2 },
      ]);
    } finally {
      await session?.close();
    }
    const pids = new Set(output.lines().flatMap((line) => (typeof line.pid === 'number' ? [line.pid] : [])));
    expect(pids.size).toBe(2);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    expect(output.lines().at(-1)?.msg).toBe('stopped');
  });

  it("points user mappings a project's .env asks for at the loop's own organization and system", async () => {
    const project = copyFixture(work);
    // As the Jira template's .env does for `npm run service`: a management token and a system of another service.
    writeFileSync(
      join(project, '.env'),
      'REPORT_MAPPINGS=token-of-another-service\nAPPROVAL_MANAGEMENT_TOKEN=token-of-another-service\nAPPROVAL_SYSTEM_ID=system-of-another-service\n',
    );
    const session = await startDev({
      connectors: [{ name: 'mapped', project }],
      port: 0,
      output: pipe().stream,
    });
    try {
      const { system } = session.connectors[0]!.tenant;
      await until(() => session.backend.listApprovals(system.id).length === 2);
      const task = session.backend.createTask({ systemId: system.id, type: 'approve', approvalId: 'D-1' });
      await until(() => session.backend.getTask(task.id)?.status === 'completed');
      expect(session.backend.getTask(task.id)?.result).toEqual({
        status: 'success',
        meta: { systemId: system.id, tokenFromDotenv: false },
      });
    } finally {
      await session.close();
    }
  });

  it("keeps the push port a project's .env names while it is free, so that a simulator reading that .env reaches the worker", async () => {
    // Before, the loop always chose a port of its own: the ServiceNow template's simulator, which reads PUSH_PUBLIC_URL
    // from the same .env, called out to a port nobody listened on.
    const wanted = await freePortNow();
    const busy = createServer();
    await new Promise<void>((listening) => busy.listen(0, '127.0.0.1', listening));
    const busyPort = (busy.address() as AddressInfo).port;
    const projects = [wanted, wanted, busyPort].map((port) => {
      const project = copyFixture(work);
      writeFileSync(
        join(project, '.env'),
        `PUSH_PORT=${port}\nPUSH_PUBLIC_URL=http://127.0.0.1:${port}/push\n`,
      );
      return project;
    });
    let session: DevSession | undefined;
    try {
      session = await startDev({
        connectors: projects.map((project, index) => ({ name: `c${index}`, project })),
        port: 0,
        output: pipe().stream,
      });
      const ports = session.connectors.map(({ pushUrl }) => Number(new URL(pushUrl).port));
      // The first gets it; the second asked for the same, and the third for one in use: each gets another.
      expect(ports[0]).toBe(wanted);
      expect(new Set(ports).size).toBe(3);
      expect(ports[2]).not.toBe(busyPort);
    } finally {
      await session?.close();
      busy.close();
    }
  });

  it('kills a worker that has not ended when its stop times out', async () => {
    const project = copyFixture(work);
    // Its task runs for a minute: a graceful stop waits for it, up to the worker's own 36 s deadline.
    writeFileSync(join(project, '.env'), 'HANDLER_MS=60000\n');
    const output = pipe();
    const session = await startDev({
      connectors: [{ name: 'slow', project }],
      port: 0,
      output: output.stream,
      stopTimeoutMs: 500,
    });
    const { system } = session.connectors[0]!.tenant;
    await until(() => output.lines().some((line) => line.msg === 'connector running'));
    await until(() => session.backend.listApprovals(system.id).length === 2);
    const task = session.backend.createTask({ systemId: system.id, type: 'approve', approvalId: 'D-1' });
    await until(() => session.backend.getTask(task.id)?.status === 'leased');
    await session.close();
    expect(output.lines().find((line) => line.msg?.startsWith('the connector had not ended'))).toMatchObject({
      level: 40,
      stopTimeoutMs: 500,
    });
  });

  it("offers the console the demo sign-ins of a seed file's system (connector dev --seed)", async () => {
    const signIns = [{ approver: 'ada', username: 'ada@example.com', password: 'ada-demo-password' }];
    const seed = join(work, 'sign-ins-seed.json');
    writeFileSync(
      seed,
      JSON.stringify({
        organizations: [
          {
            name: 'Own',
            systems: [
              { name: 'Own system', connectorTokens: ['own-connector-token'], consoleSignIns: signIns },
            ],
          },
        ],
      }),
    );
    const session = await startDev({
      connectors: [{ name: 'own', project: copyFixture(work) }],
      port: 0,
      seed,
      output: pipe().stream,
    });
    try {
      const { url, adminToken } = session.backend;
      const signIn = await fetch(`${url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: adminToken }),
      });
      const cookie = signIn.headers.get('set-cookie')!.split(';', 1)[0]!;
      const system = await fetch(`${url}/console/api/systems/${session.connectors[0]!.tenant.system.id}`, {
        headers: { cookie },
      });
      expect(((await system.json()) as { demoSignIns: unknown }).demoSignIns).toEqual(signIns);
    } finally {
      await session.close();
    }
  });

  it('refuses two connectors of one name, naming the option, before starting anything', async () => {
    const output = pipe();
    await expect(
      startDev({
        connectors: [
          { name: 'same', project: work },
          { name: 'same', project: work },
        ],
        output: output.stream,
      }),
    ).rejects.toMatchObject({
      code: 'validation',
      message: expect.stringContaining(
        'Expected `connectors[1].name` to be a name of its own, got `"same"` a second time',
      ),
    });
    expect(output.text()).toBe('');
  });
});

/** A port free on 127.0.0.1 now. */
function freePortNow(): Promise<number> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}
