import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { PushDelivery } from 'approval-connector-kit';
import { afterEach, expect, it } from 'vitest';
import { changedApprovals } from '../src/approvals.js';
import { ServiceNowClient } from '../src/client.js';
import { parseDelivery, verifyDelivery } from '../src/push.js';

// `npm run simulator`: the simulated instance in a process of its own. Run from the example's own folder, so that
// this works the same in a project made from it (`--import tsx` resolved from there).
const folder = fileURLToPath(new URL('..', import.meta.url));
const started: ChildProcess[] = [];

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function simulator(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts', ...args], {
    cwd: folder,
    // The push settings as each test gives them, none from this run's environment.
    env: { ...process.env, PUSH_PUBLIC_URL: '', PUSH_SECRET: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const printed = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const match = output.stdout.match(pattern);
      if (match !== null) return match;
      if (child.exitCode !== null)
        throw new Error(`the simulator ended early (${child.exitCode}): ${output.stderr}`);
      await once(child.stdout, 'data');
    }
  };
  return { child, output, printed };
}

it('prints its URL and users, serves its approvals to the integration user, and stops on SIGTERM', async () => {
  const { child, output, printed } = simulator(['--port', '0', '--seed', '3', '--activity-ms', '0']);

  const [, url] = await printed(/listening on (http:\/\/\S+)/);
  const [, username, password] = await printed(/integration user \(sync\): (\S+) \/ (\S+)/);
  await printed(/Stop with Ctrl\+C\./);
  expect(output.stdout).toMatch(/approver: nora\.ibsen \/ \S+ \(Nora Ibsen, nora\.ibsen@example\.com\)/);
  const client = new ServiceNowClient({ instanceUrl: url!, username: username!, password: password! });
  const read = [];
  for await (const approval of changedApprovals(client, undefined, {
    tables: ['change_request', 'sc_req_item'],
    pageSize: 100,
  })) {
    read.push(approval);
  }
  expect(read.length).toBeGreaterThan(0);

  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  expect(code).toBe(0);
  expect(output.stdout).toContain('stopped');
});

it('refuses an option that is not a whole number, and a push URL without its secret, saying which: exit code 2', async () => {
  const notANumber = simulator(['--activity-ms', 'soon']);
  const noSecret = simulator(['--port', '0'], { PUSH_PUBLIC_URL: 'http://127.0.0.1:9465/push' });
  // Both exits listened for at once: either may come first.
  const [[badNumber], [missingSecret]] = await Promise.all([
    once(notANumber.child, 'exit'),
    once(noSecret.child, 'exit'),
  ]);

  expect(badNumber).toBe(2);
  expect(notANumber.output.stderr).toContain('--activity-ms takes a whole number, got "soon"');
  expect(missingSecret).toBe(2);
  expect(noSecret.output.stderr).toContain('--push-secret or PUSH_SECRET');
});

it("calls out to the worker's push address with its secret, PUSH_PUBLIC_URL and PUSH_SECRET as .env.example sets them", async () => {
  const { promise: first, resolve: receive } = Promise.withResolvers<PushDelivery>();
  const worker = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receive({ body: Buffer.concat(chunks), headers: request.headers as Record<string, string> });
      response.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => worker.listen(0, '127.0.0.1', resolve));
  const secret = 'servicenow-example-push-secret';
  try {
    const { printed } = simulator(['--port', '0', '--activity-ms', '50'], {
      PUSH_PUBLIC_URL: `http://127.0.0.1:${(worker.address() as AddressInfo).port}/push`,
      PUSH_SECRET: secret,
    });
    await printed(/business rules posting to http:\/\/127\.0\.0\.1:\d+\/push\. Stop with Ctrl\+C\./);
    const delivery = await first;

    expect(verifyDelivery(delivery, secret)).toBe(true);
    expect(parseDelivery(delivery).sys_id).toMatch(/^[0-9a-f]{32}$/);
  } finally {
    worker.closeAllConnections();
    await new Promise<void>((resolve) => worker.close(() => resolve()));
  }
});

it('says in one line which port is in use and that --port changes it, and exits 1', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as AddressInfo;
  try {
    const { child, output } = simulator(['--port', String(port)]);
    expect((await once(child, 'exit'))[0]).toBe(1);
    expect(output.stderr).toBe(
      `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
    );
  } finally {
    taken.close();
  }
});
