import { existsSync, globSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const root = fileURLToPath(new URL('../..', import.meta.url));
const sources = join(root, 'src') + sep;

/**
 * The test code `file` runs, each file with its text: itself, and what it imports from the tests' folders (not the
 * kit's source, under test).
 */
export function testCodeOf(file: string, code = new Map<string, string>()): Map<string, string> {
  if (code.has(file) || file.startsWith(sources) || !existsSync(file)) return code;
  const text = readFileSync(file, 'utf8');
  code.set(file, text);
  for (const [, specifier] of text.matchAll(/(?:\bfrom |\bimport\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const imported = resolve(dirname(file), specifier!);
    testCodeOf(imported.endsWith('.js') ? `${imported.slice(0, -3)}.ts` : imported, code);
  }
  return code;
}

/** Every test file of the repository's projects (not the type tests), relative to the root. */
export function testFiles(): string[] {
  return globSync(['test/**/*.test.ts', 'examples/**/*.test.ts'], { cwd: root }).sort();
}

/** The project that runs a test file, named by the suffix before `.test.ts` (vitest.config.ts). */
export function projectOf(file: string): 'processes' | 'isolated' | 'shared-modules' {
  if (file.endsWith('.process.test.ts')) return 'processes';
  if (file.endsWith('.isolated.test.ts')) return 'isolated';
  return 'shared-modules';
}
