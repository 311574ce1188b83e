import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'backend/index': 'src/backend/index.ts',
    'testing/index': 'src/testing/index.ts',
    'cli/connector': 'src/cli/connector.ts',
  },
  format: ['esm'],
  target: 'node22',
  platform: 'node',
  // `node:sqlite` exists only under its `node:` name; the prefix must survive the build.
  removeNodeProtocol: false,
  dts: true,
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
});
