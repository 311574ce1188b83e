import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINIMUM_NODE_VERSION } from '../../src/internal/node-version.js';
import {
  filesOf,
  findOlderNode,
  linkNodeModules,
  packedPackages,
  QUIET_INSTALL,
  root,
  run,
  succeed,
} from './support/packages.js';

// The kit as a user gets it: packed from what a fresh clone holds, installed into a new project from the tarball.

/** The modules a built file imports, in order. */
function importsOf(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  return [...code.matchAll(/^\s*(?:import|export)\b[^'";]*?['"]([^'"]+)['"]/gm)].map((match) => match[1]!);
}

// What the connector scripts below share: the approval their source yields, and a reference backend with a worker
// for the connector class OneApproval, started and synced once (the poller as `poller` says).
const PR_1 = `{
        id: 'PR-1',
        schemaId: 'purchase-request',
        approver: 'ada',
        resolved: false,
        lastModified: new Date('2026-05-01T10:00:00Z'),
        data: { amount: 420 },
      }`;

const startSyncedWorker = (poller: string) => `const backend = await startReferenceBackend();
const tenant = backend.createTenant();
const worker = new ConnectorWorker(new OneApproval(), {
  service: { baseUrl: backend.url, token: tenant.connectorToken },
  keyStore: new MemoryKeyStore(),
  logger: { level: 'warn' },
  sync: { runOnStart: false, reconcileSchedule: false },
  poller: ${poller},
});
await worker.start();
await worker.syncNow();`;

// A connector as a user would write it against the installed package, and the reference backend from it.
const CONNECTOR_SCRIPT = `
import { Connector, incremental } from 'approval-connector-kit';
import { ConnectorWorker, MemoryKeyStore } from 'approval-connector-kit/worker';
import { startReferenceBackend } from 'approval-connector-kit/backend';

class OneApproval extends Connector {
  tasks = {};
  source = incremental({
    async *changes() {
      yield ${PR_1};
    },
  });
}

${startSyncedWorker('{ enabled: false }')}
await worker.stop();
console.log(JSON.stringify(backend.listApprovals(tenant.system.id)));
await backend.close();
`;

// A connector module as \`connector run\` loads it: its default export builds the connector.
const WORKER_MODULE = `
import { Connector, incremental } from 'approval-connector-kit';

class OneApproval extends Connector {
  tasks = {};
  source = incremental({
    async *changes() {
      yield { id: 'PR-1', schemaId: 'purchase-request', approver: 'ada', resolved: false,
        lastModified: new Date('2026-05-01T10:00:00Z'), data: {} };
    },
  });
}

export default ({ env }) => {
  if (env.APPROVAL_SERVICE_URL === undefined) throw new Error('the worker gives its environment');
  return new OneApproval();
};
`;

// Every class the entries export, with the name it has at run time, and how an error of the backend prints.
const NAMES_SCRIPT = `
import * as kit from 'approval-connector-kit';
import * as backend from 'approval-connector-kit/backend';
import * as client from 'approval-connector-kit/client';
import * as testing from 'approval-connector-kit/testing';

const renamed = [];
for (const [entry, exports] of Object.entries({ kit, backend, client, testing })) {
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value === 'function' && /^[A-Z]/.test(name) && value.name !== name) {
      renamed.push(entry + '.' + name + ' is named ' + value.name);
    }
  }
}
const error = backend.ServiceError.notFound('tasks', 'T-1');
console.log(JSON.stringify({ renamed, printed: String(error), name: error.name }));
`;

// The same connector in TypeScript, its task schemas built with the application's own zod, and a client alone.
const TYPED_CONNECTOR = `
import { Connector, incremental, type SourceApproval, task } from 'approval-connector-kit';
import { ConnectorWorker, MemoryKeyStore } from 'approval-connector-kit/worker';
import { startReferenceBackend } from 'approval-connector-kit/backend';
import { IntegrationClient } from 'approval-connector-kit/client';
import { z } from 'zod';

const decided: string[] = [];

class OneApproval extends Connector {
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
      run: async ({ approval, approveComments }) => {
        decided.push(approval.id + ': ' + approveComments);
      },
    }),
  };
  readonly source = incremental({
    async *changes(): AsyncIterable<SourceApproval> {
      yield ${PR_1};
    },
  });
}

${startSyncedWorker('{ idleMinMs: 5, idleMaxMs: 20 }')}
const { id } = backend.createTask({
  systemId: tenant.system.id,
  type: 'approve',
  approvalId: 'PR-1',
  approveComments: 'within budget',
});
let result = backend.getTask(id)?.result;
while (result === undefined) {
  await new Promise((resolve) => setTimeout(resolve, 10));
  result = backend.getTask(id)?.result;
}
const client = new IntegrationClient({ baseUrl: backend.url, token: tenant.connectorToken });
const approval = await client.getApproval('PR-1');
await client.close();
await worker.stop();
await backend.close();
console.log(JSON.stringify({ decided, result, approval: approval.id }));
`;

/** The test's environment, with the Node that runs it first on PATH, for the installed `connector` command. */
const withThisNode = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` };

let work: string;
let app: string;
let tarballFiles: string[];
let lowest: string;
let olderNode: { path: string; version: string } | undefined;

/** The lowest zod of the kit's peer range: `^4.1.0` gives `4.1.0`. */
const LOWEST_ZOD = (() => {
  const range = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest).peerDependencies
    ?.zod;
  const lowest = /^\^(\d+\.\d+\.\d+)$/.exec(range ?? '')?.[1];
  if (lowest === undefined)
    throw new Error(`Expected a caret range for the zod peer dependency, got ${range}`);
  return lowest;
})();

interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'kit-package-'));
  const { kit: tarball } = await packedPackages();
  tarballFiles = await filesOf(tarball);

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'my-connector', private: true, type: 'module' }),
  );
  await succeed('npm', ['install', tarball, ...QUIET_INSTALL], app);

  // An application on the oldest zod the kit declares it supports.
  lowest = join(work, 'lowest');
  mkdirSync(lowest);
  writeFileSync(
    join(lowest, 'package.json'),
    JSON.stringify({ name: 'my-connector-on-old-zod', private: true, type: 'module' }),
  );
  // From a copy of the application's node_modules (hard links: the kit and what npm installed with it from the
  // tarball), in which npm finds everything in place and only puts zod at its lowest version.
  linkNodeModules(app, lowest);
  await succeed('npm', ['install', tarball, `zod@${LOWEST_ZOD}`, '--save-exact', ...QUIET_INSTALL], lowest);
  olderNode = await findOlderNode();
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
        'dist/node-guard.js',
        'dist/check-node.js',
        'dist/check-node.d.ts',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/client/index.js',
        'dist/client/index.d.ts',
        'dist/backend/index.js',
        'dist/backend/index.d.ts',
        'dist/testing/index.js',
        'dist/testing/index.d.ts',
        'dist/cli/connector.js',
        'dist/console/app.js',
        'dist/console/app.css',
      ]),
    );
    // The templates, and the examples some are made of, are `connector create`'s, checked by its own test; the
    // documentation's links are checked by published-packages.process.test.ts.
    const others = tarballFiles.filter(
      (file) => !/^(dist|docs|templates|examples)\//.test(file) || file.endsWith('.map'),
    );
    expect(tarballFiles).toEqual(expect.arrayContaining(['docs/worker.md', 'docs/failure-mapping.md']));
    expect(others).toEqual(['package.json', 'CHANGELOG.md', 'README.md']);
  });

  it('runs a connector from the installed package against its reference backend', async () => {
    writeFileSync(join(app, 'sync.js'), CONNECTOR_SCRIPT);
    const outcome = await run(process.execPath, ['sync.js'], { cwd: app });
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toMatchObject([{ id: 'PR-1', approver: 'ada', resolved: false }]);
  });

  it('keeps every class its own name in the build: a ServiceError prints as ServiceError, not _ServiceError', async () => {
    writeFileSync(join(app, 'names.js'), NAMES_SCRIPT);
    const outcome = await run(process.execPath, ['names.js'], { cwd: app });
    expect(outcome.stderr).toBe('');
    expect(JSON.parse(outcome.stdout)).toEqual({
      renamed: [],
      printed: 'ServiceError: Not Found. Failed to find the an item tasks T-1',
      name: 'ServiceError',
    });
  });

  it('imports the Node check first in every entry file, and the check loads no dependency', () => {
    const dist = join(app, 'node_modules', 'approval-connector-kit', 'dist');
    const guard = join(dist, 'node-guard.js');
    // ES modules run in the order they are imported, so only the first import of an entry is sure to run first.
    for (const entry of ['index.js', 'client/index.js', 'backend/index.js', 'testing/index.js']) {
      const [first] = importsOf(join(dist, entry));
      expect(first && resolve(dirname(join(dist, entry)), first), entry).toBe(guard);
    }
    const reached = new Set<string>();
    const packages: string[] = [];
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
        else packages.push(specifier);
      }
    };
    visit(guard);
    expect(packages).toEqual([]);
  });

  it('serves the console page that the connector backend command links to', async () => {
    const child = spawn(join(app, 'node_modules', '.bin', 'connector'), ['backend', '--port', '0'], {
      cwd: app,
      env: withThisNode,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      const link = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /console: +(\S+#login=\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      const { origin } = new URL(link);
      const script = await fetch(`${origin}/console/app.js`);
      expect(script.status).toBe(200);
      expect((await script.text()).length).toBeGreaterThan(1000);
      const session = await fetch(`${origin}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: new URL(link).hash.replace('#login=', '') }),
      });
      expect(session.status).toBe(200);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
  });

  it('runs a connector module with connector run, configured by its environment, until SIGTERM', async () => {
    writeFileSync(join(app, 'worker.js'), WORKER_MODULE);
    const bin = join(app, 'node_modules', '.bin', 'connector');
    const started = (args: string[], extra: Record<string, string>) => {
      const child = spawn(bin, args, {
        cwd: app,
        env: { ...withThisNode, ...extra },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output = { out: '', err: '' };
      child.stdout.on('data', (chunk: Buffer) => {
        output.out += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output.err += chunk.toString();
      });
      const seen = (pattern: RegExp) =>
        new Promise<RegExpMatchArray>((resolve, reject) => {
          const check = () => {
            const match = pattern.exec(output.out);
            if (match) resolve(match);
          };
          child.stdout.on('data', check);
          child.on('exit', (code) => reject(new Error(`exited ${code}: ${output.out}${output.err}`)));
          check();
        });
      return { child, output, seen };
    };
    const adminToken = 'packed-kit-admin-token';
    const backend = started(['backend', '--port', '0'], { APPROVAL_ADMIN_TOKEN: adminToken });
    const worker = { current: undefined as ReturnType<typeof started> | undefined };
    try {
      const [, url] = await backend.seen(/listening on (http:\/\/\S+)/);
      const admin = (method: string, path: string, body?: unknown) =>
        fetch(`${url}/admin${path}`, {
          method,
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }).then((answer) => answer.json());
      const tenant = (await admin('POST', '/tenants', { connectorToken: 'packed-kit-connector' })) as {
        system: { id: string };
      };
      // Pretty, so that the package's pino-pretty is loaded too.
      worker.current = started(['run', 'worker.js'], {
        APPROVAL_SERVICE_URL: url!,
        APPROVAL_CONNECTOR_TOKEN: 'packed-kit-connector',
        LOG_FORMAT: 'pretty',
      });
      await worker.current.seen(/INFO.*: sync run finished/);
      expect(await admin('GET', `/systems/${tenant.system.id}/approvals`)).toMatchObject([{ id: 'PR-1' }]);
      worker.current.child.kill('SIGTERM');
      const [code] = await once(worker.current.child, 'exit');
      expect(code).toBe(0);
      expect(worker.current.output.out).toMatch(/INFO.*: connector stopped/);
      expect(worker.current.output.err).toBe('');
    } finally {
      for (const child of [backend.child, worker.current?.child]) {
        if (child !== undefined && child.exitCode === null) {
          child.kill('SIGTERM');
          await once(child, 'exit');
        }
      }
    }
  });

  it('declares @opentelemetry/api an optional peer, so that an install brings no OpenTelemetry SDK, and its spans load as no-ops', async () => {
    const manifest = JSON.parse(
      readFileSync(join(app, 'node_modules', 'approval-connector-kit', 'package.json'), 'utf8'),
    ) as Manifest & { peerDependenciesMeta?: Record<string, { optional?: boolean }> };
    expect(manifest.dependencies).not.toHaveProperty('@opentelemetry/api');
    expect(manifest.peerDependencies).toHaveProperty('@opentelemetry/api');
    expect(manifest.peerDependenciesMeta?.['@opentelemetry/api']).toEqual({ optional: true });
    expect(existsSync(join(app, 'node_modules', '@opentelemetry', 'sdk-node'))).toBe(false);
    expect(
      existsSync(join(app, 'node_modules', 'approval-connector-kit', 'node_modules', '@opentelemetry')),
    ).toBe(false);
    // The kit's own copy never: the application's (here prom-client's, hoisted) is the one.
    writeFileSync(
      join(app, 'tracing-off.js'),
      `import { trace } from '@opentelemetry/api';
import { IntegrationClient } from 'approval-connector-kit/client';
const client = new IntegrationClient({ baseUrl: 'http://127.0.0.1:1', token: 't', retry: { retries: 0 } });
await client.getState().catch(() => {});
await client.close();
console.log(JSON.stringify({ provider: trace.getTracerProvider().constructor.name }));
`,
    );
    const outcome = await run(process.execPath, ['tracing-off.js'], { cwd: app });
    expect(outcome.stderr).toBe('');
    expect(JSON.parse(outcome.stdout)).toEqual({ provider: 'ProxyTracerProvider' });
  });

  it('installs the connector command', async () => {
    const outcome = await run(join(app, 'node_modules', '.bin', 'connector'), ['--help'], {
      cwd: app,
      env: withThisNode,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('Usage: connector <command> [options]');
    const version = await run(join(app, 'node_modules', '.bin', 'connector'), ['--version'], {
      cwd: app,
      env: withThisNode,
    });
    const installed = JSON.parse(
      readFileSync(join(app, 'node_modules', 'approval-connector-kit', 'package.json'), 'utf8'),
    ) as Manifest;
    expect(version).toMatchObject({ code: 0, stdout: `${installed.version}\n` });
  });
});

describe(`zod as a peer dependency, on the lowest version of its range (${LOWEST_ZOD})`, () => {
  it('is declared a peer, not a dependency, so that an application has one zod', () => {
    const manifest = JSON.parse(
      readFileSync(join(lowest, 'node_modules', 'approval-connector-kit', 'package.json'), 'utf8'),
    ) as Manifest;
    expect(manifest.dependencies).not.toHaveProperty('zod');
    expect(manifest.peerDependencies).toHaveProperty('zod');
    expect(existsSync(join(lowest, 'node_modules', 'approval-connector-kit', 'node_modules', 'zod'))).toBe(
      false,
    );
    const zod = JSON.parse(
      readFileSync(join(lowest, 'node_modules', 'zod', 'package.json'), 'utf8'),
    ) as Manifest;
    expect(zod.version).toBe(LOWEST_ZOD);
  });

  it("type-checks a connector whose task schemas are the application's zod, and runs it", async () => {
    writeFileSync(join(lowest, 'connector.ts'), TYPED_CONNECTOR);
    writeFileSync(
      join(lowest, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          lib: ['ES2024'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          verbatimModuleSyntax: true,
          typeRoots: [join(root, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['connector.ts'],
      }),
    );
    // TypeScript 6, which generated projects get: node_modules/.bin/tsc may be TypeScript 7's (typescript-native).
    const checked = await run(join(root, 'node_modules', 'typescript', 'bin', 'tsc'), ['-p', '.'], {
      cwd: lowest,
    });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);
    const outcome = await run(process.execPath, ['connector.ts'], { cwd: lowest });
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(JSON.parse(outcome.stdout)).toEqual({
      decided: ['PR-1: within budget'],
      result: { status: 'success' },
      approval: 'PR-1',
    });
    // A tsc that checks every library's types too (skipLibCheck: false): about 10 s of CPU alone, three times that
    // while the rest of the suite shares the cores.
  }, 90_000);
});

describe(`on a Node.js older than ${MINIMUM_NODE_VERSION}`, () => {
  const clearMessage = (version: string) =>
    new RegExp(
      `needs Node\\.js ${MINIMUM_NODE_VERSION.replaceAll('.', '\\.')} or newer, but this is Node\\.js ${version.replaceAll('.', '\\.')} .*https://nodejs\\.org/`,
    );

  it('the connector command says which Node it found, which it needs and where to get one, and exits 1', async (context) => {
    context.skip(olderNode === undefined, `no Node.js older than ${MINIMUM_NODE_VERSION} on PATH`);
    const { path, version } = olderNode!;
    // As `npx connector` runs it: the bin's `#!/usr/bin/env node` finds the older Node first on PATH.
    const outcome = await run(join(app, 'node_modules', '.bin', 'connector'), ['backend', '--port', '0'], {
      cwd: app,
      env: { ...process.env, PATH: `${dirname(path)}${delimiter}${process.env.PATH}` },
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(clearMessage(version));
    // One readable line: no stack trace, nothing from inside a dependency.
    expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.for([
    'approval-connector-kit',
    'approval-connector-kit/client',
    'approval-connector-kit/backend',
    'approval-connector-kit/testing',
  ])(
    'importing %s fails with the clear error, before any dependency fails its own way',
    async (entry, context) => {
      context.skip(olderNode === undefined, `no Node.js older than ${MINIMUM_NODE_VERSION} on PATH`);
      const { path, version } = olderNode!;
      writeFileSync(join(app, 'main.js'), `import '${entry}';\nconsole.log('loaded');\n`);
      const outcome = await run(path, ['main.js'], { cwd: app });
      expect(outcome.code).toBe(1);
      expect(outcome.stdout).toBe('');
      expect(outcome.stderr).toMatch(clearMessage(version));
      expect(outcome.stderr).toContain("code: 'unsupported_node'");
      expect(outcome.stderr).not.toMatch(/ERR_UNKNOWN_BUILTIN_MODULE|undici|node:sqlite/);
    },
  );

  it('keeps the check in a bundle of the connector (package.json declares the guard a side effect)', async (context) => {
    context.skip(olderNode === undefined, `no Node.js older than ${MINIMUM_NODE_VERSION} on PATH`);
    const { path, version } = olderNode!;
    writeFileSync(
      join(app, 'bundled.js'),
      "import { Connector } from 'approval-connector-kit';\nconsole.log(typeof Connector);\n",
    );
    const kitPackage = JSON.parse(
      readFileSync(join(app, 'node_modules', 'approval-connector-kit', 'package.json'), 'utf8'),
    ) as Manifest;
    // The kit bundled, its dependencies left to node_modules. CommonJS output keeps the modules' order; an ES module
    // bundle hoists the dependencies' imports above every bundled line, so no check inside the kit could run first.
    const externals = Object.keys({ ...kitPackage.dependencies, ...kitPackage.peerDependencies }).map(
      (name) => `--external:${name}`,
    );
    await succeed(
      join(root, 'node_modules', '.bin', 'esbuild'),
      [
        'bundled.js',
        '--bundle',
        '--platform=node',
        '--format=cjs',
        '--outfile=bundle.cjs',
        '--log-level=error',
        ...externals,
      ],
      app,
    );
    expect(await run(process.execPath, ['bundle.cjs'], { cwd: app })).toMatchObject({
      code: 0,
      stdout: 'function\n',
    });
    const outcome = await run(path, ['bundle.cjs'], { cwd: app });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(clearMessage(version));
    expect(outcome.stderr).not.toMatch(/undici/);
  });
});
