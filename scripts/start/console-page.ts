/**
 * The console's page, built only when it is not current: `npm start` needs nothing else of the kit's build (the
 * workers and the backend run from the sources), and a build of the whole package takes many seconds and prints
 * many lines. The page is current when both its files are newer than every file under `src/` and than the build's
 * configuration; otherwise it is built quietly, with the package build's own configuration for it.
 * @module
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE_FILES = ['app.js', 'app.css'].map((name) => join(ROOT, 'dist', 'console', name));

/** When a file was last changed, in ms; `undefined` when it does not exist. */
function changedAt(path: string): number | undefined {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}

/** The last change of any file under `folder`. */
function newestUnder(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, changedAt(join(entry.parentPath, entry.name)) ?? 0);
  }
  return newest;
}

/** Whether the console's page in `dist/console/` is missing or older than its sources. */
export function consolePageStale(): boolean {
  const built = PAGE_FILES.map(changedAt);
  if (built.some((time) => time === undefined)) return true;
  const sources = Math.max(newestUnder(join(ROOT, 'src')), changedAt(join(ROOT, 'tsup.config.ts')) ?? 0);
  return Math.min(...(built as number[])) < sources;
}

/** Builds the console's page when it is stale, quietly; says so in one line through `print` when it does. */
export async function ensureConsolePage(print: (line: string) => void): Promise<void> {
  if (!consolePageStale()) return;
  print('Building the console page (dist/console/), which has changed since its last build…');
  // Loaded only here: a current page costs no bundler.
  const [{ build }, { consolePage }] = await Promise.all([import('tsup'), import('../../tsup.config.js')]);
  await build({ ...consolePage, config: false, silent: true });
}
