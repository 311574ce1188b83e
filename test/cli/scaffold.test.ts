import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type KitPackage, scaffold } from '../../src/cli/create/scaffold.js';
import { listTemplates } from '../../src/cli/create/templates.js';
import { isKitError } from '../../src/index.js';

// A template that names an example: the example's files are the project's, with no second copy in templates/.

const kit: KitPackage = {
  name: 'approval-connector-kit',
  version: '1.2.3',
  engines: { node: '>=22.19.0' },
  peerDependencies: { zod: '^4.1.0' },
  devDependencies: { nock: '^15.0.2', typescript: '^6.0.3' },
};

let root: string;
const templatesFolder = () => join(root, 'templates');

function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

function filesIn(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1))
    .sort();
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'connector-scaffold-'));
  write(
    'templates/_base/package.json',
    JSON.stringify({
      name: 'x',
      scripts: { test: 'vitest run' },
      dependencies: { 'approval-connector-kit': '*', zod: '*' },
    }),
  );
  write('templates/_base/README.md', '# <%= name %>\nthe base\n');
  write('templates/_base/src/main.ts', 'base main\n');
  write('templates/_base/gitignore', 'node_modules/\n');
  write('examples/jira/src/connector.ts', 'the example\n');
  write('examples/jira/README.md', '# <%= name %>\nthe example\n');
  write('examples/jira/simulator/main.ts', 'simulated\n');
  write('examples/jira/node_modules/left/index.js', 'installed in the repository\n');
  write('examples/jira/dist/connector.js', 'built in the repository\n');
  write(
    'templates/jira/template.json',
    JSON.stringify({
      description: 'from the example',
      example: 'jira',
      package: { scripts: { simulator: 'node dist/simulator/main.js' }, devDependencies: { nock: '*' } },
    }),
  );
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('a template made of an example', () => {
  it('gives the project the base, then the example’s files over it, and nothing the repository installed or built', () => {
    const [template] = listTemplates(templatesFolder());
    const target = join(root, 'project');
    scaffold({ target, name: 'my-jira', template: template!, templatesFolder: templatesFolder(), kit });

    expect(filesIn(target)).toEqual([
      '.gitignore',
      'README.md',
      'package.json',
      'simulator/main.ts',
      'src/connector.ts',
      'src/main.ts',
    ]);
    expect(readFileSync(join(target, 'README.md'), 'utf8')).toBe('# my-jira\nthe example\n');
    expect(readFileSync(join(target, 'src/main.ts'), 'utf8')).toBe('base main\n');
  });

  it('adds the template’s scripts and dependencies to the base’s package.json, at the kit’s ranges', () => {
    const [template] = listTemplates(templatesFolder());
    const target = join(root, 'project');
    scaffold({ target, name: 'my-jira', template: template!, templatesFolder: templatesFolder(), kit });

    expect(JSON.parse(readFileSync(join(target, 'package.json'), 'utf8'))).toEqual({
      name: 'my-jira',
      scripts: { test: 'vitest run', simulator: 'node dist/simulator/main.js' },
      dependencies: { 'approval-connector-kit': '^1.2.3', zod: '^4.1.0' },
      devDependencies: { nock: '^15.0.2' },
    });
  });

  it('is refused when the example it names is not a folder of examples/', () => {
    write(
      'templates/jira/template.json',
      JSON.stringify({ description: 'from nowhere', example: 'confluence' }),
    );
    const error = (() => {
      try {
        listTemplates(templatesFolder());
      } catch (caught) {
        return caught;
      }
    })();
    expect(isKitError(error) && error.code).toBe('validation');
    expect(String((error as Error).message)).toMatch(/example.*confluence.*not a folder/s);
  });

  it('is refused when it adds to package.json what the base does not have', () => {
    write(
      'templates/jira/template.json',
      JSON.stringify({ description: 'd', example: 'jira', package: { bin: { x: 'y' } } }),
    );
    expect(() => listTemplates(templatesFolder())).toThrow(/package/);
  });
});
