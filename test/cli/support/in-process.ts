/**
 * A `connector` command run by its function in the test's own process, for what it does without starting anything
 * that outlives it (a command line, a file or a seed refused; a key ring written): the exit code it answers and what
 * it printed, as a process of its own would give them, without the second a process takes to start. That the
 * `connector` process exits with the code its command answers is shown by the tests that start one.
 * @module
 */
import { format } from 'node:util';
import { vi } from 'vitest';
import { WORKER_VARIABLES } from '../../../src/worker/process/worker-config.js';

/** How a command ended, and what it printed. */
export interface Refusal {
  code: number;
  stdout: string;
  stderr: string;
}

/** The variables the commands read (a worker's, `connector backend`'s): unset unless a test sets them. */
const READ = [...WORKER_VARIABLES, 'APPROVAL_ADMIN_TOKEN', 'LOG_LEVEL', 'LOG_FORMAT'];
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Runs `command` with `argv`, the variables it reads unset but for `env`, in the folder `cwd` (by default this
 * process's), as `spawnCli` gives a process of its own. A command that listens for the stop signals before it
 * refuses leaves its listeners behind, as a process that exits at once may: they are removed.
 */
export async function runInProcess(
  command: (argv: readonly string[]) => Promise<number>,
  argv: readonly string[],
  env: Record<string, string> = {},
  { cwd }: { cwd?: string } = {},
): Promise<Refusal> {
  for (const name of READ) vi.stubEnv(name, undefined);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const printed = { stdout: '', stderr: '' };
  const { log, error } = console;
  console.log = (...args: unknown[]) => {
    printed.stdout += `${format(...args)}\n`;
  };
  console.error = (...args: unknown[]) => {
    printed.stderr += `${format(...args)}\n`;
  };
  // Commands also write to the streams themselves (their usage and refusals).
  const writes = [
    vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
      printed.stdout += String(text);
      return true;
    }),
    vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
      printed.stderr += String(text);
      return true;
    }),
  ];
  const listening = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  const folder = process.cwd();
  try {
    if (cwd !== undefined) process.chdir(cwd);
    const code = await command(argv);
    return { code, ...printed };
  } finally {
    process.chdir(folder);
    for (const [signal, before] of listening) {
      for (const listener of process.listeners(signal)) {
        if (!before.includes(listener)) process.off(signal, listener);
      }
    }
    for (const write of writes) write.mockRestore();
    console.log = log;
    console.error = error;
    vi.unstubAllEnvs();
  }
}
