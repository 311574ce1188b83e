import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CreateCommandIo, runCreateCommand } from '../../src/cli/commands/create.js';
import { listTemplates } from '../../src/cli/create/templates.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { packageRoot } from '../../src/internal/package-root.js';

const root = packageRoot()!;
const kit = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies: Record<string, string>;
};
const templates = listTemplates(join(root, 'templates'));

let work: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'connector-create-'));
});

afterEach(() => {
  rmSync(work, { recursive: true, force: true });
});

/** A terminal's input that a test types into, one answer at a time. */
class Keyboard extends PassThrough {
  readonly isTTY = true;
  setRawMode(): this {
    return this;
  }
}

interface Session {
  code: Promise<number>;
  stdout: () => string;
  stderr: () => string;
  /** Types `text` and Enter once the screen shows `prompt`. */
  answer(prompt: string | RegExp, text: string): Promise<void>;
  keyboard: Keyboard;
}

/** Runs `connector create` in `work`, on a terminal or not, with PATH and the environment given. */
function create(
  argv: string[],
  { terminal = false, env = {} }: { terminal?: boolean; env?: NodeJS.ProcessEnv } = {},
): Session {
  const keyboard = new Keyboard();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const stdin = terminal ? keyboard : Object.assign(new PassThrough(), { isTTY: false });
  const io: CreateCommandIo = {
    stdin,
    stdout,
    stderr,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    cwd: work,
  };
  let seen = 0;
  return {
    code: runCreateCommand(argv, io),
    stdout: () => out,
    stderr: () => err,
    keyboard,
    async answer(prompt, text) {
      for (;;) {
        const rest = out.slice(seen);
        const match = typeof prompt === 'string' ? rest.indexOf(prompt) : rest.search(prompt);
        if (match >= 0) {
          seen += match + 1;
          keyboard.write(`${text}\r`);
          return;
        }
        await new Promise((resolve) => stdout.once('data', resolve));
      }
    },
  };
}

/** Every file under `folder`, relative to it, `.git` left out. */
function filesIn(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1))
    .filter((file) => !file.startsWith('.git/'))
    .sort();
}

/** A package manager that only writes down where and how it was run, and exits with `code`. */
function fakePackageManager(name: string, code = 0): { env: NodeJS.ProcessEnv; calls: () => string[] } {
  const bin = join(work, `.bin-${name}`);
  mkdirSync(bin);
  const log = join(bin, 'calls.log');
  writeFileSync(join(bin, name), `#!/bin/sh\necho "$PWD $*" >> '${log}'\nexit ${code}\n`);
  chmodSync(join(bin, name), 0o755);
  return {
    env: { PATH: `${bin}${delimiter}${process.env.PATH}` },
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
  };
}

describe('connector create', () => {
  it('lists every folder of templates/ as a template, the default first', () => {
    const folders = readdirSync(join(root, 'templates')).filter((folder) => !folder.startsWith('_'));
    expect(templates.map((template) => template.name)).toEqual([
      'incremental',
      ...folders.filter((folder) => folder !== 'incremental').sort(),
    ]);
    expect(templates.map((template) => template.name)).toEqual(
      expect.arrayContaining(['incremental', 'snapshot']),
    );
    for (const template of templates) expect(template.description).not.toBe('');
  });

  // The blank templates: the base and a source of their own. A template made of an example holds the example's files.
  it.for(['incremental', 'snapshot'])(
    'creates a project from the %s template, with .gitignore restored and the kit’s versions',
    async (name) => {
      const session = create(['my-connector', '--template', name, '--no-install', '--no-git']);
      expect(await session.code).toBe(0);
      expect(session.stderr()).toBe('');
      const project = join(work, 'my-connector');
      expect(filesIn(project)).toEqual([
        '.dockerignore',
        '.env.example',
        '.gitignore',
        '.npmrc',
        'Dockerfile',
        'README.md',
        'package.json',
        'src/conformance.ts',
        'src/connector.ts',
        'src/main.ts',
        'src/source.ts',
        'test/conformance.test.ts',
        'test/connector.test.ts',
        'tsconfig.build.json',
        'tsconfig.json',
      ]);
      expect(readFileSync(join(project, '.gitignore'), 'utf8')).toContain('node_modules/');
      expect(readFileSync(join(project, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
      const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
      expect(manifest).toMatchObject({
        name: 'my-connector',
        type: 'module',
        engines: { node: kit.engines.node },
        dependencies: {
          'approval-connector-kit': `^${kit.version}`,
          // The range the kit supports: its peer dependency's, where it declares zod one.
          zod: kit.peerDependencies?.zod ?? kit.dependencies.zod,
        },
        devDependencies: {
          typescript: kit.devDependencies.typescript,
          vitest: kit.devDependencies.vitest,
          '@types/node': kit.devDependencies['@types/node'],
        },
      });
      expect(readFileSync(join(project, 'README.md'), 'utf8')).toMatch(/^# my-connector\n/);
      for (const file of filesIn(project)) {
        expect(readFileSync(join(project, file), 'utf8'), file).not.toContain('<%');
      }
      expect(session.stdout()).toContain(`Created ${project} from the ${name} template.`);
    },
  );

  it('refuses an unknown template, listing the known ones in its last line, below the usage, and writes nothing', async () => {
    const session = create(['my-connector', '--template', 'jria', '--no-install']);
    expect(await session.code).toBe(2);
    // The problem is the last line, where a terminal leaves it in sight, after the usage.
    const lines = session.stderr().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Usage: /);
    expect(lines.at(-1)).toContain(
      `Expected \`--template\` to be one of ${templates.map(({ name }) => `\`${name}\``).join(', ')}, got \`"jria"\` (string)`,
    );
    expect(readdirSync(work)).toEqual([]);
  });

  it('refuses a folder that is not empty, and leaves it as it was', async () => {
    mkdirSync(join(work, 'my-connector'));
    writeFileSync(join(work, 'my-connector', 'notes.txt'), 'mine');
    const session = create(['my-connector', '--no-install', '--no-git']);
    expect(await session.code).toBe(2);
    expect(session.stderr()).toMatch(/`.*my-connector` is not empty \(it holds notes\.txt\)/);
    expect(filesIn(join(work, 'my-connector'))).toEqual(['notes.txt']);
  });

  it('refuses a folder that is a file, and leaves it as it was', async () => {
    writeFileSync(join(work, 'my-connector'), 'mine');
    const session = create(['my-connector', '--no-install', '--no-git']);
    expect(await session.code).toBe(2);
    expect(session.stderr()).toMatch(/`.*my-connector` is a file, not a folder/);
    expect(readFileSync(join(work, 'my-connector'), 'utf8')).toBe('mine');
  });

  it('creates the project in an existing empty folder', async () => {
    mkdirSync(join(work, 'my-connector'));
    const session = create(['my-connector', '--no-install', '--no-git']);
    expect(await session.code).toBe(0);
    expect(filesIn(join(work, 'my-connector'))).toContain('src/connector.ts');
  });

  it('refuses a folder whose name cannot name a package, and writes nothing', async () => {
    const session = create(['My Connector', '--no-install', '--no-git']);
    expect(await session.code).toBe(2);
    expect(session.stderr()).toContain('`My Connector` cannot name an npm package');
    expect(readdirSync(work)).toEqual([]);
  });

  it('names the flag meant by a misspelt one, and writes nothing', async () => {
    const session = create(['my-connector', '--no-instal']);
    expect(await session.code).toBe(2);
    expect(session.stderr()).toContain('Unknown option `--no-instal`; did you mean `--no-install`?');
    expect(readdirSync(work)).toEqual([]);
  });

  it('installs the dependencies with npm when nothing says otherwise', async () => {
    const npm = fakePackageManager('npm');
    const session = create(['my-connector', '--no-git'], { env: npm.env });
    expect(await session.code).toBe(0);
    expect(npm.calls()).toEqual([`${join(work, 'my-connector')} install`]);
    expect(session.stdout()).toContain('npm test');
    expect(session.stdout()).toMatch(
      /npm run dev +# develop: the connector against a local backend and its console/,
    );
    expect(session.stdout()).not.toContain('npm install\n');
  });

  it('installs with the package manager that ran it, or the one --package-manager names', async () => {
    const pnpm = fakePackageManager('pnpm');
    const yarn = fakePackageManager('yarn');
    const env = {
      PATH: `${pnpm.env.PATH}${delimiter}${yarn.env.PATH}`,
      npm_config_user_agent: 'pnpm/9.12.0 npm/? node/v24.0.0 linux x64',
    };
    expect(await create(['by-agent', '--no-git'], { env }).code).toBe(0);
    expect(await create(['by-flag', '--no-git', '--package-manager', 'yarn'], { env }).code).toBe(0);
    expect(pnpm.calls()).toEqual([`${join(work, 'by-agent')} install`]);
    expect(yarn.calls()).toEqual([`${join(work, 'by-flag')} install`]);
  });

  it('exits 1 when the install fails, and keeps the project', async () => {
    const npm = fakePackageManager('npm', 3);
    const session = create(['my-connector', '--no-git'], { env: npm.env });
    expect(await session.code).toBe(1);
    expect(session.stderr()).toContain('npm install failed (exit code 3)');
    expect(filesIn(join(work, 'my-connector'))).toContain('src/connector.ts');
  });

  it('makes the project depend on the kit of --kit-tarball, by its absolute path; refuses a tarball not there', async () => {
    const tarball = join(work, 'approval-connector-kit-9.9.9.tgz');
    writeFileSync(tarball, '');
    const session = create([
      'from-tarball',
      '--kit-tarball',
      'approval-connector-kit-9.9.9.tgz',
      '--no-install',
      '--no-git',
    ]);
    expect(await session.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(work, 'from-tarball', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies['approval-connector-kit']).toBe(`file:${tarball}`);
    const missing = create(['not-made', '--kit-tarball', 'nowhere.tgz', '--no-install', '--no-git']);
    expect(await missing.code).toBe(2);
    expect(missing.stderr()).toContain("nowhere.tgz does not exist: give the kit's tarball");
    expect(existsSync(join(work, 'not-made'))).toBe(false);
  });

  it('runs no package manager with --no-install', async () => {
    const npm = fakePackageManager('npm');
    const session = create(['my-connector', '--no-install', '--no-git'], { env: npm.env });
    expect(await session.code).toBe(0);
    expect(npm.calls()).toEqual([]);
    expect(session.stdout()).toContain('npm install\n');
  });

  it('initialises a git repository, unless --no-git', async () => {
    expect(await create(['with-git', '--no-install']).code).toBe(0);
    expect(await create(['without-git', '--no-install', '--no-git']).code).toBe(0);
    expect(existsSync(join(work, 'with-git', '.git'))).toBe(true);
    expect(existsSync(join(work, 'without-git', '.git'))).toBe(false);
  });

  it('creates the project all the same when git is not installed, and says so', async () => {
    const session = create(['my-connector', '--no-install'], { env: { PATH: join(work, 'nothing-here') } });
    expect(await session.code).toBe(0);
    expect(session.stdout()).toContain('git was not found: no repository initialised.');
    expect(filesIn(join(work, 'my-connector'))).toContain('src/connector.ts');
  });

  it('initialises no repository inside another one', async () => {
    execFileSync('git', ['init', '--quiet'], { cwd: work });
    const session = create(['my-connector', '--no-install']);
    expect(await session.code).toBe(0);
    expect(existsSync(join(work, 'my-connector', '.git'))).toBe(false);
    expect(session.stdout()).toContain('Inside a git repository already');
  });
});

describe('connector create on a terminal', () => {
  // The templates as the prompt numbers them, whichever the kit ships.
  const choices = `1-${templates.length}`;
  const snapshot = String(templates.findIndex(({ name }) => name === 'snapshot') + 1);

  it('asks for the folder, the template, the install and git, and does what the answers say', async () => {
    const npm = fakePackageManager('npm');
    const session = create([], { terminal: true, env: npm.env });
    await session.answer('Where should the project go? (my-connector)', 'approvals');
    await session.answer(`Choose ${choices} (1)`, snapshot);
    await session.answer('Install the dependencies with npm? (Y/n)', 'n');
    await session.answer('Initialise a git repository? (Y/n)', '');
    expect(await session.code).toBe(0);
    expect(session.stdout()).toMatch(/1\. incremental +a blank connector/);
    expect(session.stdout()).toContain('Created');
    expect(session.stdout()).toContain('from the snapshot template.');
    expect(readFileSync(join(work, 'approvals', 'src', 'connector.ts'), 'utf8')).toContain('snapshot(');
    expect(existsSync(join(work, 'approvals', '.git'))).toBe(true);
    expect(npm.calls()).toEqual([]);
  });

  it('asks only what the flags leave open', async () => {
    const session = create(['my-connector', '--template', 'incremental', '--no-install'], { terminal: true });
    await session.answer('Initialise a git repository?', 'no');
    expect(await session.code).toBe(0);
    expect(session.stdout()).not.toContain('Which template?');
    expect(session.stdout()).not.toContain('Where should the project go?');
    expect(existsSync(join(work, 'my-connector', '.git'))).toBe(false);
  });

  it('asks again after an answer it cannot use', async () => {
    mkdirSync(join(work, 'taken'));
    writeFileSync(join(work, 'taken', 'notes.txt'), 'mine');
    const session = create(['--no-install', '--no-git'], { terminal: true });
    await session.answer('Where should the project go?', 'taken');
    await session.answer('is not empty', 'fresh');
    await session.answer(`Choose ${choices}`, String(templates.length + 1));
    await session.answer(`Answer a number from 1 to ${templates.length}`, 'snapshot');
    expect(await session.code).toBe(0);
    expect(readFileSync(join(work, 'fresh', 'src', 'connector.ts'), 'utf8')).toContain('snapshot(');
    expect(filesIn(join(work, 'taken'))).toEqual(['notes.txt']);
  });

  it('asks nothing with --yes', async () => {
    const session = create(['my-connector', '--yes', '--no-install', '--no-git'], { terminal: true });
    expect(await session.code).toBe(0);
    expect(session.stdout()).not.toContain('?');
    expect(readFileSync(join(work, 'my-connector', 'src', 'connector.ts'), 'utf8')).toContain('incremental(');
  });

  it('gives in its help the exit codes it exits with: 2 for bad input, 1 when cancelled', async () => {
    const help = create(['--help']);
    expect(await help.code).toBe(EXIT_CODES.done);
    expect(help.stdout()).toContain(`; ${EXIT_CODES.refused} for bad input or a refused folder`);
    expect(help.stdout()).toMatch(new RegExp(`; ${EXIT_CODES.failed} when\\s+cancelled`));
  });

  it('writes nothing when cancelled with Ctrl+C', async () => {
    const session = create([], { terminal: true });
    await session.answer('Where should the project go?', 'approvals');
    await session.answer(`Choose ${choices}`, '');
    session.keyboard.write('\x03');
    expect(await session.code).toBe(1);
    expect(session.stderr()).toContain('Cancelled: nothing was created.');
    expect(readdirSync(work)).toEqual([]);
  });

  it('writes nothing when the input ends (Ctrl+D)', async () => {
    const session = create([], { terminal: true });
    await session.answer('Where should the project go?', 'approvals');
    session.keyboard.end();
    expect(await session.code).toBe(1);
    expect(session.stderr()).toContain('Cancelled: nothing was created.');
    expect(readdirSync(work)).toEqual([]);
  });
});

describe('the create-connector package', () => {
  const manifest = JSON.parse(
    readFileSync(join(root, 'packages', 'create-connector', 'package.json'), 'utf8'),
  );

  it('is released with the kit: the same version, depending on that kit, on the same Node', () => {
    expect(manifest).toMatchObject({
      name: 'create-connector',
      version: kit.version,
      engines: kit.engines,
      // Exactly the kit released with it: `npm create connector@X` creates with the templates of kit X.
      dependencies: { 'approval-connector-kit': kit.version },
      bin: { 'create-connector': 'index.js' },
    });
    expect(manifest.files).toContain('index.js');
  });
});
