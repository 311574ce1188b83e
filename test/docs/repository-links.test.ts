import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenLinks, linksOf } from './support/links.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** What is not the repository's own: installed packages, builds, caches. */
const SKIPPED = new Set(['node_modules', 'dist', '.git', 'coverage', '.cache']);

/** The files under `folder`, relative to it, with `/`. */
function filesUnder(folder: string, from = folder): string[] {
  return readdirSync(from, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = join(from, entry.name);
    if (entry.isDirectory()) return filesUnder(folder, path);
    return [relative(folder, path).split('\\').join('/')];
  });
}

describe("the repository's markdown", () => {
  it('resolves every relative link and #anchor within the repository, as a reader on GitHub follows them', () => {
    const files = filesUnder(ROOT);
    const markdown = files.filter((file) => file.endsWith('.md'));
    // Not a check of nothing: the docs link to each other's headings hundreds of times.
    const links = markdown.flatMap((file) => linksOf(readFileSync(join(ROOT, file), 'utf8')));
    expect(links.filter(({ target }) => target.includes('#')).length).toBeGreaterThan(100);
    expect(brokenLinks(ROOT, files)).toEqual([]);
  });

  it('finds a link to a heading that is gone, as when docs/benchmarks.md lost its headings', () => {
    const folder = mkdtempSync(join(tmpdir(), 'links-'));
    try {
      writeFileSync(join(folder, 'a.md'), 'See [push](b.md#push-latency) and [sync](b.md#sync).\n');
      writeFileSync(join(folder, 'b.md'), '# Benchmarks\n\n## Sync\n\nmeasured in the full run\n');
      expect(brokenLinks(folder, filesUnder(folder))).toEqual([
        { file: 'a.md', line: 1, target: 'b.md#push-latency', problem: 'b.md has no heading #push-latency' },
      ]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
