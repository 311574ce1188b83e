import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectOf, root, testCodeOf, testFiles } from './test-code.js';

const sources = join(root, 'src') + sep;

/**
 * What a file of the shared-modules project (a plain `*.test.ts`) must not do: each would outlive the file, in the
 * worker the next one gets. A file that does one of them is an `*.isolated.test.ts` (or a `*.process.test.ts`).
 */
const OUTLIVES_THE_FILE: readonly (readonly [RegExp, string])[] = [
  [/\bvi\.(?:doM|m)ock\(/, 'mocks a module'],
  [
    /\bfrom ['"]nock['"]|\bimport\(['"]nock['"]\)/,
    'intercepts HTTP with nock, which stays active once loaded',
  ],
  [/\bprocess\.chdir\(/, 'changes the directory'],
  [
    /\bprocess\.(?:on|once|addListener|prependListener|prependOnceListener)\(/,
    'listens to the process (a signal handler)',
  ],
  [
    /\bprocess\.env(?:\.\w+|\[[^\]]+\])\s*=(?!=)|\bdelete process\.env\b/,
    'changes the environment (vi.stubEnv is put back after the file)',
  ],
  [
    /\b(?:setGlobalTracerProvider|setGlobalContextManager|setGlobalPropagator|installTracing)\(/,
    'registers a global OpenTelemetry provider, context manager or propagator',
  ],
];

/** What `file`, or the test code it imports, does that would outlive it: "<file>: <what>", one for each. */
function whatOutlives(file: string): string[] {
  return [...testCodeOf(file)].flatMap(([path, text]) =>
    OUTLIVES_THE_FILE.filter(([pattern]) => pattern.test(text)).map(
      ([, what]) => `${relative(root, path)}: ${what}`,
    ),
  );
}

describe('the shared-modules project (the plain `*.test.ts` files)', () => {
  it('has only files that leave the process as they found it, with what they import from the tests', () => {
    const files = testFiles()
      .filter((file) => projectOf(file) === 'shared-modules')
      .map((file) => join(root, file));
    expect(files.length).toBeGreaterThan(0);
    expect(files.flatMap(whatOutlives)).toEqual([]);
  });

  it('has no file whose name misspells another project’s suffix, which would share its modules unchecked', () => {
    const misspelt = testFiles().filter(
      (file) =>
        projectOf(file) === 'shared-modules' &&
        /\.(?:process|isolat|shared)\w*\./i.test(file.slice(file.lastIndexOf('/'))),
    );
    expect(misspelt).toEqual([]);
  });

  describe('the check', () => {
    const folder = mkdtempSync(join(tmpdir(), 'shared-modules-'));
    afterAll(() => rmSync(folder, { recursive: true, force: true }));

    // Written from pieces, so that this file's own text does not hold what it looks for.
    const sample = {
      mock: `vi.${'mock'}('node:fs');`,
      nock: `import nock from '${'nock'}';`,
      chdir: `process.${'chdir'}('/');`,
      handler: `process.${'once'}('SIGTERM', () => {});`,
      env: `process.${'env'}.LOG_LEVEL = 'debug';`,
      deleted: `delete process.${'env'}.LOG_LEVEL;`,
      tracing: `trace.${'setGlobalTracerProvider'}(provider);`,
    };

    it.each(Object.entries(sample))('finds a file that does it itself: %s', (name, line) => {
      const file = join(folder, `${name}.test.ts`);
      writeFileSync(file, `${line}\n`);
      expect(whatOutlives(file)).toHaveLength(1);
    });

    it('finds it in test code the file imports, through a .js specifier, but not in the kit’s source', () => {
      writeFileSync(join(folder, 'helper.ts'), `${sample.handler}\n`);
      writeFileSync(join(folder, 'through.test.ts'), `import { x } from './helper.js';\n`);
      expect(whatOutlives(join(folder, 'through.test.ts'))).toEqual([
        `${relative(root, join(folder, 'helper.ts'))}: listens to the process (a signal handler)`,
      ]);
      // The connector command listens to its process, which is what it is for: the kit's source is under test.
      const command = join(sources, 'cli', 'connector.ts');
      expect(OUTLIVES_THE_FILE[3]![0].test(readFileSync(command, 'utf8'))).toBe(true);
      const specifier = relative(folder, command).replace(/\.ts$/, '.js');
      writeFileSync(join(folder, 'runs-the-command.test.ts'), `import { main } from '${specifier}';\n`);
      expect(whatOutlives(join(folder, 'runs-the-command.test.ts'))).toEqual([]);
    });

    it('leaves a file alone that reads the environment, compares it or stubs it', () => {
      const file = join(folder, 'reads.test.ts');
      writeFileSync(
        file,
        `const seed = process.${'env'}.SEED;\nif (process.${'env'}.CI === 'true') {}\nvi.stubEnv('LOG_LEVEL', 'debug');\n`,
      );
      expect(whatOutlives(file)).toEqual([]);
    });
  });
});
