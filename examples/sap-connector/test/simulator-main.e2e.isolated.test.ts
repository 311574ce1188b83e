import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { SapInboxClient } from '../src/client.js';

// Run from the example's own folder, so that this works the same in a project generated from it: `--import tsx`
// is resolved from there (up to the repository's node_modules here, the project's own there).
const folder = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function run(args: string[]): { child: ChildProcess; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'simulator/main.ts', ...args], {
    cwd: folder,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return { child, stdout: () => out, stderr: () => err };
}

async function waitFor(read: () => string, pattern: RegExp, child: ChildProcess): Promise<RegExpMatchArray> {
  for (;;) {
    const match = read().match(pattern);
    if (match) return match;
    if (child.exitCode !== null) throw new Error(`exited early with ${child.exitCode}`);
    await once(child.stdout!, 'data');
  }
}

it('runs on its own, prints its URL and users, serves the inbox with them, and stops cleanly on SIGTERM', async () => {
  const { child, stdout } = run(['--port', '0', '--seed', '3', '--interval', '0']);

  const [, serviceUrl] = await waitFor(stdout, /listening on (http:\/\/\S+)/, child);
  const [, username, password] = await waitFor(stdout, /technical user \(sync\): (\S+) \/ (\S+)/, child);
  await waitFor(stdout, /Stop with Ctrl\+C/, child);
  expect(stdout()).toMatch(/approver: AMILLER \/ \S+ \(Anna Miller, anna\.miller@example\.com\)/);
  const client = new SapInboxClient({ serviceUrl: serviceUrl as string });
  const open = [];
  for await (const task of client.openTasks({
    credentials: { username: username as string, password: password as string },
    signal: AbortSignal.timeout(10_000),
  })) {
    open.push(task);
  }
  expect(open).toHaveLength(12);

  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  expect(code).toBe(0);
  expect(stdout()).toContain('stopped');
});

it('refuses an option that is not a whole number, saying which', async () => {
  const { child, stderr } = run(['--interval', 'soon']);

  const [code] = await once(child, 'exit');

  expect(code).toBe(2);
  expect(stderr()).toContain('--interval takes a whole number, got "soon"');
});

it('says in one line which port is in use and that --port changes it, and exits 1', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as AddressInfo;
  try {
    const { child, stderr } = run(['--port', String(port)]);
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr()).toBe(
      `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
    );
  } finally {
    taken.close();
  }
});
