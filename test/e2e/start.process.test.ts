import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { CAN_RUN_ON_TERMINAL, cleanEnv, linesBetween, onTerminal, rowsOf } from '../cli/support/terminal.js';

// `npm start` as a new user runs it, in a process of its own: its script's command line from package.json (the
// kit is built by vitest's global setup, as `prestart` builds it), on free ports, until its lines say that a task
// was carried out in each simulated system; then checked from outside, over HTTP, and stopped with Ctrl+C.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scripts = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts as {
  start: string;
  prestart?: string;
};
const [command, ...startArgs] = scripts.start.split(' ');
let child: ChildProcess | undefined;

afterEach(() => {
  if (child?.exitCode === null) child.kill('SIGKILL');
});

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function getJson(url: string, authorization: string): Promise<Record<string, unknown>> {
  const answer = await request(url, { headers: { authorization, accept: 'application/json' } });
  expect(answer.statusCode, url).toBe(200);
  return (await answer.body.json()) as Record<string, unknown>;
}

/** A temporary folder of its own for a start (its TMPDIR), to see what the start leaves there. */
function ownTemporaryFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'start-test-'));
  temporaryFolders.push(folder);
  return folder;
}
const temporaryFolders: string[] = [];
afterAll(() => {
  for (const folder of temporaryFolders) rmSync(folder, { recursive: true, force: true });
});

/** What the start made in the temporary folder: tsx's cache, shared by every run, aside. */
const madeIn = (folder: string) => readdirSync(folder).filter((name) => !name.startsWith('tsx-'));

it('runs the backend, the three simulators and the three connectors, and carries out a task in each system', async () => {
  expect(command).toBe('node');
  // No build of the whole package first: the start builds the console's page alone, and only when it is stale.
  expect(scripts.prestart).toBeUndefined();
  const temporary = ownTemporaryFolder();
  child = spawn(
    process.execPath,
    [
      ...startArgs,
      ...['--port', '0', '--jira-port', '0', '--sap-port', '0', '--servicenow-port', '0'],
      ...['--activity-ms', '2000'],
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        APPROVAL_ADMIN_TOKEN: undefined,
        TMPDIR: temporary,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const printed = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const match = out.match(pattern);
      if (match) return match;
      if (child!.exitCode !== null) throw new Error(`npm start ended early (${child!.exitCode}):\n${out}`);
      await once(child!.stdout!, 'data');
    }
  };

  const [, jiraKey, jiraApprover] = await printed(
    /^Jira: (\S+) approved by (.+) in the simulated Jira \(task succeeded\)$/m,
  );
  const [, sapTask, sapApprover] = await printed(
    /^SAP: task (\d+) \(.*\) approved by (.+) in the simulated SAP \(task succeeded\)$/m,
  );
  const [, serviceNowRecord, serviceNowApprover] = await printed(
    /^ServiceNow: ((?:CHG|RITM)\d+) approved by (.+) in the simulated ServiceNow \(task succeeded\)$/m,
  );
  // A decision taken in the simulated Jira itself shows in the service within seconds, not at the next sync run (a
  // minute): Jira delivered it to the webhook the connector registered, and the worker looked it up.
  const [, pushedSeconds] = await printed(
    /^Jira: \S+ (?:approved|declined) by .+ in the simulated Jira itself, resolved in the service ([\d.]+) s later$/m,
  );
  expect(Number(pushedSeconds)).toBeLessThan(10);
  // And one taken in the simulated ServiceNow itself: its business rules called out to the worker's push ingress.
  const [, serviceNowPushedSeconds] = await printed(
    /^ServiceNow: (?:CHG|RITM)\d+ (?:approved|rejected) by .+ in the simulated ServiceNow itself, resolved in the service ([\d.]+) s later$/m,
  );
  expect(Number(serviceNowPushedSeconds)).toBeLessThan(10);
  // Where to look, the console's link first.
  const [, serviceUrl] = out.match(/^Reference backend listening on (\S+)$/m)!;
  expect(out.indexOf(`console:  ${serviceUrl}/console/#login=`)).toBeLessThan(
    out.indexOf('connector token:'),
  );
  const [, adminToken] = out.match(/Authorization: Bearer (\S+)/)!;
  // The page was built by the tests' setup, and is current: nothing is built, and no bundler's lines are printed.
  expect(out).not.toMatch(/Building the console page|Build success|CLI Target/);
  // The organization's management token is its own, not one example's.
  expect([...out.matchAll(/^ {2}management token: +(\S+)$/gm)].map((m) => m[1])).toEqual([
    'example-management',
    'example-management',
    'example-management',
  ]);
  const systemIds = [...out.matchAll(/^ {2}system: .* \(([0-9a-f-]{36})\) of Example$/gm)].map((m) => m[1]!);
  const [, jiraUrl] = out.match(/^Simulated Jira Service Management at (\S+)/m)!;
  const [, sapUrl] = out.match(/^Simulated SAP system \(My Inbox\) at (\S+)/m)!;
  const [, serviceNowUrl] = out.match(/^Simulated ServiceNow instance at (\S+)/m)!;
  const account = (name: string) => {
    const [, user, password] = out.match(new RegExp(`^ {4}${name} +(\\S+) +(\\S+)$`, 'm'))!;
    return { user: user!, password: password! };
  };

  // In the service: approvals of the three systems, and the one task of each carried out.
  expect(systemIds).toHaveLength(3);
  const admin = `Bearer ${adminToken}`;
  const approvals: { id: string }[][] = [];
  for (const systemId of systemIds) {
    const list = (await getJson(`${serviceUrl}/admin/systems/${systemId}/approvals`, admin)) as unknown;
    expect((list as unknown[]).length).toBeGreaterThan(0);
    approvals.push(list as { id: string }[]);
    const tasks = (await getJson(`${serviceUrl}/admin/systems/${systemId}/tasks`, admin)) as unknown;
    expect(tasks).toContainEqual(
      expect.objectContaining({
        type: 'approve',
        status: 'completed',
        encrypted: true,
        result: expect.objectContaining({ status: 'success' }),
      }),
    );
  }

  // The Jira worker took Jira's deliveries, and keeps its webhook; the ServiceNow worker took the business rules'
  // callouts, and keeps no webhook; the SAP worker has no push path.
  const [, jiraOperations, serviceNowOperations] = out.match(
    /^Operations endpoints \(\/metrics, \/healthz, \/readyz\): jira (\S+), sap \S+, servicenow (\S+)$/m,
  )!;
  const metrics = await request(`${jiraOperations}/metrics`);
  const text = await metrics.body.text();
  expect(
    Number(/approval_connector_push_deliveries_total\{outcome="accepted"\} (\d+)/.exec(text)?.[1]),
  ).toBeGreaterThan(0);
  expect(text).toMatch(
    /approval_connector_push_webhook_calls_total\{call="register",outcome="success"\} 1\b/,
  );
  const serviceNowMetrics = await (await request(`${serviceNowOperations}/metrics`)).body.text();
  expect(
    Number(
      /approval_connector_push_deliveries_total\{outcome="accepted"\} (\d+)/.exec(serviceNowMetrics)?.[1],
    ),
  ).toBeGreaterThan(0);
  expect(serviceNowMetrics).not.toMatch(
    /approval_connector_push_deliveries_total\{outcome="refused"\} [1-9]/,
  );
  expect(serviceNowMetrics).not.toMatch(/approval_connector_push_webhook_calls_total\{[^}]*\} [1-9]/);

  // In the simulated Jira, as the approver: their decision on the request.
  const jira = account(jiraApprover!);
  const answered = await getJson(
    `${jiraUrl}/rest/servicedeskapi/request/${jiraKey}/approval`,
    basic(jira.user, jira.password),
  );
  expect(answered.values).toContainEqual(
    expect.objectContaining({
      approvers: expect.arrayContaining([
        expect.objectContaining({
          approver: expect.objectContaining({ displayName: jiraApprover }),
          approverDecision: 'approved',
        }),
      ]),
    }),
  );

  // In the simulated SAP system, as the approver: the task completed, by them.
  const sap = account(sapApprover!);
  const approvalId = approvals[1]!.map(({ id }) => id).find((id) => id.split('~')[1] === sapTask)!;
  const origin = approvalId.split('~')[0];
  const task = await getJson(
    `${sapUrl}TaskCollection(SAP__Origin='${origin}',InstanceID='${sapTask}')?$format=json`,
    basic(sap.user, sap.password),
  );
  expect(task.d).toMatchObject({ InstanceID: sapTask, Status: 'COMPLETED', Processor: sap.user });

  // In the simulated ServiceNow instance, as the approver: their approval of the record, approved by them.
  const serviceNow = account(serviceNowApprover!);
  const mine = await getJson(
    `${serviceNowUrl}/api/now/table/sysapproval_approver?sysparm_display_value=all&sysparm_fields=document_id,state,sys_updated_by`,
    basic(serviceNow.user, serviceNow.password),
  );
  expect(mine.result).toContainEqual({
    document_id: expect.objectContaining({ display_value: serviceNowRecord }),
    state: { display_value: 'Approved', value: 'approved' },
    sys_updated_by: { display_value: serviceNow.user, value: serviceNow.user },
  });

  // In the console: each system's approvers' sign-ins, one click away on an action.
  const signIn = await request(`${serviceUrl}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: adminToken }),
  });
  expect(signIn.statusCode).toBe(200);
  await signIn.body.dump();
  const cookie = String(signIn.headers['set-cookie']).split(';', 1)[0]!;
  const signIns: string[] = [];
  for (const systemId of systemIds) {
    const system = await request(`${serviceUrl}/console/api/systems/${systemId}`, { headers: { cookie } });
    const { demoSignIns } = (await system.body.json()) as { demoSignIns: { username: string }[] };
    signIns.push(...demoSignIns.map(({ username }) => username));
  }
  expect(signIns).toEqual(expect.arrayContaining([jira.user, sap.user, serviceNow.user]));

  // The run's folder, with the connectors' key pairs, while it runs; nothing of it once it has stopped.
  const [runFolder] = madeIn(temporary);
  expect(runFolder).toMatch(/^approval-connector-kit-start-/);
  expect(readdirSync(join(temporary, runFolder!)).sort()).toEqual([
    'jira.json',
    'sap.json',
    'servicenow.json',
  ]);
  child.kill('SIGINT');
  const [code] = await once(child, 'exit');
  expect(code).toBe(0);
  expect(out).toMatch(/"msg":"stopped"/);
  expect(madeIn(temporary)).toEqual([]);
}, 90_000);

/** Runs the start's command line with `args` to its end, its output piped. */
async function startToEnd(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const ran = spawn(process.execPath, [...startArgs, ...args], {
    cwd: root,
    env: { ...process.env, APPROVAL_ADMIN_TOKEN: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = ran;
  let stdout = '';
  let stderr = '';
  ran.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  ran.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(ran, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

it('answers --help and a bad flag without building anything, listing flags as flags and variables as variables', async () => {
  // The console's page made stale: a start would build it, but neither of these is a start.
  const page = join(root, 'dist', 'console', 'app.js');
  const { atime, mtime } = statSync(page);
  utimesSync(page, atime, new Date(0));
  try {
    const help = await startToEnd(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm start \[-- options\]/);
    expect(help.stdout).toMatch(/^Environment variables .*\n {2}APPROVAL_ADMIN_TOKEN /m);
    const bogus = await startToEnd(['--bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.stdout).toBe('');
    expect(bogus.stderr.trimEnd().split('\n').at(-1)).toBe(
      'Invalid options of npm start: Unknown option `--bogus`; the known ones are `--port`, `--jira-port`, `--sap-port`, `--servicenow-port`, `--activity-ms`, `--no-demo`, `--help`',
    );
    expect(statSync(page).mtimeMs).toBe(0);
  } finally {
    utimesSync(page, atime, mtime);
  }
});

describe('a port in use', () => {
  async function taken(): Promise<{ port: number; close: () => void }> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, close: () => server.close() };
  }

  it.each([
    ['--servicenow-port', ['--port', '0', '--jira-port', '0', '--sap-port', '0']],
    ['--sap-port', ['--port', '0', '--jira-port', '0', '--servicenow-port', '0']],
    ['--jira-port', ['--port', '0', '--sap-port', '0', '--servicenow-port', '0']],
    ['--port', ['--jira-port', '0', '--sap-port', '0', '--servicenow-port', '0']],
  ])('is named in one line with %s, which changes it, and the start exits 1', async (flag, others) => {
    const { port, close } = await taken();
    try {
      const ran = await startToEnd([...others, flag, String(port), '--no-demo']);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toBe(
        `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with ${flag} (0 picks a free one)\n`,
      );
    } finally {
      close();
    }
  });
});

describe('npm start on a terminal', () => {
  const ROWS = 24;
  const COLUMNS = 80;

  it.skipIf(!CAN_RUN_ON_TERMINAL)(
    'ends its banner, on a screen of 80×24, with where to go, above the status lines: the log lines go to the file it names',
    async () => {
      const temporary = ownTemporaryFolder();
      const line = [process.execPath, ...startArgs, '--port', '0', '--jira-port', '0', '--sap-port', '0'];
      line.push('--servicenow-port', '0');
      const terminal = onTerminal([...line, '--activity-ms', '2000'], {
        cwd: root,
        env: { ...cleanEnv(), TMPDIR: temporary },
        columns: COLUMNS,
        rows: ROWS,
      });
      child = terminal.child;
      try {
        await terminal.until(/in the simulated Jira \(task succeeded\)/);
        await terminal.until(/in the simulated SAP \(task succeeded\)/);
        await terminal.until(/in the simulated ServiceNow \(task succeeded\)/);
        const screen = terminal.screen();
        // The banner, written at once (the terminal ends each line with \r\n): longer than the screen, its last lines
        // say again where to go, and they stay on the screen with the demo approver's lines and the status lines.
        const banner = linesBetween(screen, 'Reference backend listening on', 'Stop with Ctrl+C.');
        const [, consoleLink] = /^ {2}console: +(\S+)/m.exec(banner.join('\n'))!;
        const [, serviceUrl] = /^Reference backend listening on (\S+)/.exec(banner[0]!)!;
        expect(banner.slice(-4)).toEqual([
          `Console:   ${consoleLink}`,
          `Service:   ${serviceUrl} (tokens and approvers: above)`,
          `Log lines: ${join('.connector', 'start.log')} (tail -f it to follow them)`,
          'Stop with Ctrl+C.',
        ]);
        const demoLines = screen.match(
          /(Jira|SAP|ServiceNow): .* in the simulated (Jira|SAP|ServiceNow) \([^)]*\)/g,
        )!;
        expect(rowsOf([...banner.slice(-4), ...demoLines], COLUMNS) + 3).toBeLessThanOrEqual(ROWS);
        // No log line on the screen: they are in the file the banner names.
        expect(screen).not.toMatch(/INFO|"msg":/);
        const logFile = join(root, '.connector', 'start.log');
        await vi.waitFor(() => expect(readFileSync(logFile, 'utf8')).toMatch(/INFO.*sync run finished/), {
          timeout: 10_000,
        });
        expect(await terminal.interrupt()).toBe(0);
        expect(readFileSync(logFile, 'utf8')).toMatch(/INFO.*: stopped/);
        // The log file stays, for a look after the stop, until the next start replaces it; nothing else does.
        expect(madeIn(temporary)).toEqual([]);
      } finally {
        terminal.child.kill('SIGKILL');
      }
    },
    120_000,
  );
});
