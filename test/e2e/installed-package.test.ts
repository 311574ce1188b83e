import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The kit as a user gets it: packed from what a fresh clone holds, installed into a new project from the tarball.

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
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

async function succeed(command: string, args: readonly string[], cwd: string): Promise<string> {
  const outcome = await run(command, args, { cwd });
  if (outcome.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${outcome.code}:\n${outcome.stderr}${outcome.stdout}`,
    );
  }
  return outcome.stdout;
}

// A connector as a user would write it against the installed package, and the reference backend from it.
const CONNECTOR_SCRIPT = `
import { Connector, MemoryKeyStore } from 'approval-connector-kit';
import { startReferenceBackend } from 'approval-connector-kit/backend';

class OneApproval extends Connector {
  tasks = {};
  handlers = {};
  async *changes() {
    yield {
      id: 'PR-1',
      schemaId: 'purchase-request',
      approver: 'ada',
      resolved: false,
      lastModified: new Date('2026-05-01T10:00:00Z'),
      data: { amount: 420 },
    };
  }
}

const backend = await startReferenceBackend();
const tenant = backend.createTenant();
const connector = new OneApproval({
  service: { baseUrl: backend.url, token: tenant.connectorToken },
  keyStore: new MemoryKeyStore(),
  logger: { level: 'warn' },
  sync: { runOnStart: false, reconcileSchedule: false },
  tasks: { enabled: false },
});
await connector.start();
await connector.syncNow();
await connector.stop();
console.log(JSON.stringify(backend.listApprovals(tenant.system.id)));
await backend.close();
`;

let work: string;
let app: string;
let tarballFiles: string[];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'kit-package-'));
  // What a fresh clone holds (tracked files and new ones not ignored, so no dist), with the installed dependencies.
  const kit = join(work, 'kit');
  const files = (await succeed('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root))
    .split('\0')
    .filter((file) => file !== '' && file.split('/')[0] !== 'node_modules' && existsSync(join(root, file)));
  for (const file of files) {
    mkdirSync(dirname(join(kit, file)), { recursive: true });
    cpSync(join(root, file), join(kit, file));
  }
  symlinkSync(realpathSync(join(root, 'node_modules')), join(kit, 'node_modules'), 'dir');

  // npm prints the prepack build's output too, so the tarball is found in its own folder and listed with tar.
  const packed = join(work, 'packed');
  mkdirSync(packed);
  await succeed('npm', ['pack', '--pack-destination', packed], kit);
  const [tarball] = readdirSync(packed).map((name) => join(packed, name));
  tarballFiles = (await succeed('tar', ['-tzf', tarball!], work))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^package\//, ''));

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'my-connector', private: true, type: 'module' }),
  );
  await succeed(
    'npm',
    ['install', tarball!, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    app,
  );
}, 180_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed kit', () => {
  it('contains the built package, not only README.md and package.json', () => {
    expect(tarballFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/backend/index.js',
        'dist/backend/index.d.ts',
        'dist/testing/index.js',
        'dist/testing/index.d.ts',
        'dist/cli/connector.js',
      ]),
    );
    expect(tarballFiles.filter((file) => !file.startsWith('dist/') || file.endsWith('.map'))).toEqual([
      'package.json',
      'README.md',
    ]);
  });

  it('runs a connector from the installed package against its reference backend', async () => {
    writeFileSync(join(app, 'sync.js'), CONNECTOR_SCRIPT);
    const outcome = await run(process.execPath, ['sync.js'], { cwd: app });
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject([{ id: 'PR-1', approver: 'ada', resolved: false }]);
  });

  it('installs the connector command', async () => {
    const outcome = await run(join(app, 'node_modules', '.bin', 'connector'), ['--help'], {
      cwd: app,
      env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` },
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('Usage: connector <command> [options]');
  });
});
