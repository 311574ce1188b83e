/**
 * A command on a terminal of a given size, as a person runs it: util-linux's `script` runs it on a pseudo-terminal
 * of its own (its stdout a TTY, `stty` giving it the rows and columns), and types into it what is written to its
 * stdin (Ctrl+C). What the command wrote to the terminal is read as it comes.
 * @module
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { WORKER_VARIABLES } from '../../../src/worker/process/worker-config.js';
import { TSX } from './processes.js';

/** Whether commands can be run on a terminal here. */
export const CAN_RUN_ON_TERMINAL =
  process.platform === 'linux' && spawnSync('script', ['--version']).status === 0;

const CLI = fileURLToPath(new URL('../../../src/cli/connector.ts', import.meta.url));

/** `connector <args>`, as {@link onTerminal} takes it: from the sources, by the Node running the tests. */
export const connectorCommand = (args: readonly string[]) => [
  process.execPath,
  '--import',
  TSX,
  CLI,
  ...args,
];

/** This process's environment without the variables a `connector` command reads, and with `env`. */
export function cleanEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = { ...process.env };
  for (const name of [...WORKER_VARIABLES, 'APPROVAL_ADMIN_TOKEN', 'LOG_LEVEL', 'LOG_FORMAT']) {
    delete inherited[name];
  }
  return { ...inherited, ...env };
}

/** A command running on a terminal. */
export interface OnTerminal {
  child: ChildProcess;
  /** Everything written to the terminal so far, control sequences and all (lines end with \r\n). */
  screen(): string;
  /** Waits until what was written matches `pattern` (or holds it); throws if the command ends first. */
  until(pattern: RegExp | string): Promise<void>;
  /** Types Ctrl+C, and answers the exit code. */
  interrupt(): Promise<number | null>;
}

/** Runs `command` (words without spaces) on a terminal `columns` wide and `rows` high. */
export function onTerminal(
  command: readonly string[],
  {
    cwd,
    env,
    columns = 80,
    rows = 24,
  }: { cwd: string; env: NodeJS.ProcessEnv; columns?: number; rows?: number },
): OnTerminal {
  const child = spawn(
    'script',
    ['-qfec', `stty cols ${columns} rows ${rows}; exec ${command.join(' ')}`, '/dev/null'],
    { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => {
    screen += chunk.toString();
  });
  const exited = once(child, 'exit') as Promise<[number | null]>;
  return {
    child,
    screen: () => screen,
    until: async (pattern) => {
      const seen = () => (typeof pattern === 'string' ? screen.includes(pattern) : pattern.test(screen));
      while (!seen()) {
        if (child.exitCode !== null) throw new Error(`${command.join(' ')} ended early:\n${screen}`);
        await Promise.race([once(child.stdout, 'data'), exited]);
      }
    },
    interrupt: async () => {
      child.stdin.write('\u0003');
      return (await exited)[0];
    },
  };
}

/** The lines of `text` written between the line that starts with `first` and the one that starts with `last`, both in. */
export function linesBetween(text: string, first: string, last: string): string[] {
  const lines = stripVTControlCharacters(text).replaceAll('\r', '').split('\n');
  const start = lines.findIndex((line) => line.startsWith(first));
  const end = lines.findIndex((line, index) => index > start && line.startsWith(last));
  if (start === -1 || end === -1) throw new Error(`No lines from ${first} to ${last} in:\n${text}`);
  return lines.slice(start, end + 1);
}

/** How many rows `lines` take on a terminal `columns` wide, which wraps a longer line. */
export function rowsOf(lines: readonly string[], columns: number): number {
  return lines.reduce(
    (rows, line) => rows + Math.max(1, Math.ceil([...stripVTControlCharacters(line)].length / columns)),
    0,
  );
}
