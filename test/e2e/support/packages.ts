import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, join, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { type KitPackage, scaffold } from '../../../src/cli/create/scaffold.js';
import { listTemplates } from '../../../src/cli/create/templates.js';
import { unsupportedNodeMessage } from '../../../src/internal/node-version.js';

// The packages as a user gets them: packed from what a fresh clone holds, as `npm publish` would.
//
// Packing builds the kit, and installing a project fetches and unpacks a few hundred packages: the costliest steps
// of the suite. So a test file that needs the packed packages does not pack them itself: it asks for
// `packedPackages()`, which packs them once per test run, whichever file asks first, and answers the same tarballs
// to every file. A test of a generated project starts from `installedForTemplates()`, one install of everything the
// templates' projects depend on, made once per run: `linkNodeModules` gives the project a copy of it, and the
// project's own `npm install` then finds everything in place.

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

/** Options for npm that keep an install quiet and off the network when its cache has what it needs. */
export const QUIET_INSTALL = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'] as const;

const made = new Map<string, Promise<unknown>>();

/**
 * Makes something once per test run, whichever test file asks first, and answers it to every caller, in this file
 * and in the others (which run in processes of their own, maybe at the same time). The first caller makes it with
 * `make`, in a folder of its own that lasts as long as the run (`runFolder`, test/setup/run-folder.ts); the others
 * wait for it. What `make` answers must survive JSON; when it throws, every caller gets its message.
 */
export function runOnce<T>(name: string, make: (folder: string) => Promise<T>): Promise<T> {
  const known = made.get(name);
  if (known !== undefined) return known as Promise<T>;
  const making = makeOrWait(name, make);
  made.set(name, making);
  return making;
}

async function makeOrWait<T>(name: string, make: (folder: string) => Promise<T>): Promise<T> {
  const runFolder = inject('runFolder');
  const folder = join(runFolder, name);
  const outcome = join(runFolder, `${name}.json`);
  try {
    // Making a folder succeeds for one caller only: that one makes the thing.
    mkdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    while (!existsSync(outcome)) await sleep(100);
    const answer = JSON.parse(readFileSync(outcome, 'utf8')) as { value: T } | { error: string };
    if ('error' in answer)
      throw new Error(`${name} could not be made, by another test file:\n${answer.error}`);
    return answer.value;
  }
  let answer: { value: T } | { error: string };
  try {
    answer = { value: await make(folder) };
  } catch (error) {
    answer = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  // Written whole, then renamed: a waiting caller never reads half of it.
  writeFileSync(`${outcome}.partial`, JSON.stringify(answer));
  renameSync(`${outcome}.partial`, outcome);
  if ('error' in answer) throw new Error(answer.error);
  return answer.value;
}

/** The tarballs of the kit and of create-connector, packed as {@link pack} packs them. */
export interface PackedPackages {
  kit: string;
  createConnector: string;
}

/** The kit and create-connector, packed once per test run (see {@link runOnce}); the tarballs must not be changed. */
export function packedPackages(): Promise<PackedPackages> {
  return runOnce('packed', async (folder) => {
    const [kit, createConnector] = await pack(folder, ['.', 'packages/create-connector']);
    return { kit: kit!, createConnector: createConnector! };
  });
}

/**
 * A folder whose node_modules holds, installed from their tarballs, the kit and create-connector, and every package
 * a project of any template depends on, at the range its package.json asks for: installed once per test run (see
 * {@link runOnce}), to be copied into projects with {@link linkNodeModules}, never changed in place.
 */
export function installedForTemplates(): Promise<string> {
  return runOnce('installed-for-templates', async (folder) => {
    const { kit, createConnector } = await packedPackages();
    const dependencies: Record<string, string> = {};
    const kitPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as KitPackage;
    const templatesFolder = join(root, 'templates');
    for (const template of listTemplates(templatesFolder)) {
      // The package.json a project of the template gets, as the scaffolder writes it.
      const target = join(folder, 'projects', template.name);
      scaffold({ target, name: template.name, template, templatesFolder, kit: kitPackage });
      const project = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as KitPackage;
      Object.assign(dependencies, project.dependencies, project.devDependencies);
    }
    dependencies[kitPackage.name] = `file:${kit}`;
    dependencies['create-connector'] = `file:${createConnector}`;
    const installed = join(folder, 'installed');
    mkdirSync(installed);
    writeFileSync(
      join(installed, 'package.json'),
      JSON.stringify({ name: 'installed-for-templates', private: true, dependencies }),
    );
    await succeed('npm', ['install', ...QUIET_INSTALL], installed);
    return installed;
  });
}

/**
 * Gives `project` a node_modules that is a copy of `installed`'s, its files hard links to the same ones (so it
 * costs neither time nor space): an `npm install` in the project then finds in place every package it already
 * holds, and only adds, replaces or removes what the project's package.json asks otherwise. npm replaces a package
 * by writing new files, never by writing into the old ones, so the projects and `installed` stay apart; npm's own
 * record of the folder (`.package-lock.json`), which it does rewrite, is not copied.
 */
export function linkNodeModules(installed: string, project: string): void {
  const copy = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) copy(source, target);
      else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
      else if (entry.name !== '.package-lock.json') linkSync(source, target);
    }
  };
  copy(join(installed, 'node_modules'), join(project, 'node_modules'));
}

/**
 * Installs the packed packages named in `which` into `project` from their tarballs, as a user would: on a copy of
 * {@link installedForTemplates} (see {@link linkNodeModules}), so that npm finds all but them in place.
 */
export async function installPacked(
  project: string,
  which: readonly (keyof PackedPackages)[],
  env?: NodeJS.ProcessEnv,
): Promise<void> {
  const installed = await installedForTemplates();
  const packed = await packedPackages();
  linkNodeModules(installed, project);
  await succeed('npm', ['install', ...which.map((name) => packed[name]), ...QUIET_INSTALL], project, env);
}
