/**
 * The `connector` command in processes of its own, as an operator runs it: the reference backend
 * (`connector backend`) and workers (`connector run`), each started from this repository's source with `--import
 * tsx/esm` by the Node running the tests. Every process started here is killed by {@link killAll}.
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { WORKER_VARIABLES } from '../../../src/worker/process/worker-config.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = fileURLToPath(new URL('../../../src/cli/connector.ts', import.meta.url));
// Found from here, so that a process started in another folder (a project of a test) loads it too. Its ESM hooks
// only: the kit, its tests' modules and a project's are ES modules, and without the CommonJS hooks each process
// starts on a sixth less CPU (the dependencies in CommonJS, pino's and prom-client's, load as Node loads them).
export const TSX = import.meta.resolve('tsx/esm');
const ADMIN_TOKEN = 'cli-test-admin-token';
const started = new Set<ChildProcess>();

/** A JSON log line. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A `connector` process and what it wrote. */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The JSON lines written to stdout so far. */
  lines(): LogLine[];
  /** The messages of those lines. */
  messages(): string[];
  /** Resolves with the exit code once the process has ended (`null` when a signal ended it). */
  exited: Promise<number | null>;
  /** The exit code, or `'still running'` when the process has not ended `ms` after the call. */
  exitWithin(ms: number): Promise<number | null | 'still running'>;
}

/**
 * Runs `connector <args>` in the repository's root, or in `cwd`. The environment is the test's own without any
 * variable a worker or the backend reads, plus `env`.
 */
export function spawnCli(
  args: readonly string[],
  env: Record<string, string> = {},
  { cwd = ROOT }: { cwd?: string } = {},
): CliProcess {
  const inherited = { ...process.env };
  for (const name of [...WORKER_VARIABLES, 'APPROVAL_ADMIN_TOKEN']) delete inherited[name];
  const child = spawn(process.execPath, ['--import', TSX, CLI, ...args], {
    cwd,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  // The last piece of the output may be a line still being written.
  const lines = () =>
    out
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    lines,
    messages: () => lines().map((line) => line.msg),
    exited,
    exitWithin: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          exited,
          new Promise<'still running'>((resolve) => {
            timer = setTimeout(resolve, ms, 'still running');
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Kills every process started here that still runs, but those `spared` (a backend that tests share). */
export function killAll(...spared: CliProcess[]): void {
  const kept = new Set(spared.map((process) => process.child));
  for (const child of started) {
    if (kept.has(child)) continue;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    started.delete(child);
  }
}

/** The reference backend in a process of its own, and the calls the tests make to it. */
export interface BackendProcess {
  url: string;
  process: CliProcess;
  /** An admin API call; resolves with the answer's JSON. */
  admin<T = unknown>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** A call of the Integration API (v2) with a connector token; resolves with the answer's JSON. */
  service<T = unknown>(
    method: 'GET' | 'PUT' | 'PATCH',
    path: string,
    token: string,
    body?: unknown,
  ): Promise<T>;
  /** Stops it with SIGTERM; resolves with its exit code. */
  close(): Promise<number | null>;
}

/** Starts `connector backend` on a free port, its store in memory. */
export async function startBackendProcess(): Promise<BackendProcess> {
  const backend = spawnCli(['backend', '--port', '0'], {
    APPROVAL_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
  });
  let url: string | undefined;
  while (url === undefined) {
    url = /listening on (http:\/\/\S+)/.exec(backend.stdout())?.[1];
    if (url !== undefined) break;
    if (backend.child.exitCode !== null) throw new Error(`the backend exited:\n${backend.stderr()}`);
    await Promise.race([once(backend.child.stdout!, 'data'), backend.exited]);
  }
  const call = async <T>(method: string, path: string, token: string, body: unknown): Promise<T> => {
    const answer = await request(`${url}${path}`, {
      method: method as 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.body.text();
    if (answer.statusCode >= 300) throw new Error(`${method} ${path}: ${answer.statusCode} ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  return {
    url,
    process: backend,
    admin: (method, path, body) => call(method, `/admin${path}`, ADMIN_TOKEN, body),
    service: (method, path, token, body) => call(method, path, token, body),
    close: async () => {
      backend.child.kill('SIGTERM');
      return backend.exited;
    },
  };
}

/**
 * Puts an open approval (schema `po`, approver ada) for each id in the tenant of the connector `token`, in batches of
 * 500, and registers the connector for approve tasks, so that tasks can be created for them.
 */
export async function putApprovals(
  backend: BackendProcess,
  token: string,
  ids: readonly string[],
): Promise<void> {
  for (let start = 0; start < ids.length; start += 500) {
    await backend.service('PUT', '/v2/rawapprovals', token, {
      approvals: ids.slice(start, start + 500).map((id) => ({
        id,
        schemaId: 'po',
        approver: 'ada',
        resolved: false,
        lastModified: '2026-05-01T09:00:00.000Z',
        data: {},
      })),
    });
  }
  await backend.service('PATCH', '/v2/connector', token, { taskTypes: ['approve'], authRequired: false });
}
