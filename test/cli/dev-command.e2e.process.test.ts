import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDevCommand } from '../../src/cli/commands/dev.js';
import {
  ADMIN_TOKEN,
  copyFixture,
  type DevProcess,
  isRunning,
  startDev,
  until,
  workFolder,
} from './support/dev-project.js';
import { runInProcess } from './support/in-process.js';
import { killAll, spawnCli } from './support/processes.js';
import {
  CAN_RUN_ON_TERMINAL,
  cleanEnv,
  connectorCommand,
  linesBetween,
  onTerminal,
  rowsOf,
} from './support/terminal.js';

// `connector dev` in a process of its own, in a copy of the fixture project, as a developer runs it there: what it
// does is seen through what it prints, its backend (over HTTP, with the tokens it printed) and its exit code.

interface Approval {
  id: string;
}
interface Task {
  id: string;
  status: 'waiting' | 'leased' | 'completed';
  result?: { status: string };
}

// Each test runs the loop, its builds and its workers, each a process of its own that compiles and starts on a
// 2-core machine shared with the other test files: the suite's 20 s per test is too little for two builds and
// three processes in a row. This is a budget, not an expectation of speed: every wait inside is for an event.
const PROCESSES = { timeout: 60_000 };
const work = workFolder();
// Each test stops what it started; whatever a failed one left running is killed at the end.
afterAll(() => {
  killAll();
  rmSync(work, { recursive: true, force: true });
});

const approvalIds = async (dev: DevProcess, systemId: string) =>
  (await dev.admin<Approval[]>('GET', `/systems/${systemId}/approvals`)).map(({ id }) => id);

/** Adds a request to the fixture's source, a change of its sources. */
function addRequest(project: string, id: string): void {
  const file = join(project, 'src', 'approvals.js');
  writeFileSync(file, readFileSync(file, 'utf8').replace("'D-2'", `'D-2', '${id}'`));
}

describe('connector dev in a project', PROCESSES, () => {
  let project: string;
  let dev: DevProcess;

  beforeAll(async () => {
    project = copyFixture(work);
    dev = startDev(project);
    await dev.banner();
  });

  it('prints the URLs and tokens a developer needs, and each opens what it says', async () => {
    const banner = await dev.banner();
    expect(banner.connectorToken).toBe('dev-connector-dev-fixture');
    expect(banner.managementToken).toBe('dev-management-token');
    // An admin token the developer chose is theirs to know: never printed.
    expect(dev.stdout()).toContain('Authorization: Bearer <APPROVAL_ADMIN_TOKEN>');
    expect(dev.stdout()).not.toContain(ADMIN_TOKEN);

    const systems = await request(`${banner.serviceUrl}/v1/systems`, {
      headers: { authorization: `Bearer ${banner.managementToken}` },
    });
    expect(await systems.body.json()).toEqual([
      expect.objectContaining({ id: banner.systemId, name: 'dev-fixture' }),
    ]);
    const state = await request(`${banner.serviceUrl}/v2/connector/state`, {
      headers: { authorization: `Bearer ${banner.connectorToken}` },
    });
    expect(state.statusCode).toBe(200);
    await state.body.dump();

    const login = await request(`${banner.serviceUrl}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: new URL(banner.consoleLink).hash.replace('#login=', '') }),
    });
    expect(login.statusCode).toBe(200);
    await login.body.dump();

    await until(
      async () => (await request(`${banner.operationsUrl}/healthz`).catch(() => null))?.statusCode === 200,
    );
  });

  it('runs the project’s connector against the backend: its approvals arrive, for an approver of the seed', async () => {
    const { systemId } = await dev.banner();
    await until(async () => (await approvalIds(dev, systemId)).length === 2);
    expect(await approvalIds(dev, systemId)).toEqual(['D-1', 'D-2']);
    expect(dev.stdout()).toContain('approvers:         ada (Ada Lovelace), grace (Grace Hopper)');
  });

  it('carries out a task created through the backend', async () => {
    const { systemId } = await dev.banner();
    await until(() => dev.messages().includes('connector running'));
    const task = await dev.admin<Task>('POST', '/tasks', { systemId, type: 'approve', approvalId: 'D-1' });
    await until(async () => (await dev.admin<Task>('GET', `/tasks/${task.id}`)).status === 'completed');
    expect(await dev.admin<Task>('GET', `/tasks/${task.id}`)).toMatchObject({
      result: { status: 'success' },
    });
  });

  it('builds and restarts the connector when a source changes, on its new build', async () => {
    const { systemId } = await dev.banner();
    const [first] = dev.workerPids();
    addRequest(project, 'D-3');
    await until(async () => (await approvalIds(dev, systemId)).includes('D-3'));
    expect(dev.messages()).toContain('restarting the connector on its new build');
    const pids = dev.workerPids();
    expect(pids).toHaveLength(2);
    expect(pids[0]).toBe(first);
    // The first worker stopped gracefully before the second started.
    expect(isRunning(first!)).toBe(false);
    const messages = dev.messages();
    const restart = messages.indexOf('restarting the connector on its new build');
    expect(messages.indexOf('connector stopped', restart)).toBeGreaterThan(restart);
  });

  it('stops its worker gracefully and its backend, and exits 0, on SIGTERM', async () => {
    const { serviceUrl } = await dev.banner();
    const worker = dev.workerPids().at(-1)!;
    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
    expect(dev.stderr()).toBe('');
    // The worker's lifecycle moves are logged between these; test/worker/lifecycle.e2e.isolated.test.ts checks them.
    // So is a sync run's end when the signal lands in one: it ends `interrupted` (test/worker/lifecycle.e2e.isolated.test.ts).
    const between = new Set([
      'lifecycle state changed',
      'sync run interrupted by the stop; the next run resumes from the saved cursor',
    ]);
    const messages = dev.messages().filter((message) => !between.has(message));
    expect(messages.slice(-3)).toEqual([
      'shutdown signal received; stopping',
      'connector stopped',
      'stopped',
    ]);
    expect(isRunning(worker)).toBe(false);
    await expect(request(`${serviceUrl}/openapi.json`)).rejects.toThrow();
  });
});

describe('connector dev, when something goes wrong', PROCESSES, () => {
  it('prints a failing build’s errors and keeps the backend and the running connector up; the next good change restarts it', async () => {
    const project = copyFixture(work);
    const dev = startDev(project);
    const { systemId, serviceUrl } = await dev.banner();
    await until(async () => (await approvalIds(dev, systemId)).length === 2);
    const [worker] = dev.workerPids();

    appendFileSync(join(project, 'src', 'approvals.js'), 'export const = ;\n');
    await dev.printed(/SyntaxError: Unexpected token '='/);
    await until(() =>
      dev.messages().includes('the build failed; the connector keeps running its previous build'),
    );
    expect(dev.lines().find((line) => line.msg.startsWith('the build failed'))).toMatchObject({ level: 50 });
    const openapi = await request(`${serviceUrl}/openapi.json`);
    expect(openapi.statusCode).toBe(200);
    await openapi.body.dump();
    expect(isRunning(worker!)).toBe(true);
    expect(dev.workerPids()).toEqual([worker]);

    writeFileSync(
      join(project, 'src', 'approvals.js'),
      readFileSync(join(project, 'src', 'approvals.js'), 'utf8').replace('export const = ;\n', ''),
    );
    addRequest(project, 'D-3');
    await until(async () => (await approvalIds(dev, systemId)).includes('D-3'));
    expect(dev.workerPids()).toHaveLength(2);

    // As Ctrl+C in a terminal.
    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
  });

  it('says when the worker ends by itself, and keeps the backend up, waiting for a change', async () => {
    const project = copyFixture(work);
    const dev = startDev(project, ['dist/missing.js']);
    const { serviceUrl } = await dev.banner();
    await until(() => dev.messages().includes('the connector ended by itself; waiting for a change'));
    expect(
      dev.lines().find((line) => line.msg === 'the connector ended by itself; waiting for a change'),
    ).toMatchObject({
      level: 50,
      exit: 2,
    });
    // The worker's own refusal, as connector run gives it.
    expect(dev.stdout()).toContain('does not exist');
    const openapi = await request(`${serviceUrl}/openapi.json`);
    expect(openapi.statusCode).toBe(200);
    await openapi.body.dump();
    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
  });

  it('lets a second Ctrl+C, as npm run dev may send, not cut the stop short: the task in flight finishes', async () => {
    const project = copyFixture(work);
    // The project's .env reaches the worker: its task takes a second.
    writeFileSync(join(project, '.env'), 'HANDLER_MS=1000\n');
    const dev = startDev(project);
    const { systemId } = await dev.banner();
    await until(() => dev.messages().includes('connector running'));
    // Running comes before the first sync's end: the task's approval must be in the service first.
    await until(async () => (await approvalIds(dev, systemId)).includes('D-1'));
    const task = await dev.admin<Task>('POST', '/tasks', { systemId, type: 'approve', approvalId: 'D-1' });
    await until(async () => (await dev.admin<Task>('GET', `/tasks/${task.id}`)).status === 'leased');
    dev.child.kill('SIGINT');
    // Once the first is heard, and the worker is stopping.
    await until(() => dev.messages().includes('shutdown signal received; stopping'));
    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    expect(dev.lines().find((line) => line.msg === 'task finished')).toMatchObject({ status: 'success' });
    expect(dev.messages().at(-1)).toBe('stopped');
  });

  it('does not leave its worker running when it is killed', async () => {
    const project = copyFixture(work);
    const dev = startDev(project);
    await until(() => dev.messages().includes('connector running'));
    const [worker] = dev.workerPids();
    dev.child.kill('SIGKILL');
    await dev.exited;
    await until(() => !isRunning(worker!));
  });
});

describe('connector dev on a terminal', PROCESSES, () => {
  const ROWS = 24;
  const COLUMNS = 80;

  it.skipIf(!CAN_RUN_ON_TERMINAL)(
    'keeps the banner on a screen of 80×24 above a status line: the log lines go to the file it names; Ctrl+C stops everything with 0',
    async () => {
      const project = copyFixture(work);
      const terminal = onTerminal(connectorCommand(['dev', '--port', '0']), {
        cwd: project,
        env: cleanEnv({ APPROVAL_ADMIN_TOKEN: ADMIN_TOKEN }),
        columns: COLUMNS,
        rows: ROWS,
      });
      try {
        await terminal.until(/Stop with Ctrl\+C/);
        const screen = terminal.screen;
        const serviceUrl = /service URL: +(\S+)/.exec(screen())![1]!;
        const systemId = /system: +\S+ \(([^)]+)\)/.exec(screen())![1]!;
        const consoleLink = /console: +(\S+)/.exec(screen())![1]!;
        // Redrawn in place: back to the start of the line, the old block cleared, the new one written.
        await terminal.until('\r\u001b[Jdev-fixture running · approvals: 2 synced');
        const created = await request(`${serviceUrl}/admin/tasks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ systemId, type: 'approve', approvalId: 'D-1' }),
        });
        expect(created.statusCode).toBe(200);
        await created.body.dump();
        await terminal.until(/tasks: 0 waiting, 0 running, 1 done/);

        // The banner, written at once, and the status line fit the screen; its last lines say again where to go.
        const banner = linesBetween(screen(), 'Reference backend listening on', 'Stop with Ctrl+C.');
        expect(rowsOf(banner, COLUMNS) + 1).toBeLessThanOrEqual(ROWS);
        expect(banner.slice(-4)).toEqual([
          `Console:   ${consoleLink}`,
          `Service:   ${serviceUrl} (tokens and approvers: above)`,
          `Log lines: ${join('.connector', 'dev.log')} (tail -f it to follow them)`,
          'Stop with Ctrl+C.',
        ]);
        // No log line on the screen: they are in the file, readable, without colours.
        expect(screen()).not.toMatch(/INFO|"msg":/);
        const log = () => readFileSync(join(project, '.connector', 'dev.log'), 'utf8');
        await until(() => /INFO.*: .*sync run finished/.test(log()));
        expect(log()).not.toContain('\u001b');
        expect(log()).not.toContain('"msg":');
        expect(await terminal.interrupt()).toBe(0);
        expect(log()).toContain('shutdown signal received; stopping');
        expect(log()).toMatch(/INFO.*: stopped/);
      } finally {
        terminal.child.kill('SIGKILL');
      }
    },
  );
});

describe('connector dev --data', PROCESSES, () => {
  it('keeps the backend’s data in the file across restarts, its tokens and system the same', async () => {
    const project = copyFixture(work);
    const data = join(work, 'dev-data.sqlite');
    const first = startDev(project, ['--data', data]);
    const before = await first.banner();
    await until(async () => (await approvalIds(first, before.systemId)).length === 2);
    await until(() => first.messages().includes('connector running'));
    const task = await first.admin<Task>('POST', '/tasks', {
      systemId: before.systemId,
      type: 'approve',
      approvalId: 'D-2',
    });
    await until(async () => (await first.admin<Task>('GET', `/tasks/${task.id}`)).status === 'completed');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = startDev(project, ['--data', data]);
    const after = await second.banner();
    expect(after).toMatchObject({
      systemId: before.systemId,
      connectorToken: before.connectorToken,
      managementToken: before.managementToken,
    });
    expect(second.stdout()).toContain(`store:    ${data}`);
    expect(await second.admin<Task>('GET', `/tasks/${task.id}`)).toMatchObject({ status: 'completed' });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});

describe('connector dev refuses', PROCESSES, () => {
  /** Runs connector dev to its end; it must start nothing. */
  async function refused(args: string[], env: Record<string, string> = {}, cwd?: string) {
    const dev = spawnCli(['dev', ...args], env, { cwd: cwd ?? copyFixture(work) });
    const code = await dev.exited;
    expect(dev.stdout()).toBe('');
    return { code, stderr: dev.stderr() };
  }

  /**
   * The same, in this process, in the folder `cwd` (a copy of the fixture by default): for what is refused before
   * anything starts, a command line, a folder or a seed.
   */
  async function refusedInProcess(args: string[], env: Record<string, string> = {}, cwd?: string) {
    const { code, stdout, stderr } = await runInProcess(runDevCommand, args, env, {
      cwd: cwd ?? copyFixture(work),
    });
    expect(stdout).toBe('');
    return { code, stderr };
  }

  it('bad flags, with the usage and then one readable message naming each, and exit code 2', async () => {
    // One in a process of its own, which exits with the code the command answers.
    expect(await refused(['--prot', '8080'])).toEqual({
      code: 2,
      stderr: expect.stringMatching(
        /^Usage: connector dev [\s\S]*\n\nInvalid options of connector dev: Unknown option `--prot`; did you mean `--port`\?\n$/,
      ),
    });
    expect(await refusedInProcess(['--port', 'eighty'])).toEqual({
      code: 2,
      stderr: expect.stringMatching(
        /\n\nInvalid options of connector dev: Expected `--port` to be an integer from 0 to 65535, got `"eighty"` \(string\)\n$/,
      ),
    });
    expect(await refusedInProcess(['one.js', 'two.js'])).toEqual({
      code: 2,
      stderr: expect.stringMatching(
        /\n\nInvalid options of connector dev: Unexpected argument `two\.js`: give one module\n$/,
      ),
    });
    expect(await refusedInProcess([], { LOG_FORMAT: 'fancy' })).toEqual({
      code: 2,
      stderr: expect.stringMatching(
        /Expected `LOG_FORMAT` to be one of `pretty`, `json`, got `"fancy"` \(string\)/,
      ),
    });
  });

  it('a folder that is no project, and a seed file it cannot use, with exit code 2', async () => {
    const outside = await refusedInProcess([], {}, work);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain(
      `${join(work, 'package.json')} does not exist: run connector dev in a connector project's folder`,
    );

    const seed = join(work, 'bad-seed.json');
    writeFileSync(
      seed,
      JSON.stringify({ organizations: [{ name: 'Acme', users: [{ email: 'not an email' }] }] }),
    );
    const badSeed = await refusedInProcess(['--seed', seed]);
    expect(badSeed.code).toBe(2);
    expect(badSeed.stderr).toMatch(
      /^Invalid seed file .*bad-seed\.json: organizations\[0\]\.users\[0\]\.email/,
    );

    const tokenless = join(work, 'tokenless-seed.json');
    writeFileSync(
      tokenless,
      JSON.stringify({ organizations: [{ name: 'Acme', systems: [{ name: 'Jira' }] }] }),
    );
    const noToken = await refusedInProcess(['--seed', tokenless]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain(
      'The seed has no system with a connector token for the connector dev-fixture',
    );
  });
});

describe('connector dev fails', PROCESSES, () => {
  it('with exit code 1 and one line naming the port and --port, when the backend’s port is in use', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const dev = spawnCli(['dev', '--port', String(port)], {}, { cwd: copyFixture(work) });
      expect(await dev.exited).toBe(1);
      expect(dev.stdout()).toBe('');
      expect(dev.stderr()).toBe(
        `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
      );
    } finally {
      taken.close();
    }
  });
});
