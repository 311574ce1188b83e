import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // Examples import the package by its name, as a user would; inside the repo that is the source.
  resolve: {
    alias: [
      {
        find: /^approval-connector-kit\/(backend|client|testing)$/,
        replacement: source('./src/$1/index.ts'),
      },
      { find: /^approval-connector-kit$/, replacement: source('./src/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    globalSetup: ['test/setup/console-page.ts', 'test/setup/browser.ts'],
    setupFiles: ['test/setup/fail-on-console.ts', 'test/setup/fail-on-unhandled-rejection.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
