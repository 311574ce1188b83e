import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, expect, it } from 'vitest';

// `npm start` as a new user runs it, in a process of its own: its script's command line from package.json (the
// kit is built by vitest's global setup, as `prestart` builds it), on free ports, until its lines say that a task
// was carried out in each simulated system; then checked from outside, over HTTP, and stopped with Ctrl+C.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scripts = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts as {
  start: string;
};
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

it('runs the backend, both simulators and both connectors, and carries out a task in each system', async () => {
  const [command, ...args] = scripts.start.split(' ');
  expect(command).toBe('node');
  child = spawn(
    process.execPath,
    [...args, '--port', '0', '--jira-port', '0', '--sap-port', '0', '--activity-ms', '2000'],
    {
      cwd: root,
      env: { ...process.env, LOG_FORMAT: 'json', LOG_LEVEL: 'info', APPROVAL_ADMIN_TOKEN: undefined },
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
  // Where to look, the console's link first.
  const [, serviceUrl] = out.match(/^Reference backend listening on (\S+)$/m)!;
  expect(out.indexOf(`console:  ${serviceUrl}/console/#login=`)).toBeLessThan(
    out.indexOf('connector token:'),
  );
  const [, adminToken] = out.match(/Authorization: Bearer (\S+)/)!;
  const systemIds = [...out.matchAll(/^ {2}system: .* \(([0-9a-f-]{36})\) of Example$/gm)].map((m) => m[1]!);
  const [, jiraUrl] = out.match(/^Simulated Jira Service Management at (\S+)/m)!;
  const [, sapUrl] = out.match(/^Simulated SAP system \(My Inbox\) at (\S+)/m)!;
  const account = (name: string) => {
    const [, user, password] = out.match(new RegExp(`^ {4}${name} +(\\S+) +(\\S+)$`, 'm'))!;
    return { user: user!, password: password! };
  };

  // In the service: approvals of both systems, and the one task of each carried out.
  expect(systemIds).toHaveLength(2);
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
  expect(signIns).toEqual(expect.arrayContaining([jira.user, sap.user]));

  child.kill('SIGINT');
  const [code] = await once(child, 'exit');
  expect(code).toBe(0);
  expect(out).toMatch(/"msg":"stopped"/);
}, 90_000);
