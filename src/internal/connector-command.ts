/**
 * How to start the kit's own `connector` command as a process of its own: for the commands that run a worker in
 * a child process (`connector dev`) and the conformance battery's process check.
 * @module
 */
import { join } from 'node:path';
import { packageRoot } from './package-root.js';

/**
 * The kit's own `connector` command with `args`: its build, or, when the kit runs from its sources (its own tests),
 * its sources through tsx's ES module hooks (the kit and the modules it runs are ES modules; without the CommonJS
 * hooks each process starts on about a sixth less CPU).
 */
export function connectorCommand(args: readonly string[]): { command: string; args: string[] } {
  // This module is itself inside the kit's folder.
  const root = packageRoot()!;
  const entry = import.meta.url.endsWith('.ts')
    ? ['--import', import.meta.resolve('tsx/esm'), join(root, 'src', 'cli', 'connector.ts')]
    : [join(root, 'dist', 'cli', 'connector.js')];
  return { command: process.execPath, args: [...entry, ...args] };
}
