import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import PackagesFirstSequencer from './test/setup/sequencer.js';

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
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    globalSetup: ['test/setup/console-page.ts', 'test/setup/browser.ts', 'test/setup/run-folder.ts'],
    setupFiles: ['test/setup/fail-on-console.ts', 'test/setup/fail-on-unhandled-rejection.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    // The type tests. `npm test` leaves them to its own `tsc --noEmit`, which checks the same files and runs first.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    // Most test files spend their time waiting on processes and sockets of their own, not on this one: a worker per
    // core, rather than vitest's one less, keeps the cores busy (on 2 cores, one worker would run every file in turn).
    maxWorkers: availableParallelism(),
    sequence: { sequencer: PackagesFirstSequencer },
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
