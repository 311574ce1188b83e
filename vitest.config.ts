import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import PackagesFirstSequencer from './test/setup/sequencer.js';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * A test file's name says which project runs it, by the suffix before `.test.ts` (docs/testing.md):
 * `.process.test.ts`, a file that starts processes or packs packages; `.isolated.test.ts`, one that mocks, changes
 * the process (its directory, environment, signal handlers) or intercepts HTTP; a plain `.test.ts`, one that leaves
 * the process as it found it, run with shared modules. test/setup/processes.test.ts and
 * test/setup/shared-modules.test.ts check the names against what the files do.
 */
const FOLDERS = ['test', 'examples'];
const PROCESS_FILES = FOLDERS.map((folder) => `${folder}/**/*.process.test.ts`);
const ISOLATED_FILES = FOLDERS.map((folder) => `${folder}/**/*.isolated.test.ts`);

/**
 * The workers of `npm test`'s projects: two a core. Their files mostly wait on timers, deadlines and sockets of the
 * test's own (the conformance battery above all), so that a worker a core leaves the cores idle. Measured in
 * docs/testing.md.
 */
const IN_PROCESS_WORKERS = 2 * availableParallelism();

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
    // The process tests' files spend their time waiting on processes of their own, which take the cores: a worker per
    // core, rather than vitest's one less, keeps the cores busy (on 2 cores, one worker would run every file in turn).
    maxWorkers: availableParallelism(),
    sequence: { sequencer: PackagesFirstSequencer },
    // The kit's devDependencies hold the OpenTelemetry Node SDK, which a worker process starts when it finds it: off in
    // every test and every process a test starts, unless the test turns it on (docs/tracing.md).
    env: { OTEL_SDK_DISABLED: 'true' },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // `npm test` runs the first two projects, the tests in the test's own process; `npm run test:processes` the third,
    // the tests of processes and packed packages (`*.process.test.ts`); `npm run test:all`, every one.
    projects: [
      {
        // The plain `*.test.ts` files share their workers' modules; test/setup/clean-between-files.ts puts back what
        // a test may leave.
        extends: true,
        test: {
          name: 'shared-modules',
          maxWorkers: IN_PROCESS_WORKERS,
          include: FOLDERS.map((folder) => `${folder}/**/*.test.ts`),
          exclude: [...configDefaults.exclude, ...PROCESS_FILES, ...ISOLATED_FILES],
          isolate: false,
          globalSetup: ['test/setup/console-page.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          maxWorkers: IN_PROCESS_WORKERS,
          include: ISOLATED_FILES,
          globalSetup: ['test/setup/console-page.ts', 'test/setup/browser.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: PROCESS_FILES,
          // Vitest runs projects of different worker counts as groups, one after another: in `npm run test:all`, the
          // process tests come after the others.
          sequence: { groupOrder: 1 },
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
          sequence: { groupOrder: 2 },
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
