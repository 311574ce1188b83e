import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE } from '../../src/cli/create/templates.js';
import { MINIMUM_NODE_VERSION, unsupportedNodeMessage } from '../../src/internal/node-version.js';
import { findOlderNode, run, succeed } from './support/packages.js';
import { copyProject, createdProject } from './support/template-project.js';

// A generated project, installed and built on a supported Node.js, then used with an older one first on PATH, as a
// machine with several does: every way of running it says which Node it found and which it needs, and nothing else.

const older = await findOlderNode();
// The environment of a shell, not of this test run: no npm_* variables of the npm that started it.
const shell = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$)/i.test(name)),
);
const supported = { ...shell, PATH: `${dirname(process.execPath)}${delimiter}${shell.PATH}` };

let work: string;
let project: string;

beforeAll(async () => {
  if (older === undefined) return;
  // A copy of the default template's project, created by the packed create-connector and installed once per run
  // for the template's own tests (test/e2e/templates/).
  const created = await createdProject(DEFAULT_TEMPLATE);
  work = mkdtempSync(join(tmpdir(), 'older-node-project-'));
  project = copyProject(created, work);
  await succeed('npm', ['run', 'build'], project, supported);
}, 300_000);

// Removing an installed project's node_modules takes a while on a busy machine.
afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, 120_000);

describe.skipIf(older === undefined)(`a generated project on Node.js ${older?.version}`, () => {
  const env = () => ({ ...shell, PATH: `${dirname(older!.path)}${delimiter}${shell.PATH}` });

  it.for(['npm test', 'npm run dev', 'npm start', 'node dist/main.js'])(
    '%s prints the kit’s message first, with no stack trace, and exits 1',
    async (commandLine) => {
      const [command, ...args] = commandLine.split(' ');
      const outcome = await run(command!, args, { cwd: project, env: env() });
      expect(outcome.code).toBe(1);
      const lines = outcome.stderr.split('\n').filter((line) => line.trim() !== '');
      expect(lines[0]).toBe(unsupportedNodeMessage(older!.version, older!.path));
      // Whatever npm adds after it names the script that failed: no stack, no error of a tool or dependency.
      expect(outcome.stderr).not.toMatch(/^\s+at |Error:|node:internal/m);
      expect(outcome.stdout).not.toMatch(/RUN|vitest|listening/i);
    },
  );

  it('is refused by npm install, which engines and engine-strict in .npmrc make check the Node', async () => {
    const outcome = await run('npm', ['install', '--offline', '--no-audit', '--no-fund'], {
      cwd: project,
      env: env(),
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain('EBADENGINE');
    expect(outcome.stderr).toContain(`Required: {"node":">=${MINIMUM_NODE_VERSION}"}`);
  });
});
