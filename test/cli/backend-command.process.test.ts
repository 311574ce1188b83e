import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runBackendCommand } from '../../src/cli/commands/backend.js';
import { runInProcess } from './support/in-process.js';
import { type CliProcess, killAll, spawnCli } from './support/processes.js';
import { CAN_RUN_ON_TERMINAL, cleanEnv, connectorCommand, onTerminal } from './support/terminal.js';

/** `connector <args>` in a process of its own, logging at info unless `env` says otherwise. */
function run(args: string[], env: Record<string, string> = {}): CliProcess {
  return spawnCli(args, { LOG_LEVEL: 'info', ...env });
}

async function waitFor(read: () => string, pattern: RegExp, child: ChildProcess): Promise<RegExpMatchArray> {
  for (;;) {
    const match = read().match(pattern);
    if (match) return match;
    if (child.exitCode !== null) throw new Error(`exited early with ${child.exitCode}`);
    await once(child.stdout!, 'data');
  }
}

describe('connector backend with the demo seed', () => {
  // One backend for these tests, in the order they run: the last stops it.
  let backend: CliProcess;
  let url: string;
  beforeAll(async () => {
    backend = run(['backend', '--port', '0', '--seed', 'examples/seed/demo.json']);
    [, url = ''] = await waitFor(
      backend.stdout,
      /Reference backend listening on (http:\/\/\S+)/,
      backend.child,
    );
  });
  afterAll(() => killAll());

  it('serves the demo seed, and prints its URL and tokens', async () => {
    expect(backend.stdout()).toContain('management token: demo-management-acme');
    expect(backend.stdout()).toContain('connector token: demo-connector-jira');
    const answer = await request(`${url}/v1/systems`, {
      headers: { authorization: 'Bearer demo-management-acme' },
    });
    expect(answer.statusCode).toBe(200);
    expect(await answer.body.json()).toHaveLength(2);
  });

  it('prints a console link that signs a browser in once', async () => {
    const [, link, token] = await waitFor(
      backend.stdout,
      /console: +(http:\/\/\S+\/console\/#login=(\S+))/,
      backend.child,
    );
    expect(link?.startsWith(`${url}/console/`)).toBe(true);
    const exchange = () =>
      request(`${url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
    const first = await exchange();
    expect(first.statusCode).toBe(200);
    expect(first.headers['set-cookie']).toMatch(/HttpOnly; SameSite=Strict/);
    await first.body.dump();
    const second = await exchange();
    expect(second.statusCode).toBe(401);
    await second.body.dump();
  });

  it('stops cleanly on SIGTERM; its log lines, at info, hold no request and no token', async () => {
    const [, token] = await waitFor(
      backend.stdout,
      /console: +http:\/\/\S+\/console\/#login=(\S+)/,
      backend.child,
    );
    backend.child.kill('SIGTERM');
    expect(await backend.exited).toBe(0);
    expect(backend.stdout()).toContain('"msg":"stopped"');
    expect(backend.stderr()).toBe('');
    const lines = backend
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    // Requests are logged at debug (see below), so that at info its lines do not drown a worker's.
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).not.toContain('request completed');
    // The management token sent is never logged; the login token is printed once, in the banner, never logged.
    expect(lines.filter((line) => line.includes('demo-management-acme'))).toEqual([]);
    expect(backend.stdout().split(token!).length).toBe(2);
  });
});

describe('connector backend', () => {
  afterEach(() => killAll());

  it('never prints an admin token that came from APPROVAL_ADMIN_TOKEN, in its banner or its logs', async () => {
    const token = 'chosen-admin-token-7f3a9c';
    const { child, stdout, stderr } = run(['backend', '--port', '0'], { APPROVAL_ADMIN_TOKEN: token });
    const [, url] = await waitFor(stdout, /Reference backend listening on (http:\/\/\S+)/, child);
    await waitFor(stdout, /Stop with Ctrl\+C/, child);
    expect(stdout()).toContain('Authorization: Bearer <APPROVAL_ADMIN_TOKEN>');
    // It is the admin token all the same.
    const answer = await request(`${url}/admin/faults`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.statusCode).toBe(200);
    await answer.body.dump();
    child.kill('SIGTERM');
    expect((await once(child, 'exit'))[0]).toBe(0);
    expect(stdout()).not.toContain(token);
    expect(stderr()).not.toContain(token);
  });

  it('prints a generated admin token, which opens the admin API; stops cleanly on SIGINT', async () => {
    const { child, stdout } = run(['backend', '--port', '0']);
    const [, url] = await waitFor(stdout, /Reference backend listening on (http:\/\/\S+)/, child);
    const [, token] = await waitFor(stdout, /admin: .* Authorization: Bearer (\S+)/, child);
    const answer = await request(`${url}/admin/faults`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.statusCode).toBe(200);
    await answer.body.dump();
    child.kill('SIGINT');
    expect((await once(child, 'exit'))[0]).toBe(0);
  });

  it('exits 2 with a readable message for an invalid seed or option', async () => {
    const bad = await runInProcess(runBackendCommand, ['--seed', 'package.json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^Invalid seed file package\.json: /);
    const port = await runInProcess(runBackendCommand, ['--port', 'eighty']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(
      /^Usage: connector backend [\s\S]*\n\nInvalid options of connector backend: Expected `--port` to be an integer from 0 to 65535, got `"eighty"` \(string\)\n$/,
    );
    const unknown = run(['nope']);
    expect((await once(unknown.child, 'exit'))[0]).toBe(2);
  });

  it('exits 2, printing its usage, when no command is given', async () => {
    const none = run([]);
    expect((await once(none.child, 'exit'))[0]).toBe(2);
    expect(none.stderr()).toMatch(/^Usage: connector <command>/);
  });

  it('exits 1 when the server cannot start: its port is taken, saying so in one line that names --port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const second = run(['backend', '--port', String(port)]);
      expect((await once(second.child, 'exit'))[0]).toBe(1);
      expect(second.stderr()).toBe(
        `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
      );
    } finally {
      taken.close();
    }
  });

  it('refuses an unknown flag with the nearest known one, rather than a bare parse error', async () => {
    const typo = await runInProcess(runBackendCommand, ['--prot', '8080']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^Usage: [\s\S]*\n\nInvalid options of connector backend: Unknown option `--prot`; did you mean `--port`\?\n$/,
    );
    const stray = await runInProcess(runBackendCommand, ['extra']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/\n\nInvalid options of connector backend: Unexpected argument `extra`/);
  });

  it('answers an unknown LOG_LEVEL with a readable message naming it, not a stack trace', async () => {
    const loud = await runInProcess(runBackendCommand, ['--port', '0'], { LOG_LEVEL: 'loud' });
    expect(loud.code).toBe(2);
    expect(loud.stderr).toMatch(
      /\n\nInvalid options of connector backend: Expected `LOG_LEVEL` to be one of `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`, got `"loud"` \(string\)\n/,
    );
    expect(loud.stdout).toBe('');
  });

  it('names APPROVAL_ADMIN_TOKEN, not adminToken, when it is too short, and never prints it', async () => {
    const token = 'short7';
    const short = await runInProcess(runBackendCommand, ['--port', '0'], { APPROVAL_ADMIN_TOKEN: token });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(
      /\n\nInvalid options of connector backend: Expected `APPROVAL_ADMIN_TOKEN` to be a string of at least 8 characters, got a string \(not shown: it is secret\)\n/,
    );
    expect(short.stderr).not.toContain(token);
    expect(short.stdout).toBe('');
  });

  it('logs each request at debug (at info, none: see above), its lines without headers', async () => {
    const lines = async (level: string) => {
      const { child, stdout, stderr } = run(['backend', '--port', '0', '--seed', 'examples/seed/demo.json'], {
        LOG_LEVEL: level,
      });
      const [, url] = await waitFor(stdout, /Reference backend listening on (http:\/\/\S+)/, child);
      const answer = await request(`${url}/v1/systems`, {
        headers: { authorization: 'Bearer demo-management-acme' },
      });
      await answer.body.dump();
      child.kill('SIGTERM');
      await once(child, 'exit');
      expect(stderr()).toBe('');
      return stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; req?: { url: string } });
    };
    const debug = await lines('debug');
    expect(debug.find((line) => line.msg === 'incoming request')).toMatchObject({
      level: 20,
      req: { url: '/v1/systems' },
    });
    expect(debug.find((line) => line.msg === 'request completed')).toMatchObject({ level: 20 });
    // Request lines carry no headers, so no token.
    expect(JSON.stringify(debug)).not.toContain('demo-management-acme');
  });

  it.skipIf(!CAN_RUN_ON_TERMINAL)(
    'prints readable log lines on a terminal, as connector run and connector dev do there',
    async () => {
      const terminal = onTerminal(connectorCommand(['backend', '--port', '0']), {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        env: cleanEnv({ LOG_LEVEL: 'info' }),
      });
      try {
        await terminal.until(/Stop with Ctrl\+C/);
        expect(await terminal.interrupt()).toBe(0);
        const screen = stripVTControlCharacters(terminal.screen());
        expect(screen).toMatch(/^\[[\d:.]+\] INFO: stopped\r?$/m);
        expect(screen).not.toContain('"msg":');
      } finally {
        terminal.child.kill('SIGKILL');
      }
    },
  );

  it('prints its log lines as LOG_FORMAT says: readable ones in a pipe too, with pretty', async () => {
    const { child, stdout } = run(['backend', '--port', '0'], { LOG_FORMAT: 'pretty' });
    await waitFor(stdout, /Stop with Ctrl\+C/, child);
    child.kill('SIGTERM');
    expect((await once(child, 'exit'))[0]).toBe(0);
    // No colours: the pipe is no terminal.
    expect(stdout()).toMatch(/^\[[\d:.]+\] INFO: stopped$/m);
    expect(stdout()).not.toContain('"msg":');
  });

  it('prints its usage with --help', async () => {
    const help = await runInProcess(runBackendCommand, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'Usage: connector backend [--port N] [--host HOST] [--data FILE] [--seed FILE]',
    );
  });
});
