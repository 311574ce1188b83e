import { globSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Vitest } from 'vitest/node';
import config from '../../vitest.config.js';
import { PROCESSES } from './processes.js';
import { SHARED_MODULES } from './shared-modules.js';
import SummaryReporter from './summary-reporter.js';
import { root, testCodeOf } from './test-code.js';

/** The tests' helpers that start the kit's processes or install its packed packages. */
const STARTS_PROCESSES = [
  'test/cli/support/processes.ts',
  'test/soak/processes.ts',
  'test/e2e/support/packages.ts',
];

const files = (patterns: readonly string[]) => new Set(globSync([...patterns], { cwd: root }));
const everyTestFile = files(['test/**/*.test.ts', 'examples/**/*.test.ts']);

describe('the processes project (test/setup/processes.ts)', () => {
  it('has no pattern that matches no file, and shares no file with the shared-modules project', () => {
    expect(PROCESSES.filter((pattern) => globSync(pattern, { cwd: root }).length === 0)).toEqual([]);
    const shared = files(SHARED_MODULES);
    expect([...files(PROCESSES)].filter((file) => shared.has(file))).toEqual([]);
  });

  it('lists every file whose test code starts the kit’s processes through the tests’ helpers', () => {
    const listed = files(PROCESSES);
    const unlisted = [...everyTestFile]
      .filter((file) => !listed.has(file))
      .flatMap((file) =>
        [...testCodeOf(join(root, file)).keys()]
          .map((path) => relative(root, path))
          .filter((path) => STARTS_PROCESSES.includes(path))
          .map((helper) => `${file}: ${helper}`),
      );
    expect(unlisted).toEqual([]);
  });

  it('leaves no test file out of both `npm test` and `npm run test:processes`, and CI runs both', () => {
    const projects = (config.test?.projects ?? []) as {
      test: { name: string; include?: string[]; exclude?: string[] };
    }[];
    expect(projects.map(({ test }) => test.name)).toEqual([
      'shared-modules',
      'isolated',
      'processes',
      'types',
    ]);
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<
      string,
      string
    >;
    expect(scripts.test).toMatch(/vitest run --project shared-modules --project isolated$/);
    expect(scripts['test:processes']).toBe('vitest run --project processes');
    // test:all: every project, the type tests left to the type-check as in `npm test`.
    expect(scripts['test:all']).toMatch(
      /^npm run typecheck && npm run lint && vitest run --typecheck\.enabled=false$/,
    );
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    expect(ci).toMatch(/^npm test$/m);
    expect(ci).toMatch(/^npm run test:processes$/m);
    // The isolated project takes every test file the other two do not: the three together are every test file.
    const isolated = projects[1]!;
    expect(isolated.test.include).toEqual(['test/**/*.test.ts', 'examples/**/*.test.ts']);
    expect(isolated.test.exclude).toEqual(expect.arrayContaining([...SHARED_MODULES, ...PROCESSES]));
  });

  it.each([
    [['shared-modules', 'isolated', 'processes'], false],
    [['shared-modules', 'isolated'], true],
  ])('with the projects %j, the run’s last lines name `npm run test:processes`: %s', (names, named) => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => written.push(String(chunk)) > 0);
    const reporter = new SummaryReporter();
    reporter.onInit({ projects: names.map((name) => ({ name })) } as unknown as Vitest);
    reporter.onTestRunEnd([]);
    vi.restoreAllMocks();
    expect(written.join('').includes('`npm run test:processes` runs them')).toBe(named);
    expect(written.at(-1)).toBe('\n0 passed, 0 failed\n');
  });
});
