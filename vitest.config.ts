import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { PROCESSES } from './test/setup/processes.js';
import PackagesFirstSequencer from './test/setup/sequencer.js';
import { SHARED_MODULES } from './test/setup/shared-modules.js';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // Examples import the package by its name, as a user would; inside the repo that is the source.
  resolve: {
    alias: [
      {
        find: /^approval-connector-kit\/(backend|client|conformance|testing|worker)$/,
        replacement: source('./src/$1/index.ts'),
      },
      { find: /^approval-connector-kit$/, replacement: source('./src/index.ts') },
    ],
  },
  test: {
    setupFiles: [
      'test/setup/fail-on-console.ts',
      'test/setup/fail-on-unhandled-rejection.ts',
      'test/setup/clean-between-files.ts',
    ],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    // Most test files spend their time waiting on processes and sockets of their own, not on this one: a worker per
    // core, rather than vitest's one less, keeps the cores busy (on 2 cores, one worker would run every file in turn).
    maxWorkers: availableParallelism(),
    sequence: { sequencer: PackagesFirstSequencer },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // `npm test` runs the first two projects, the tests in the test's own process; `npm run test:processes` the third,
    // the tests of processes and packed packages (test/setup/processes.ts); `npm run test:all`, every one.
    projects: [
      {
        // Which files share their workers' modules, and why: test/setup/shared-modules.ts.
        // test/setup/clean-between-files.ts puts back what a test may leave.
        extends: true,
        test: {
          name: 'shared-modules',
          include: SHARED_MODULES,
          isolate: false,
          globalSetup: ['test/setup/console-page.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SHARED_MODULES, ...PROCESSES],
          globalSetup: ['test/setup/console-page.ts', 'test/setup/browser.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: PROCESSES,
          globalSetup: ['test/setup/console-page.ts', 'test/setup/run-folder.ts'],
        },
      },
      {
        // The type tests. `npm test` and `npm run test:all` leave them to their own type-check, which checks the same
        // files and runs first: `npm test` selects the other projects, and `test:all` runs `vitest run
        // --typecheck.enabled=false`, a flag vitest does not pass on to a project.
        extends: true,
        test: {
          name: 'types',
          include: [],
          typecheck: {
            enabled: !process.argv.includes('--typecheck.enabled=false'),
            only: true,
            include: ['test/**/*.test-d.ts'],
            tsconfig: './tsconfig.json',
          },
        },
      },
    ],
  },
});
