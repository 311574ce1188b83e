/**
 * The test files whose subject is a process or a package as a user gets it: the `connector` command's processes
 * (run, dev, backend, keys, verify), workers stopped by signals and SIGKILL, the soak, and the packed packages
 * installed into generated projects, on Node 20 too, `npm start` and `npm run try`. They are the `processes` project of
 * vitest.config.ts, which `npm run test:processes` runs (CI runs it after `npm test`; `npm run test:all` runs both
 * at once): each starts processes that take a second or more of CPU, and together they cost about three times the
 * CPU of every other test (docs/testing.md). test/setup/processes.test.ts checks that a file that starts the kit's
 * processes through the tests' helpers is listed here.
 */
export const PROCESSES = [
  // The connector command, each as a process of its own.
  'test/cli/backend-command.test.ts',
  'test/cli/connector-command.test.ts',
  'test/cli/dev-command.e2e.test.ts',
  'test/cli/dev/session.e2e.test.ts',
  'test/cli/keys-command.test.ts',
  'test/cli/run-command.e2e.test.ts',
  'test/cli/task-workers.e2e.test.ts',
  'test/cli/verify-command.e2e.test.ts',
  // Workers killed, stopped by signals, or run by node:test; the soak.
  'test/conformance/node-test.e2e.test.ts',
  'test/conformance/sigkill.test.ts',
  'test/soak/soak.e2e.test.ts',
  'test/worker/worker-process.e2e.test.ts',
  // The packed packages, the generated projects of every template, Node 20, and the repository's `npm start`.
  'test/e2e/create-connector.test.ts',
  'test/e2e/installed-package.test.ts',
  'test/e2e/older-node-project.test.ts',
  'test/e2e/published-packages.test.ts',
  'test/e2e/start.test.ts',
  'test/e2e/try.test.ts',
  'test/e2e/templates/*.test.ts',
];
