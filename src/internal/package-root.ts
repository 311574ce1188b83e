import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The kit's own folder, the one holding its package.json (and `dist/`, `templates/`): found from this module's
 * file, which is in `src/` when the kit runs from its sources and in `dist/` once built, bundled into whichever
 * file imports it.
 */
export function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
