import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ReferenceBackend, startReferenceBackend, type Tenant } from '../../src/backend/index.js';
import { allExamples, type Example } from './support/examples.js';
import { EXAMPLE_FILES, EXAMPLE_PRELUDE, runtimeGivens } from './support/prelude.js';

// Every TypeScript block of the docs (README.md, docs/, the examples' and templates' READMEs) and of the TSDoc's
// @examples says by a marker whether it runs, is type-checked, quotes a file, or is a fragment, and is held to it:
// a renamed export, a wrong option or a wrong argument in an example fails here. CONTRIBUTING.md has the convention.

const root = resolve(import.meta.dirname, '../..');
const examples = allExamples(root);
const named = (example: Example) => `${example.file}:${example.line}`;
const checked = examples.filter((example) => example.kind === 'run' || example.kind === 'typecheck');

/**
 * Where an example is compiled: beside the file it stands in, so that its relative imports resolve as its reader
 * reads them. A block whose first line names a file of a project (`// src/main.ts`) is that file of one project per
 * markdown file, so that the project's blocks import each other.
 */
function placeOf(example: Example): string {
  const path = /^\/\/ ((?:src|test)\/[\w./-]+\.ts)\b/.exec(example.code)?.[1];
  const stem = example.file.endsWith('.md') ? basename(example.file) : basename(example.file, '.ts');
  if (path !== undefined) return join(root, dirname(example.file), `${stem}.project`, path);
  return join(root, dirname(example.file), `${stem}.example-${example.line}.ts`);
}

/** A folder and the folders above it, up to the repo. */
function ancestors(folder: string): string[] {
  return folder.length <= root.length ? [] : [folder, ...ancestors(dirname(folder))];
}

/** The package's entries, as `tsconfig.json` maps them and the package exports them: each from its source. */
function entryPaths(): Record<string, string[]> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [entry, target] of Object.entries(manifest.exports)) {
    const file = typeof target === 'string' ? target : target.default;
    if (!file.endsWith('.js')) continue;
    const source = file.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts');
    paths[entry === '.' ? manifest.name : `${manifest.name}/${entry.slice(2)}`] = [source];
  }
  return paths;
}

/** What the one program of the examples found: each example's problems, and every name the entries export. */
interface Compiled {
  problems: Map<string, string[]>;
  exported: Set<string>;
}

/** One program of every example to type-check, with the prelude and the files the examples import as their own. */
function typeCheck(): Compiled {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (config === undefined) throw new Error('tsconfig.json could not be read');
  const virtual = new Map<string, string>();
  const prelude = join(root, 'test', 'docs', 'examples.prelude.d.ts');
  virtual.set(prelude, EXAMPLE_PRELUDE);
  for (const [path, text] of Object.entries(EXAMPLE_FILES)) virtual.set(join(root, path), text);
  const placed = new Map<string, Example>();
  for (const example of checked) {
    const place = placeOf(example);
    placed.set(place, example);
    // `export {}` makes a block without imports a module of its own, so that blocks never share their names.
    virtual.set(place, `${example.code}\nexport {};\n`);
  }
  const options: ts.CompilerOptions = {
    ...config.options,
    paths: entryPaths(),
    noEmit: true,
    incremental: false,
  };
  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (path) => virtual.has(path) || fileExists.call(host, path);
  host.readFile = (path) => virtual.get(path) ?? readFile.call(host, path);
  const folders = new Set([...virtual.keys()].flatMap((path) => ancestors(dirname(path))));
  host.directoryExists = (path) => folders.has(path) || ts.sys.directoryExists(path);
  host.getSourceFile = (path, language, ...rest) => {
    const text = virtual.get(path);
    return text === undefined
      ? getSourceFile.call(host, path, language, ...rest)
      : ts.createSourceFile(path, text, language, true);
  };
  const program = ts.createProgram({ rootNames: [prelude, ...virtual.keys()], options, host });
  const problems = new Map<string, string[]>();
  // Only the examples' files and the prelude: the rest of the program is the project's, which its own tsc checks.
  const diagnostics = [...virtual.keys()].flatMap((path) => {
    const file = program.getSourceFile(path);
    return file === undefined
      ? []
      : [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  });
  for (const diagnostic of [
    ...program.getGlobalDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...diagnostics,
  ]) {
    const file = diagnostic.file?.fileName;
    const example = file === undefined ? undefined : placed.get(file);
    const where =
      example === undefined ? (file === undefined ? 'the program' : relative(root, file)) : named(example);
    const position =
      diagnostic.file !== undefined && diagnostic.start !== undefined
        ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
        : undefined;
    const at = position === undefined ? '' : ` (its line ${position.line + 1})`;
    const message = `${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}${at}`;
    problems.set(where, [...(problems.get(where) ?? []), message]);
  }
  const checker = program.getTypeChecker();
  const exported = new Set<string>();
  for (const [source] of Object.values(options.paths ?? {})) {
    const file = source === undefined ? undefined : program.getSourceFile(resolve(root, source));
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    for (const symbol of module === undefined ? [] : checker.getExportsOfModule(module))
      exported.add(symbol.name);
  }
  return { problems, exported };
}

let compiled: Compiled | undefined;
const compile = () => {
  compiled ??= typeCheck();
  return compiled;
};

describe('the code examples of the docs and the TSDoc', () => {
  it('are found, in the docs and in the TSDoc', () => {
    expect(examples.filter((example) => example.file.endsWith('.md')).length).toBeGreaterThan(10);
    expect(examples.filter((example) => example.file.startsWith('src/')).length).toBeGreaterThan(20);
  });

  it('each say whether they run, are type-checked, quote a file or are a fragment, and why when not run', () => {
    const unmarked = examples.filter((example) => example.kind === undefined);
    expect(unmarked.map((example) => `${named(example)}: ${example.marker ?? 'no marker'}`)).toEqual([]);
  });

  it.each(
    examples.filter((example) => example.kind === 'quotes').map((example) => [named(example), example]),
  )('%s is the file it quotes, as it is', (_, example) => {
    expect(example.code.trimEnd()).toBe(readFileSync(join(root, example.detail), 'utf8').trimEnd());
  });

  // One compile of every example with the sources it imports: it takes as long as a `tsc` of them does.
  it('type-check against the package’s entries, as one program', { timeout: 120_000 }, () => {
    expect(Object.fromEntries(compile().problems)).toEqual({});
  });

  it('are given for their reader only names the kit does not export, so that a forgotten import fails', {
    timeout: 120_000,
  }, () => {
    const { exported } = compile();
    expect(exported).toContain('Connector');
    expect(exported).toContain('IntegrationClient');
    const given = [
      ...EXAMPLE_PRELUDE.matchAll(/^(?:declare (?:const|class|function)|interface|type) (\w+)/gm),
    ];
    expect(given.length).toBeGreaterThan(10);
    expect(given.map(([, name]) => name).filter((name) => exported.has(name as string))).toEqual([]);
  });
});

describe('the examples that run', () => {
  let backend: ReferenceBackend;
  let tenant: Tenant;
  let folder: string;

  beforeAll(async () => {
    backend = await startReferenceBackend();
    folder = mkdtempSync(join(tmpdir(), 'examples-'));
  });
  afterAll(async () => {
    await backend.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it.each(examples.filter((example) => example.kind === 'run').map((example) => [named(example), example]))(
    '%s runs without throwing',
    async (_, example) => {
      tenant = backend.createTenant();
      const place = placeOf(example);
      // Written elsewhere than beside its file, so its relative imports are made absolute.
      const code = example.code.replace(/(from\s+|import\s+)'(\.{1,2}\/[^']+)'/g, (_, keyword, specifier) => {
        const target = resolve(dirname(place), specifier).replace(/\.js$/, '.ts');
        return `${keyword}'${pathToFileURL(target).href}'`;
      });
      const file = join(folder, `${basename(place, '.ts')}.ts`);
      writeFileSync(file, `${code}\nexport {};\n`);
      const givens = runtimeGivens(backend, tenant);
      const saved = Object.fromEntries(
        Object.keys(givens).map((name) => [name, Reflect.get(globalThis, name)]),
      );
      Object.assign(globalThis, givens);
      // What an example prints is for its reader: kept from the console, which fails a test that writes to it.
      const printed = vi.spyOn(console, 'log').mockImplementation(() => {});
      try {
        await import(pathToFileURL(file).href);
      } finally {
        printed.mockRestore();
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) Reflect.deleteProperty(globalThis, name);
          else Reflect.set(globalThis, name, value);
        }
      }
    },
  );
});
