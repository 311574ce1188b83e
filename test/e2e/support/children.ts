/**
 * Processes a test starts and must not outlive it. A test that times out never reaches its own `finally`: what it
 * started is killed once it has finished, however it finished.
 * @module
 */
import { type ChildProcessByStdio, type SpawnOptions, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { onTestFinished } from 'vitest';

/**
 * `spawn` with no input and its output piped, killed (SIGKILL) when the current test finishes if it still runs then.
 * Call it inside a test.
 */
export function spawnForTest(
  command: string,
  args: readonly string[],
  options: Omit<SpawnOptions, 'stdio'>,
): ChildProcessByStdio<null, Readable, Readable> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}
