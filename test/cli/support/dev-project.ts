/**
 * `connector dev` in a process of its own, in a copy of the fixture project (`test/cli/fixtures/dev-project`), as a
 * developer runs it there: what it prints, the worker's process id from its log lines, and calls to the backend it
 * started.
 * @module
 */
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { request } from 'undici';
import { type CliProcess, spawnCli } from './processes.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/dev-project', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The admin token the loop is given, so that the tests can call the admin API. */
export const ADMIN_TOKEN = 'dev-command-test-admin-token';

/**
 * A copy of the fixture project in a new temporary folder, under `parent`. It imports the kit by its name, as a
 * project does: its node_modules holds the kit as a module that re-exports the kit's sources (the worker loads
 * them through tsx), and the kit's own zod.
 */
export function copyFixture(parent: string): string {
  const project = mkdtempSync(join(parent, 'project-'));
  cpSync(FIXTURE, project, { recursive: true });
  const kit = join(project, 'node_modules', 'approval-connector-kit');
  mkdirSync(kit, { recursive: true });
  writeFileSync(
    join(kit, 'package.json'),
    JSON.stringify({ name: 'approval-connector-kit', type: 'module', exports: { '.': './index.js' } }),
  );
  writeFileSync(
    join(kit, 'index.js'),
    `export * from '${pathToFileURL(join(ROOT, 'src', 'index.ts')).href}';\n`,
  );
  symlinkSync(realpathSync(join(ROOT, 'node_modules', 'zod')), join(project, 'node_modules', 'zod'), 'dir');
  return project;
}

/** A temporary folder for the tests' projects and data files. */
export function workFolder(): string {
  return mkdtempSync(join(tmpdir(), 'connector-dev-'));
}

/** A running `connector dev` and what it printed. */
export interface DevProcess extends CliProcess {
  /** Resolves with the first match of `pattern` in its stdout, once it has printed one. */
  printed(pattern: RegExp): Promise<RegExpMatchArray>;
  /** The process ids its workers logged, in the order they first logged. */
  workerPids(): number[];
  /** What the banner printed: the URLs and the tokens. */
  banner(): Promise<Banner>;
  /** An admin API call to its backend; resolves with the answer's JSON. */
  admin<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
}

/** What the start banner says. */
export interface Banner {
  serviceUrl: string;
  consoleLink: string;
  connectorToken: string;
  managementToken: string;
  systemId: string;
  operationsUrl: string;
}

/** Starts `connector dev --port 0 <args>` in `project`, the admin token {@link ADMIN_TOKEN}. */
export function startDev(project: string, args: readonly string[] = [], env: Record<string, string> = {}) {
  const dev = spawnCli(
    ['dev', '--port', '0', ...args],
    { APPROVAL_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
    { cwd: project },
  );
  const printed = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const match = dev.stdout().match(pattern);
      if (match !== null) return match;
      if (dev.child.exitCode !== null) {
        throw new Error(
          `connector dev exited ${dev.child.exitCode} before printing ${pattern}:\n${dev.stdout()}${dev.stderr()}`,
        );
      }
      await Promise.race([once(dev.child.stdout!, 'data'), dev.exited]);
    }
  };
  const banner = async (): Promise<Banner> => {
    await printed(/Stop with Ctrl\+C/);
    const field = (pattern: RegExp) => dev.stdout().match(pattern)?.[1] ?? '';
    return {
      serviceUrl: field(/service URL: +(\S+)/),
      consoleLink: field(/console: +(\S+)/),
      connectorToken: field(/connector token: +(\S+)/),
      managementToken: field(/management token: +(\S+)/),
      systemId: field(/system: +\S+ \(([^)]+)\)/),
      operationsUrl: field(/operations: +(http:\/\/[^/\s,]+)/),
    };
  };
  const handle: DevProcess = {
    ...dev,
    printed,
    banner,
    workerPids: () => [
      ...new Set(dev.lines().flatMap((line) => (typeof line.pid === 'number' ? [line.pid] : []))),
    ],
    admin: async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
      const { serviceUrl } = await banner();
      const answer = await request(`${serviceUrl}/admin${path}`, {
        method,
        headers: {
          authorization: `Bearer ${ADMIN_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await answer.body.text();
      if (answer.statusCode >= 300) throw new Error(`${method} ${path}: ${answer.statusCode} ${text}`);
      return JSON.parse(text) as T;
    },
  };
  return handle;
}

/** Whether a process of this id runs. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until `condition` holds, asking again every 50 ms; the test's own timeout bounds the wait. */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}
