import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unsupportedNodeMessage } from '../../../src/internal/node-version.js';

// The packages as a user gets them: packed from what a fresh clone holds, as `npm publish` would.

/** The repository's root. */
export const root = fileURLToPath(new URL('../../..', import.meta.url));

/** How a command ended. */
export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, with no input, and collects what it printed. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a command that must succeed, and answers what it printed on stdout; a failure throws with its output. */
export async function succeed(
  command: string,
  args: readonly string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  const outcome = await run(command, args, { cwd, ...(env === undefined ? {} : { env }) });
  if (outcome.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${outcome.code}:\n${outcome.stderr}${outcome.stdout}`,
    );
  }
  return outcome.stdout;
}

/**
 * Packs packages of this repository (`.` for the kit, `packages/create-connector`) into `destination`, from a copy
 * of what a fresh clone holds (tracked files and new ones not ignored, so no `dist`) with the installed
 * dependencies, so that a `prepack` runs as it would on a release. Answers the tarballs' paths, in the same order.
 */
export async function pack(destination: string, packageDirs: readonly string[]): Promise<string[]> {
  const clone = join(destination, 'clone');
  const files = (await succeed('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root))
    .split('\0')
    .filter((file) => file !== '' && file.split('/')[0] !== 'node_modules' && existsSync(join(root, file)));
  for (const file of files) {
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(root, file), join(clone, file));
  }
  symlinkSync(realpathSync(join(root, 'node_modules')), join(clone, 'node_modules'), 'dir');

  const tarballs: string[] = [];
  for (const [index, packageDir] of packageDirs.entries()) {
    // npm prints the prepack build's output too, so each tarball is found in a folder of its own.
    const packed = join(destination, 'packed', String(index));
    mkdirSync(packed, { recursive: true });
    await succeed('npm', ['pack', '--pack-destination', packed], join(clone, packageDir));
    const [tarball] = readdirSync(packed);
    if (tarball === undefined) throw new Error(`npm pack of ${packageDir} wrote no tarball`);
    tarballs.push(join(packed, tarball));
  }
  return tarballs;
}

/** The files a tarball holds, relative to its package folder. */
export async function filesOf(tarball: string): Promise<string[]> {
  return (await succeed('tar', ['-tzf', tarball], dirname(tarball)))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^package\//, ''));
}

/** A Node.js on PATH (outside any node_modules/.bin, where npm puts the project's own) older than the kit needs. */
export async function findOlderNode(): Promise<{ path: string; version: string } | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || dir.split(sep).includes('node_modules')) continue;
    const path = join(dir, 'node');
    if (!existsSync(path)) continue;
    const { stdout } = await run(path, ['-p', 'process.versions.node'], { cwd: root });
    const version = stdout.trim();
    if (version !== '' && unsupportedNodeMessage(version) !== undefined) return { path, version };
  }
  return undefined;
}
