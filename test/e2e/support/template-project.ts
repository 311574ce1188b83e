import { once } from 'node:events';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend } from '../../../src/backend/index.js';
import { listTemplates } from '../../../src/cli/create/templates.js';
import { dotenv, environment, healthcheckCommand } from '../../cli/support/dockerfile.js';
import { spawnForTest } from './children.js';
import {
  installedForTemplates,
  installPacked,
  linkNodeModules,
  root,
  run,
  runOnce,
  succeed,
} from './packages.js';

// A project of a template as a user gets it: created by the packed create-connector, the packed kit installed, then
// tested, built and run as its container would run it, and developed with its dev loop.

// A blank template's worker syncs its example request, REQ-1. One made of an example (its source's simulator is not
// started here) is up once it has registered with the service, built from its .env.example.
const templates = listTemplates(join(root, 'templates'));
const madeOfExamples = new Set(templates.filter(({ folders }) => folders.length > 1).map(({ name }) => name));

/** How long the dev loop's test waits for its steps in all: within its timeout (180 s), so that a wait names itself. */
const DEV_WAITS_MS = 170_000;

/**
 * The conformance test of a template made of an example: the example's own `test/conformance.test.ts`, which the
 * repository's suite runs already (examples/<example>/test/conformance.test.ts), against the same connector, driver
 * and simulator. The project's `npm test` runs everything else; that the installed kit's conformance entry loads
 * and runs in a generated project is proven by the blank templates' projects, whose conformance tests are their own.
 * The project's files are checked to be the example's, byte for byte, so that the two runs stay one.
 */
const CONFORMANCE_TEST = 'test/conformance.test.ts';

/** The files of `folder`, relative to it, but for what a scaffold does not copy. */
function filesOf(folder: string, under = ''): string[] {
  return readdirSync(join(folder, under), { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules' && entry.name !== 'dist')
    .flatMap((entry) => {
      const path = join(under, entry.name);
      return entry.isDirectory() ? filesOf(folder, path) : [path];
    });
}
/**
 * The environment of the commands the tests run: the Node that runs this test first on PATH, as npm scripts have
 * it; neither this test run's own variables nor a worker's: each test gives the worker its configuration the way it
 * means to.
 */
export const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(APPROVAL_|CONNECTOR_|OPERATIONS_|LOG_|VITEST|NODE_ENV$)/.test(name),
    ),
  ),
  PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
};
const DEV_ADMIN_TOKEN = 'create-connector-dev-admin-token';

/**
 * A project of `template` as a user gets it: created by the packed create-connector, the packed kit installed. Made
 * once per test run, whichever of the template's test files asks first (see `runOnce`), and never changed in place:
 * each file works in a copy of its own ({@link copyProject}).
 */
export function createdProject(template: string): Promise<string> {
  return runOnce(`project-${template}`, async (folder) => {
    const installed = await installedForTemplates();
    const project = join(folder, `${template}-connector`);
    await succeed(
      join(installed, 'node_modules', '.bin', 'create-connector'),
      [project, '--template', template, '--no-install'],
      folder,
      env,
    );
    // The kit is not in the registry: its tarball stands in for the version package.json asks for. npm installs
    // into a copy of what every project needs, installed once: it finds that in place, and adds or removes the rest.
    await installPacked(project, ['kit'], env);
    return project;
  });
}

/** A copy of `project` in `parent`, of the same name: its files copied, its node_modules hard links to the same. */
export function copyProject(project: string, parent: string): string {
  const copy = join(parent, basename(project));
  const modules = join(project, 'node_modules');
  cpSync(project, copy, { recursive: true, filter: (source) => source !== modules });
  linkNodeModules(project, copy);
  return copy;
}

/** A copy of the template's project ({@link createdProject}) for the tests of one file, removed after them. */
function projectForThisFile(template: string): () => string {
  let work: string | undefined;
  let project: string | undefined;
  // The costliest steps first, with the time they always had: the packing and the install every project shares, then
  // the project's own creation and install (which its first test did, when each file made a project of its own).
  beforeAll(() => installedForTemplates(), 240_000);
  beforeAll(async () => {
    const created = await createdProject(template);
    work = mkdtempSync(join(tmpdir(), `${template}-project-`));
    project = copyProject(created, work);
  }, 180_000);
  afterAll(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });
  return () => {
    if (project === undefined) throw new Error(`the project of the ${template} template was not made`);
    return project;
  };
}

/**
 * The tests of a project of `template`, in a test file of its own (test/e2e/templates/), so that the templates' tests
 * run at the same time when vitest has workers for them: the project created by the packed create-connector, its
 * dependencies installed, its own tests, build and start run as its README says. Its dev loop is tested by
 * {@link describeTemplateDevLoop}, in a file of its own.
 */
export function describeTemplateProject(template: string): void {
  describe(`a project from the ${template} template`, () => {
    const projectFolder = projectForThisFile(template);
    let backend: ReferenceBackend;
    let project: string;

    beforeAll(async () => {
      project = projectFolder();
      // Loaded here, not by the module: the dev loop's files, and the other files that use this one, need no backend.
      const { startReferenceBackend } = await import('../../../src/backend/index.js');
      backend = await startReferenceBackend();
    });

    afterAll(async () => {
      await backend?.close();
    });

    it('is created by create-connector, and passes its own tests against the installed kit', async () => {
      expect(JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'))).toMatchObject({
        name: `${template}-connector`,
        dependencies: { 'approval-connector-kit': expect.stringMatching(/^file:/) },
      });
      const [example, ...overlays] = templates.find(({ name }) => name === template)!.folders;
      const conformanceRunByTheRepo =
        madeOfExamples.has(template) && existsSync(join(example!, CONFORMANCE_TEST));
      if (conformanceRunByTheRepo) {
        // What the example's conformance test runs on, as the repository runs it: every file of the example (its
        // source, driver, simulator and the test itself), which the template lays nothing over.
        for (const file of filesOf(example!)) {
          expect(readFileSync(join(project, file), 'utf8'), file).toBe(
            readFileSync(join(example!, file), 'utf8'),
          );
          for (const overlay of overlays) expect(existsSync(join(overlay, file)), file).toBe(false);
        }
      }
      // npm hands the arguments after -- to the test script's last command, its vitest.
      const tested = await run(
        'npm',
        ['test', ...(conformanceRunByTheRepo ? ['--', '--exclude', CONFORMANCE_TEST] : [])],
        { cwd: project, env },
      );
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      expect(tested.stdout).toMatch(/Tests\s+.*\d+ passed/);
      // vitest names each test file it ran on a line of its own.
      const ranConformance = /^\s*✓ test\/conformance\.test\.ts /m.test(
        stripVTControlCharacters(tested.stdout),
      );
      expect(ranConformance).toBe(!conformanceRunByTheRepo);
    }, 180_000);

    it('builds dist/main.js, which runs a worker as its container would, healthy, and stops with 0 on SIGTERM', async () => {
      await succeed('npm', ['run', 'build'], project, env);
      expect(existsSync(join(project, 'dist', 'main.js'))).toBe(true);

      const dockerfile = readFileSync(join(project, 'Dockerfile'), 'utf8');
      const tenant = backend.createTenant();
      const example = dotenv(readFileSync(join(project, '.env.example'), 'utf8'));
      const workerEnv = {
        ...env,
        ...example,
        ...environment(dockerfile),
        // What an operator sets: the service and the token; free ports, so that tests running at once do not clash.
        APPROVAL_SERVICE_URL: backend.url,
        APPROVAL_CONNECTOR_TOKEN: tenant.connectorToken,
        OPERATIONS_PORT: String(await freePort()),
        ...(await ownPushPort(example)),
      };
      const worker = startWorker(backend, project, ['dist/main.js'], workerEnv);
      try {
        await worker.up(tenant.system.id, template);
        const [command, ...args] = healthcheckCommand(dockerfile)!;
        const health = await run(command === 'node' ? process.execPath : command!, args, {
          cwd: project,
          env: workerEnv,
        });
        expect(health.code, worker.output()).toBe(0);
      } finally {
        expect(await worker.stop(), worker.output()).toBe(0);
      }
      expect(worker.output()).not.toContain(tenant.connectorToken);
    }, 60_000);

    // A template whose project ships a source driver (src/conformance.ts) is verified from its build.
    it.skipIf(!existsSync(join(root, 'templates', template, 'src', 'conformance.ts')))(
      'verifies its connector with connector verify, from dist/conformance.js, and exits 0',
      async () => {
        const verified = await run(
          join(project, 'node_modules', '.bin', 'connector'),
          ['verify', '--seed', '1'],
          {
            cwd: project,
            env,
          },
        );
        expect(verified.code, verified.stdout + verified.stderr).toBe(0);
        expect(verified.stdout).toMatch(/^Conformance of MyConnector \(seed 1\)$/m);
        expect(verified.stdout).toMatch(/^\d+ passed, 0 failed, \d+ skipped$/m);
      },
      120_000,
    );

    it('runs the same connector with connector run, from dist/connector.js', async () => {
      const tenant = backend.createTenant();
      const connector = join(
        project,
        'node_modules',
        'approval-connector-kit',
        'dist',
        'cli',
        'connector.js',
      );
      const example = dotenv(readFileSync(join(project, '.env.example'), 'utf8'));
      const worker = startWorker(backend, project, [connector, 'run'], {
        ...env,
        // The connector's own variables, as .env.example names them (none for a blank template).
        ...example,
        OPERATIONS_PORT: '',
        ...(await ownPushPort(example)),
        APPROVAL_SERVICE_URL: backend.url,
        APPROVAL_CONNECTOR_TOKEN: tenant.connectorToken,
      });
      try {
        await worker.up(tenant.system.id, template);
      } finally {
        expect(await worker.stop(), worker.output()).toBe(0);
      }
    }, 60_000);

    it('runs with npm start as its README says: the variables from .env', async () => {
      const tenant = backend.createTenant();
      const example = readFileSync(join(project, '.env.example'), 'utf8');
      writeFileSync(
        join(project, '.env'),
        example
          .replace(/^APPROVAL_SERVICE_URL=.*$/m, `APPROVAL_SERVICE_URL=${backend.url}`)
          .replace(/^APPROVAL_CONNECTOR_TOKEN=.*$/m, `APPROVAL_CONNECTOR_TOKEN=${tenant.connectorToken}`)
          .replace(/^OPERATIONS_PORT=.*$/m, `OPERATIONS_PORT=${await freePort()}`)
          .replace(/^PUSH_PORT=.*$/m, `PUSH_PORT=${await freePort()}`),
      );
      // The start script's own command, without npm in between, so that the signal reaches the worker.
      const { scripts } = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
      const [node, ...args] = (scripts.start as string).split(' ');
      expect(node).toBe('node');
      const worker = startWorker(backend, project, args, env);
      try {
        await worker.up(tenant.system.id, template);
      } finally {
        expect(await worker.stop(), worker.output()).toBe(0);
      }
    }, 60_000);
  });
}

/**
 * The dev loop of a project of `template` (`npm run dev`), in a test file of its own beside the template's other
 * tests ({@link describeTemplateProject}), so that vitest can run the two at once: a copy of the same project.
 */
export function describeTemplateDevLoop(template: string): void {
  describe(`a project from the ${template} template, developed with npm run dev`, () => {
    const projectFolder = projectForThisFile(template);
    let project: string;

    beforeAll(() => {
      project = projectFolder();
      // As its README has a developer do first: the connector's own variables (a template made of an example needs
      // its source's), which the loop hands on, but for the service's, which it sets.
      copyFileSync(join(project, '.env.example'), join(project, '.env'));
    });

    it(
      'develops with npm run dev: runs in a backend of its own, carries out a blank template’s task, waits out a type error, builds and restarts on an edit, and stops with 0 on Ctrl+C',
      async () => {
        const { scripts } = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
        expect(scripts.dev).toBe('connector dev');
        // The dev script's command as npm runs it, the project's bins first on PATH; without npm in between, whose own
        // exit code after a signal is 130 whatever its script's.
        const dev = spawnForTest(join(project, 'node_modules', '.bin', 'connector'), ['dev', '--port', '0'], {
          cwd: project,
          env: { ...env, APPROVAL_ADMIN_TOKEN: DEV_ADMIN_TOKEN },
        });
        let output = '';
        for (const stream of [dev.stdout, dev.stderr]) {
          stream.on('data', (chunk: Buffer) => {
            output += chunk.toString();
          });
        }
        const exited = once(dev, 'exit');
        const messages = () =>
          output
            .split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => (JSON.parse(line) as { msg: string }).msg);
        // Each wait names what it waits for, and gives up before the test's own timeout, which would name nothing.
        const giveUpAt = Date.now() + DEV_WAITS_MS;
        const until = async (what: string, condition: () => boolean | Promise<boolean>) => {
          while (!(await condition())) {
            if (dev.exitCode !== null) throw new Error(`connector dev exited ${dev.exitCode}:\n${output}`);
            if (Date.now() > giveUpAt)
              throw new Error(`still waiting for ${what}; connector dev wrote:\n${output}`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        };
        const admin = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
          const answer = await fetch(`${serviceUrl}/admin${path}`, {
            method,
            headers: { authorization: `Bearer ${DEV_ADMIN_TOKEN}`, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`);
          return (await answer.json()) as T;
        };
        const approvals = async () =>
          (await admin<{ id: string }[]>('GET', `/systems/${systemId}/approvals`)).map(({ id }) => id);
        let serviceUrl = '';
        let systemId = '';
        try {
          await until('its banner', () => output.includes('Stop with Ctrl+C'));
          serviceUrl = /service URL: +(\S+)/.exec(output)![1]!;
          systemId = /system: +\S+ \(([^)]+)\)/.exec(output)![1]!;
          expect(output).toMatch(/console: +http:\/\/\S+\/console\/#login=\S+/);
          expect(output).toMatch(/management token: +\S+/);

          const running = () => messages().filter((message) => message === 'connector running').length;
          await until('the connector to run', () => running() === 1);
          if (!madeOfExamples.has(template)) {
            // A blank template's example request, approved as an approver would; one made of an example syncs from
            // its source's simulator, not started here.
            await until('REQ-1 in the service', async () => (await approvals()).includes('REQ-1'));
            const task = await admin<{ id: string }>('POST', '/tasks', {
              systemId,
              type: 'approve',
              approvalId: 'REQ-1',
            });
            await until(
              'the task to complete',
              async () =>
                (await admin<{ status: string }>('GET', `/tasks/${task.id}`)).status === 'completed',
            );
            expect(await admin('GET', `/tasks/${task.id}`)).toMatchObject({ result: { status: 'success' } });
          }

          const connector = join(project, 'src', 'connector.ts');
          const original = readFileSync(connector, 'utf8');
          writeFileSync(connector, `${original}\nexport const broken: number = 'text';\n`);
          await until('the failed build', () =>
            messages().includes('the build failed; the connector keeps running its previous build'),
          );
          expect(output).toContain('error TS2322');
          expect(running()).toBe(1);

          writeFileSync(connector, `${original}\n// Edited.\n`);
          if (!madeOfExamples.has(template)) {
            const source = join(project, 'src', 'source.ts');
            writeFileSync(source, readFileSync(source, 'utf8').replace("id: 'REQ-1'", "id: 'REQ-2'"));
            // The new build runs: its request comes.
            await until('REQ-2 in the service', async () => (await approvals()).includes('REQ-2'));
          }
          await until('the restart on the new build', () => running() >= 2);
          expect(messages()).toContain('restarting the connector on its new build');
        } finally {
          dev.kill('SIGINT');
        }
        expect((await exited)[0], output).toBe(0);
        expect(messages().at(-1)).toBe('stopped');
        expect(output).not.toContain(DEV_ADMIN_TOKEN);
      },
      DEV_WAITS_MS + 10_000,
    );
  });
}

/** `node` with `args` in the project: waits for it to sync, stops it with SIGTERM. */
function startWorker(
  backend: ReferenceBackend,
  project: string,
  args: string[],
  workerEnv: NodeJS.ProcessEnv,
) {
  const child = spawnForTest(process.execPath, args, { cwd: project, env: workerEnv });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    output: () => output,
    /** Until the template's example request is in the service, or a template made of an example has registered. */
    async up(systemId: string, template: string): Promise<void> {
      const isUp = madeOfExamples.has(template)
        ? () => backend.getConnector(systemId).updatedAt !== undefined
        : () => backend.listApprovals(systemId).some(({ id }) => id === 'REQ-1');
      while (!isUp()) {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop(): Promise<number | null> {
      if (child.exitCode === null) child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      return child.exitCode;
    },
  };
}

/**
 * A push ingress on a free port of its own when `.env.example` opens one (the jira and servicenow templates' 9465),
 * so that two templates' workers started at once do not clash; nothing otherwise.
 */
async function ownPushPort(example: Record<string, string>): Promise<Record<string, string>> {
  return example.PUSH_PORT ? { PUSH_PORT: String(await freePort()) } : {};
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
