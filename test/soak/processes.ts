/**
 * The soak's child processes: each a TypeScript entry point of this repository run by the Node running this code
 * (the project's own, under npm scripts) with `--import tsx/esm`: the ES module hooks only, as each entry point is one.
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEPT_OUTPUT = 64 * 1024;

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child process and what it wrote. */
export interface Child {
  readonly process: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exit: Promise<Exit>;
  /** The last 64 KiB it wrote to stdout and stderr, interleaved. */
  output(): string;
}

/** Runs `script` (a path from the repository's root) with `args`, in the repository's root, with `env` added. */
export function spawnScript(script: string, args: readonly string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx/esm', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 2 * KEPT_OUTPUT) output = output.slice(-KEPT_OUTPUT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return { process: child, exit, output: () => output.slice(-KEPT_OUTPUT) };
}

/** Resolves with the first match of `pattern` in what `child` writes; rejects if it exits first. */
export async function waitForOutput(child: Child, pattern: RegExp): Promise<RegExpMatchArray> {
  for (;;) {
    const match = child.output().match(pattern);
    if (match !== null) return match;
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      throw new Error(`the process exited before writing ${pattern}:\n${child.output()}`);
    }
    await Promise.race([once(child.process.stdout!, 'data'), child.exit]);
  }
}

/** How `exit` ended, or `undefined` when it has not within `ms` milliseconds. */
export async function exitWithin(exit: Promise<Exit>, ms: number): Promise<Exit | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([exit, late]);
  } finally {
    clearTimeout(timer);
  }
}
