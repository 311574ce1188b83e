import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { root, run, succeed } from './support/packages.js';
import { env } from './support/template-project.js';

// `npm run try`, as the README tells a contributor to run it, from a folder outside the clone: the packages packed
// from this clone, a project created by create-connector from its tarball, the kit installed from the kit's.

let work: string;
let outcome: Awaited<ReturnType<typeof run>>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'try-'));
  // npm's cache holds every package the kit and a project depend on (the other tests of packed packages install
  // them first): taken from there rather than the network.
  outcome = await run(
    'npm',
    ['run', 'try', '--prefix', root, '--', 'tried', '--template', 'snapshot', '--no-git', '--yes'],
    { cwd: work, env: { ...env, npm_config_prefer_offline: 'true' } },
  );
}, 600_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, 120_000);

it('creates a project in the folder it runs in, depending on the kit packed from this clone, installed', async () => {
  expect(outcome.code, outcome.stderr).toBe(0);
  const project = join(work, 'tried');
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const kit = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const tarball = join(root, '.connector', 'try', 'kit', `${kit.name}-${kit.version}.tgz`);
  expect(manifest.dependencies[kit.name]).toBe(`file:${tarball}`);
  expect(existsSync(tarball)).toBe(true);
  // Installed from it, by the install create-connector ran: the project builds against it.
  const installed = JSON.parse(
    readFileSync(join(project, 'node_modules', kit.name, 'package.json'), 'utf8'),
  ) as { version: string };
  expect(installed.version).toBe(kit.version);
  await succeed('npm', ['run', 'build'], project, env);
  expect(existsSync(join(project, 'dist', 'connector.js'))).toBe(true);
  // create-connector ended as it ends a project created: with the next steps.
  expect(outcome.stdout).toContain('Next:');
}, 300_000);
