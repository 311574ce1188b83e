import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('the README', () => {
  const readme = read('README.md');

  it.each(['examples/purchase-requests/connector.ts', 'examples/purchase-requests/connector.test.ts'])(
    'quotes %s as it is, so the example it shows compiles and passes',
    (path) => {
      expect(readme).toContain(read(path).trimEnd());
    },
  );

  it('shows a minimal connector of under 60 lines', () => {
    expect(read('examples/purchase-requests/connector.ts').trimEnd().split('\n').length).toBeLessThan(60);
  });

  it('gives the two set-up commands, and they exist', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(scripts.start).toBe('node --import tsx scripts/start/main.ts');
    expect(existsSync(new URL('../scripts/start/main.ts', import.meta.url))).toBe(true);
    expect(scripts.test).toContain('vitest run');
  });

  it('starts a new connector with the two commands that run the create-connector package', () => {
    expect(readme).toContain('npx create-connector my-connector');
    expect(readme).toContain('npm create connector@latest my-connector');
    // `npm create connector` runs the package named `create-connector`, whose command is `create-connector`.
    const manifest = JSON.parse(read('packages/create-connector/package.json'));
    expect(manifest.name).toBe('create-connector');
    expect(Object.keys(manifest.bin)).toEqual(['create-connector']);
  });

  it('links only documents that exist', () => {
    for (const [, path] of readme.matchAll(/\]\(((?:docs|examples)\/[^)#]+)/g)) {
      expect(existsSync(new URL(`../${path}`, import.meta.url)), path).toBe(true);
    }
  });
});
