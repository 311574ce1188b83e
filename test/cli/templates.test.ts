import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KitPackage, scaffold } from '../../src/cli/create/scaffold.js';
import { listTemplates } from '../../src/cli/create/templates.js';
import { packageRoot } from '../../src/internal/package-root.js';
import { dotenv, environment, healthcheckCommand, instructions, stages } from './support/dockerfile.js';

// What every generated project holds, checked on the files as generated: a template may replace any of the base's.

const root = packageRoot()!;
const templatesFolder = join(root, 'templates');
const kit = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as KitPackage;
const templates = listTemplates(templatesFolder);
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'connector-templates-'));
  for (const template of templates) {
    scaffold({ target: join(work, template.name), name: 'my-connector', template, templatesFolder, kit });
  }
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

it('holds no .gitignore nor .npmrc, which npm would leave out of the published kit', () => {
  const ignored = readdirSync(templatesFolder, { recursive: true }).filter((file) =>
    ['.gitignore', '.npmrc'].includes(String(file).split(/[\\/]/).at(-1)!),
  );
  expect(ignored).toEqual([]);
});

describe.for(templates.map((template) => template.name))('on an older Node.js, the %s template', (name) => {
  const read = (file: string) => readFileSync(join(work, name, file), 'utf8');

  it('checks the Node.js before its tests and its start script run, and npm install refuses one', () => {
    const { scripts, engines } = JSON.parse(read('package.json'));
    expect(scripts).toMatchObject({ pretest: 'connector check-node', prestart: 'connector check-node' });
    expect(engines.node).toBe(kit.engines.node);
    expect(read('.npmrc')).toMatch(/^engine-strict=true$/m);
  });

  it('imports the check first in src/main.ts, so that node dist/main.js prints the message alone', () => {
    const imports = [...read('src/main.ts').matchAll(/^import\b[^'";]*['"]([^'"]+)['"]/gm)].map(
      (match) => match[1],
    );
    expect(imports[0]).toBe('approval-connector-kit/check-node');
  });
});

describe.for(templates.map((template) => template.name))('the install of the %s template', (name) => {
  it('lets npm run the install scripts of the packages it installs (allowScripts), which npm asks about', () => {
    const project = JSON.parse(readFileSync(join(work, name, 'package.json'), 'utf8'));
    // The project's dependencies as the kit's own install has them, which are in its ranges.
    const withScripts = new Set<string>();
    const seen = new Set<string>();
    const visit = (dependency: string) => {
      if (seen.has(dependency)) return;
      seen.add(dependency);
      const file = join(root, 'node_modules', dependency, 'package.json');
      if (!existsSync(file)) return;
      const manifest = JSON.parse(readFileSync(file, 'utf8'));
      if (
        ['preinstall', 'install', 'postinstall'].some((script) => manifest.scripts?.[script] !== undefined)
      ) {
        withScripts.add(dependency);
      }
      for (const next of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }))
        visit(next);
    };
    for (const dependency of Object.keys({ ...project.dependencies, ...project.devDependencies })) {
      if (dependency !== kit.name) visit(dependency);
    }
    expect(Object.keys(project.allowScripts ?? {}).sort()).toEqual([...withScripts].sort());
  });
});

describe.for(templates.map((template) => template.name))('the scripts of the %s template', (name) => {
  it('develop with connector dev, the local loop, built by the build script it watches the sources of', () => {
    const { scripts } = JSON.parse(readFileSync(join(work, name, 'package.json'), 'utf8'));
    expect(scripts.dev).toBe('connector dev');
    expect(scripts.build).toBe('tsc -p tsconfig.build.json');
    const build = JSON.parse(readFileSync(join(work, name, 'tsconfig.build.json'), 'utf8'));
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
  });
});

describe.for(templates.map((template) => template.name))('the Dockerfile of the %s template', (name) => {
  const read = (file: string) => readFileSync(join(work, name, file), 'utf8');

  it('builds in one stage and runs in another, both on the Node 24 slim image', () => {
    const froms = instructions(read('Dockerfile')).filter(({ keyword }) => keyword === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const { args } of froms) expect(args).toMatch(/^node:24-slim(\s+AS\s+\w+)?$/i);
  });

  it('runs as a user other than root, by number so that Kubernetes can check it, from before its command on', () => {
    const final = stages(read('Dockerfile')).at(-1)!;
    const user = final.findIndex(({ keyword }) => keyword === 'USER');
    expect(user).toBeGreaterThan(-1);
    const [, uid] = /^(\d+)(:\d+)?$/.exec(final[user]!.args) ?? [];
    expect(Number(uid)).toBeGreaterThan(0);
    expect(user).toBeLessThan(final.findIndex(({ keyword }) => keyword === 'CMD'));
  });

  it('starts node dist/main.js itself, in exec form, so that signals reach the worker', () => {
    const commands = stages(read('Dockerfile'))
      .at(-1)!
      .filter(({ keyword }) => keyword === 'CMD' || keyword === 'ENTRYPOINT');
    expect(commands).toEqual([{ keyword: 'CMD', args: expect.any(String) }]);
    expect(JSON.parse(commands[0]!.args)).toEqual(['node', 'dist/main.js']);
  });

  it('checks its health on /healthz, at the operations port it sets and exposes', () => {
    const dockerfile = read('Dockerfile');
    const command = healthcheckCommand(dockerfile);
    expect(command?.[0]).toBe('node');
    expect(command?.join(' ')).toContain('/healthz');
    const { OPERATIONS_PORT, OPERATIONS_HOST } = environment(dockerfile);
    expect(OPERATIONS_PORT).toMatch(/^\d+$/);
    // Reachable from outside the container: a Kubernetes probe does not come from localhost.
    expect(OPERATIONS_HOST).toBe('0.0.0.0');
    const exposed = instructions(dockerfile).filter(({ keyword }) => keyword === 'EXPOSE');
    expect(exposed.map(({ args }) => args)).toEqual([OPERATIONS_PORT]);
  });

  it('leaves out of the image what .dockerignore names, secrets and local state first', () => {
    const ignored = read('.dockerignore').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.env', '.connector', '.git']));
  });

  it('is configured as .env.example says, which names every variable a worker needs and no token', () => {
    const example = dotenv(read('.env.example'));
    expect(Object.keys(example)).toEqual(
      expect.arrayContaining(['APPROVAL_SERVICE_URL', 'APPROVAL_CONNECTOR_TOKEN', 'OPERATIONS_PORT']),
    );
    expect(example.APPROVAL_CONNECTOR_TOKEN).toBe('');
    expect(example.OPERATIONS_PORT).toBe(environment(read('Dockerfile')).OPERATIONS_PORT);
    expect(existsSync(join(work, name, '.env'))).toBe(false);
  });
});
