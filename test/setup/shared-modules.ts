/**
 * The test files that run the code under test in their own process, and leave that process as they found it: they
 * run without isolation (the `shared-modules` project of vitest.config.ts), one after another in a worker that keeps
 * the modules it loaded, about a second of CPU saved per file. A file that changes the process (its directory,
 * signal handlers, environment), mocks a module, or intercepts HTTP (nock, which stays active in a process once
 * loaded), belongs to the isolated project: test/setup/shared-modules.test.ts checks the files listed here, and what
 * they import from the tests' own folders. The files whose cost is the processes they start are the `processes`
 * project's (test/setup/processes.ts), each isolated too: sharing modules would save them little.
 */
export const SHARED_MODULES = [
  'test/*.test.ts',
  'test/api/**/*.test.ts',
  'test/backend/*.test.ts',
  'test/backend/console/console.test.ts',
  'test/backend/console/live.test.ts',
  'test/cli/command-line.test.ts',
  'test/cli/create-command.test.ts',
  'test/cli/dev/board.test.ts',
  'test/cli/dev/output.test.ts',
  'test/cli/dev/rebuild.test.ts',
  'test/cli/dev/status.test.ts',
  'test/cli/scaffold.test.ts',
  'test/cli/templates.test.ts',
  'test/client/**/*.test.ts',
  'test/conformance/battery.test.ts',
  'test/conformance/driver-close.test.ts',
  'test/conformance/precheck-success-verdict.test.ts',
  'test/conformance/templates.test.ts',
  'test/connector/*.test.ts',
  'test/deploy/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/e2e/clients-against-backend/*.test.ts',
  'test/internal/**/*.test.ts',
  'test/setup/*.test.ts',
  'test/soak/fault-proxy.test.ts',
  'test/soak/source.test.ts',
  'test/testing/**/*.test.ts',
  // The worker's files, but for those that start processes, stop on signals, change directory or mock a module.
  'test/worker/!(worker-process|shutdown|tasks|operations|lifecycle|default-key-store).e2e.test.ts',
  'test/worker/!(key-store|*.e2e).test.ts',
  'test/worker/tasks/*.test.ts',
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
