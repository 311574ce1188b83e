import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import PackagesFirstSequencer from './test/setup/sequencer.js';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The test files that run the code under test in their own process, and leave that process as they found it: they
 * run without isolation, one after another in a worker that keeps the modules it loaded (about a second of CPU saved
 * per file). A file that changes the process (its directory, signal handlers, environment), mocks a module, or
 * intercepts HTTP (nock, which stays active in a process once loaded), belongs to the isolated project. So do the
 * files whose cost is the processes they start (the CLI's, the packages' and the templates' end-to-end tests): they
 * would save little here, and use the isolated project's global setups (the browser, the run folder).
 */
const SHARED_MODULES = [
  'test/*.test.ts',
  'test/api/**/*.test.ts',
  'test/backend/*.test.ts',
  'test/backend/console/console.test.ts',
  'test/backend/console/live.test.ts',
  'test/client/**/*.test.ts',
  'test/internal/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/deploy/**/*.test.ts',
  'test/testing/**/*.test.ts',
  'test/setup/*.test.ts',
  'test/cli/dev/board.test.ts',
  'test/cli/dev/output.test.ts',
  'test/cli/dev/rebuild.test.ts',
  'test/cli/dev/status.test.ts',
  'test/cli/create-command.test.ts',
  'test/cli/scaffold.test.ts',
  'test/cli/templates.test.ts',
  'test/e2e/clients-against-backend.test.ts',
  'test/cli/command-line.test.ts',
  'test/conformance/battery.test.ts',
  'test/conformance/driver-close.test.ts',
  'test/conformance/precheck-success-verdict.test.ts',
  'test/conformance/templates.test.ts',
  'test/connector/*.test.ts',
  'test/soak/fault-proxy.test.ts',
  'test/soak/source.test.ts',
  // The worker's files, but for those that start processes, stop on signals, change directory or mock a module.
  'test/worker/!(worker-process|shutdown|tasks|operations|lifecycle|default-key-store).e2e.test.ts',
  'test/worker/!(key-store|*.e2e).test.ts',
  // The examples' files, but for those that intercept HTTP with nock (mock-jira.ts, mock-sap.ts) or start processes.
  'examples/jira-connector/test/conformance.test.ts',
  'examples/jira-connector/test/connector.e2e.test.ts',
  'examples/jira-connector/test/contract/contract.test.ts',
  'examples/jira-connector/test/environment.test.ts',
  'examples/purchase-requests/connector.test.ts',
  'examples/sap-connector/test/conformance.test.ts',
  'examples/sap-connector/test/connector.e2e.test.ts',
  'examples/sap-connector/test/odata.test.ts',
  'examples/sap-connector/test/simulator-query.test.ts',
];

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
    projects: [
      {
        // Loading the kit's modules afresh for each file costs a second of CPU per file: the files that run
        // everything in this process, and change none of its state (cwd, signals, environment, mocked modules),
        // share the workers' modules. test/setup/clean-between-files.ts puts back what a test may leave.
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
          exclude: [...configDefaults.exclude, ...SHARED_MODULES],
          globalSetup: ['test/setup/console-page.ts', 'test/setup/browser.ts', 'test/setup/run-folder.ts'],
        },
      },
      {
        // The type tests. `npm test` leaves them to its own `tsc --noEmit`, which checks the same files and runs
        // first: it runs `vitest run --typecheck.enabled=false`, a flag vitest does not pass on to a project.
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
