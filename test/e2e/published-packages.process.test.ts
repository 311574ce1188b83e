import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokenLinks, linksOf } from '../docs/support/links.js';
import { filesOf, packedPackages, run, succeed } from './support/packages.js';

// The two packages as npm publishes them: packed from what a fresh clone holds, then unpacked, so that what is
// checked is what a user gets in node_modules.

const PACKAGES = ['.', 'packages/create-connector'] as const;

interface Manifest {
  name: string;
  version: string;
  repository?: { type: string; url: string; directory?: string };
  homepage?: string;
  bugs?: { url: string };
  dependencies?: Record<string, string>;
}

interface Unpacked {
  folder: string;
  files: string[];
  manifest: Manifest;
}

let work: string;
const unpacked = new Map<string, Unpacked>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'published-packages-'));
  const { kit, createConnector } = await packedPackages();
  const tarballs = [kit, createConnector];
  for (const [index, tarball] of tarballs.entries()) {
    const folder = join(work, 'unpacked', String(index));
    mkdirSync(folder, { recursive: true });
    await succeed('tar', ['-xzf', tarball, '-C', folder, '--strip-components=1'], work);
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Manifest;
    unpacked.set(PACKAGES[index]!, { folder, files: await filesOf(tarball), manifest });
  }
}, 300_000);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

const kit = () => unpacked.get('.')!;
const create = () => unpacked.get('packages/create-connector')!;

describe.for(PACKAGES)('the package published from %s', (dir) => {
  it('resolves every relative link and #anchor of every markdown file it holds within itself', () => {
    const { folder, files } = unpacked.get(dir)!;
    const markdown = files.filter((file) => file.endsWith('.md'));
    expect(markdown).toContain('README.md');
    // Not a check of nothing: the package's markdown holds links.
    const links = markdown.flatMap((file) => linksOf(readFileSync(join(folder, file), 'utf8')));
    expect(links.length).toBeGreaterThan(0);
    expect(brokenLinks(folder, files)).toEqual([]);
  });

  it('is published by npm as it is written: npm publish --dry-run corrects and warns of nothing', async () => {
    const { folder, files } = unpacked.get(dir)!;
    // The unpacked package, as the registry would get it; --offline, so nothing is sent anywhere.
    const outcome = await run(
      'npm',
      ['publish', '--dry-run', '--offline', '--ignore-scripts', '--json', '--loglevel=warn'],
      { cwd: folder },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    // Only the dry run's own note that nobody is logged in.
    const warnings = outcome.stderr
      .split('\n')
      .filter((line) => /^npm (warn|error)/i.test(line) && !line.includes('requires you to be logged in'));
    expect(warnings).toEqual([]);
    const published = Object.values(
      JSON.parse(outcome.stdout) as Record<string, { files: { path: string }[] }>,
    );
    expect(published.flatMap(({ files: listed }) => listed.map(({ path }) => path)).sort()).toEqual(
      [...files].sort(),
    );
  });

  it('names its repository, home page and issue tracker, the same for both packages', () => {
    const { manifest } = unpacked.get(dir)!;
    const repository = kit()
      .manifest.repository!.url.replace(/^git\+/, '')
      .replace(/\.git$/, '');
    expect(repository).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
    expect(manifest.repository).toMatchObject({ type: 'git', url: `git+${repository}.git` });
    expect(manifest.homepage?.startsWith(repository)).toBe(true);
    expect(manifest.bugs).toEqual({ url: `${repository}/issues` });
  });

  it('links to the repository, where its markdown links outside the package, at that same address', () => {
    const { folder, files } = unpacked.get(dir)!;
    const repository = kit()
      .manifest.repository!.url.replace(/^git\+/, '')
      .replace(/\.git$/, '');
    const github = files
      .filter((file) => file.endsWith('.md'))
      .flatMap((file) => linksOf(readFileSync(join(folder, file), 'utf8')))
      .map(({ target }) => target)
      .filter((target) => target.startsWith('https://github.com/'));
    expect(github.filter((target) => !target.startsWith(`${repository}/`))).toEqual([]);
  });
});

describe('the two packages, as published', () => {
  it('create-connector depends on exactly the kit published beside it', () => {
    expect(create().manifest.version).toBe(kit().manifest.version);
    expect(create().manifest.dependencies).toEqual({ [kit().manifest.name]: kit().manifest.version });
  });

  it('the kit ships its documentation, which its help and the examples’ READMEs refer to', () => {
    expect(kit().files).toEqual(
      expect.arrayContaining(['docs/worker.md', 'docs/failure-mapping.md', 'docs/create-connector.md']),
    );
  });
});
