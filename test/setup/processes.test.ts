import { globSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { configDefaults } from 'vitest/config';
import type { Vitest } from 'vitest/node';
import config from '../../vitest.config.js';
import SummaryReporter from './summary-reporter.js';
import { projectOf, root, testCodeOf, testFiles } from './test-code.js';

/** The tests' helpers that start the kit's processes or install its packed packages. */
const STARTS_PROCESSES = [
  'test/cli/support/processes.ts',
  'test/soak/processes.ts',
  'test/e2e/support/packages.ts',
  'test/e2e/support/children.ts',
];

const projects = (config.test?.projects ?? []) as {
  test: { name: string; include?: string[]; exclude?: string[] };
}[];

describe('the processes project (the `*.process.test.ts` files)', () => {
  it('is one of three projects that each take the files of their suffix, every test file in one of them', () => {
    const matched = new Map<string, string[]>();
    for (const { test } of projects.slice(0, 3)) {
      const files = globSync(test.include ?? [], {
        cwd: root,
        exclude: test.exclude ?? configDefaults.exclude,
      });
      expect(files.length, test.name).toBeGreaterThan(0);
      for (const file of files) matched.set(file, [...(matched.get(file) ?? []), test.name]);
    }
    const elsewhere = testFiles()
      .map((file) => `${file}: ${matched.get(file)?.join(', ') ?? 'no project'}`)
      .filter((line) => !line.endsWith(`: ${projectOf(line.slice(0, line.indexOf(':')))}`));
    expect(elsewhere).toEqual([]);
    expect([...matched.keys()].filter((file) => !file.endsWith('.test.ts'))).toEqual([]);
  });

  it('has every file whose test code starts the kit’s processes through the tests’ helpers', () => {
    const misnamed = testFiles()
      .filter((file) => projectOf(file) !== 'processes')
      .flatMap((file) =>
        [...testCodeOf(join(root, file)).keys()]
          .map((path) => relative(root, path))
          .filter((path) => STARTS_PROCESSES.includes(path))
          .map((helper) => `${file}: ${helper}`),
      );
    expect(misnamed).toEqual([]);
  });

  it('can run with the other projects: projects of different worker counts have group orders of their own', () => {
    // Vitest refuses to run two projects of different maxWorkers in one group: `npm run test:all` and a plain
    // `vitest run <files>` once ran nothing, when npm test's projects got two workers a core.
    const groups = new Map<number, Set<unknown>>();
    for (const { test } of projects as {
      test: { maxWorkers?: unknown; sequence?: { groupOrder?: number } };
    }[]) {
      const order = test.sequence?.groupOrder ?? 0;
      groups.set(order, (groups.get(order) ?? new Set()).add(test.maxWorkers ?? config.test?.maxWorkers));
    }
    expect([...groups.values()].filter((workers) => workers.size > 1)).toEqual([]);
  });

  it('leaves no test file out of both `npm test` and `npm run test:processes`, and CI runs both', () => {
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
    // Each project takes the files of its suffix; the shared-modules project every other: the three together are
    // every test file.
    const [shared, isolated, processes] = projects;
    expect(shared!.test.include).toEqual(['test/**/*.test.ts', 'examples/**/*.test.ts']);
    expect(shared!.test.exclude).toEqual([
      ...configDefaults.exclude,
      'test/**/*.process.test.ts',
      'examples/**/*.process.test.ts',
      'test/**/*.isolated.test.ts',
      'examples/**/*.isolated.test.ts',
    ]);
    expect(isolated!.test.include).toEqual(['test/**/*.isolated.test.ts', 'examples/**/*.isolated.test.ts']);
    expect(isolated!.test.exclude).toBeUndefined();
    expect(processes!.test.include).toEqual(['test/**/*.process.test.ts', 'examples/**/*.process.test.ts']);
    expect(processes!.test.exclude).toBeUndefined();
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
