import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTemplates } from '../../src/cli/create/templates.js';
import { MINIMUM_NODE_VERSION } from '../../src/internal/node-version.js';
import { findOlderNode, installPacked, root, run, succeed } from './support/packages.js';
import { env } from './support/template-project.js';

// create-connector and the kit as a user gets them: packed, installed from their tarballs. A project of each
// template is made, installed, tested, built, run and developed by the test files of that template (test/e2e/templates/).

const templates = listTemplates(join(root, 'templates')).map((template) => template.name);

let tools: string;

beforeAll(async () => {
  tools = mkdtempSync(join(tmpdir(), 'create-connector-'));
  writeFileSync(join(tools, 'package.json'), JSON.stringify({ name: 'tools', private: true }));
  await installPacked(tools, ['kit', 'createConnector'], env);
}, 240_000);

afterAll(() => {
  if (tools !== undefined) rmSync(tools, { recursive: true, force: true });
});

describe('create-connector, installed from its tarball', () => {
  // One command a test: each is an npm of its own, slow to start.
  it('runs as npm create connector, with the flags given after the folder', async () => {
    await succeed(
      'npm',
      [
        'create',
        'connector',
        '--offline',
        '--',
        'by-npm-create',
        '--template',
        'snapshot',
        '--no-install',
        '--no-git',
      ],
      tools,
      env,
    );
    expect(readFileSync(join(tools, 'by-npm-create', 'src', 'connector.ts'), 'utf8')).toContain('snapshot(');
  });

  it('runs as npx create-connector', async () => {
    await succeed('npx', ['--offline', 'create-connector', 'by-npx', '--no-install', '--no-git'], tools, env);
    expect(readFileSync(join(tools, 'by-npx', 'src', 'connector.ts'), 'utf8')).toContain('incremental(');
  });

  it('passes on the scaffolder’s refusal and its exit code', async () => {
    const outcome = await run(
      join(tools, 'node_modules', '.bin', 'create-connector'),
      ['refused', '--template', 'nope'],
      { cwd: tools, env },
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(
      `Expected \`--template\` to be one of ${templates.map((name) => `\`${name}\``).join(', ')}`,
    );
    expect(existsSync(join(tools, 'refused'))).toBe(false);
  });

  it('says on an older Node.js which it found and which it needs, and creates nothing', async (context) => {
    const older = await findOlderNode();
    context.skip(older === undefined, `no Node.js older than ${MINIMUM_NODE_VERSION} on PATH`);
    // As npx runs it: the bin's `#!/usr/bin/env node` finds the older Node first on PATH.
    const outcome = await run(join(tools, 'node_modules', '.bin', 'create-connector'), ['too-old', '--yes'], {
      cwd: tools,
      env: { ...env, PATH: `${dirname(older!.path)}${delimiter}${env.PATH}` },
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(
      `needs Node.js ${MINIMUM_NODE_VERSION} or newer, but this is Node.js ${older!.version}`,
    );
    expect(existsSync(join(tools, 'too-old'))).toBe(false);
  });
});

describe('the templates', () => {
  it('are each tested end to end from the packed packages, in test files of their own', () => {
    expect(readdirSync(join(root, 'test', 'e2e', 'templates')).sort()).toEqual(
      templates
        .flatMap((template) => [`${template}.process.test.ts`, `${template}.dev.process.test.ts`])
        .sort(),
    );
  });
});
