import { dirname, relative, resolve } from 'node:path';
import { defineConfig, type Options } from 'tsup';

type TsupPlugin = NonNullable<Options['plugins']>[number];
type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/**
 * Makes the built Node version check (`dist/node-guard.js`) the first import of every entry file whose source
 * imports `node-guard.js`, so that it runs before anything else of the kit.
 *
 * Bundled like any module, it would not reliably run first: esbuild hoists a chunk's imports above its code and
 * does not keep their order across chunks, so undici could crash on an old Node before the guard ran. So inside the
 * bundle the guard's import resolves to an empty module, and each entry that had one imports the guard, built as
 * its own entry, ahead of everything.
 */
const nodeGuardFirst = (() => {
  const guardedEntries = new Set<string>();
  const esbuildPlugin: EsbuildPlugin = {
    name: 'node-guard-import',
    setup(build) {
      build.onResolve({ filter: /[\\/]node-guard\.js$/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        guardedEntries.add(args.importer);
        return { path: args.path, namespace: 'node-guard' };
      });
      build.onLoad({ filter: /.*/, namespace: 'node-guard' }, () => ({ contents: '', loader: 'js' }));
    },
  };
  const tsupPlugin: TsupPlugin = {
    name: 'node-guard-first',
    renderChunk(code, chunk) {
      if (chunk.entryPoint === undefined || !guardedEntries.has(resolve(chunk.entryPoint))) return undefined;
      const guard = relative(dirname(chunk.path), resolve(this.options.outDir, 'node-guard.js'));
      // On the first line, so that the source map's lines still match.
      return { code: `import '${guard.startsWith('.') ? guard : `./${guard}`}';${code}` };
    },
  };
  return { esbuildPlugin, tsupPlugin };
})();

/**
 * The console's page (`src/backend/console/page/`), for the browser: one script and its stylesheet in
 * `dist/console/`, everything they use bundled in (tweetnacl and the kit's own sealing code), no source map. The
 * backend reads them from there; tests build it with this same configuration (test/setup/console-page.ts).
 */
export const consolePage: Options = {
  entry: { app: 'src/backend/console/page/main.ts' },
  outDir: 'dist/console',
  format: ['iife'],
  outExtension: () => ({ js: '.js' }),
  platform: 'browser',
  target: 'es2022',
  minify: true,
  noExternal: [/./],
  dts: false,
  sourcemap: false,
  clean: true,
  tsconfig: 'src/backend/console/page/tsconfig.json',
};

export default defineConfig([
  {
    entry: {
      'node-guard': 'src/node-guard.ts',
      'check-node': 'src/check-node.ts',
      index: 'src/index.ts',
      'client/index': 'src/client/index.ts',
      'backend/index': 'src/backend/index.ts',
      'worker/index': 'src/worker/index.ts',
      'testing/index': 'src/testing/index.ts',
      'conformance/index': 'src/conformance/index.ts',
      'cli/connector': 'src/cli/connector.ts',
    },
    format: ['esm'],
    target: 'node22',
    platform: 'node',
    // Builtins keep the `node:` prefix the source gives them: some (`node:sqlite`) exist only under that name.
    removeNodeProtocol: false,
    dts: true,
    sourcemap: true,
    // Everything but the console's page, which its own build (below) writes at the same time.
    clean: ['!console/**'],
    splitting: true,
    treeshake: true,
    // Errors are named after their class (`this.name = new.target.name`); esbuild would otherwise rename a class
    // that refers to itself, and a ServiceError would print as `_ServiceError`.
    keepNames: true,
    // Loaded only where the application installed it (src/worker/process/tracing-sdk.ts), never bundled: a
    // devDependency, which tsup would otherwise bundle.
    external: ['@opentelemetry/sdk-node'],
    esbuildPlugins: [nodeGuardFirst.esbuildPlugin],
    plugins: [nodeGuardFirst.tsupPlugin],
  },
  consolePage,
]);
