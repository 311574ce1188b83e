/**
 * The code examples of the docs and of the TSDoc, each with the marker that says what the test of examples does
 * with it (CONTRIBUTING.md, "Code examples"):
 *
 * - `<!-- example: run -->`: type-checked, then run, and it must not throw;
 * - `<!-- example: typecheck, because … -->`: type-checked only, the reason said;
 * - `<!-- example: fragment, because … -->`: neither, the reason said;
 * - `<!-- example: quotes <path> -->`: a copy of that file of the repo, which is compiled and run as it is.
 *
 * In markdown the marker is the line before the fence; in a TSDoc comment, the line after `@example`.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the test does with an example. */
export type ExampleKind = 'run' | 'typecheck' | 'fragment' | 'quotes';

/** A code example, where it stands and what its marker says. */
export interface Example {
  /** The file it stands in, relative to the repo. */
  file: string;
  /** The line of its opening fence. */
  line: number;
  /** Its code, without a TSDoc comment's leading ` * `. */
  code: string;
  /** What its marker says; `undefined` for a block without one, or with one the test does not know. */
  kind: ExampleKind | undefined;
  /** The marker's reason (typecheck, fragment) or path (quotes). */
  detail: string;
  /** The marker as written, or `undefined`. */
  marker: string | undefined;
}

/** The markdown files whose examples are checked: the README, docs/, the examples' and templates' READMEs. */
export function markdownFiles(root: string): string[] {
  const within = (folder: string, depth: number): string[] =>
    readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory())
        return depth > 0 && entry.name !== 'node_modules' ? within(path, depth - 1) : [];
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return [
    'README.md',
    ...within('docs', 0),
    ...within('examples', 1).filter((path) => path.endsWith('README.md')),
    ...within('templates', 1).filter((path) => path.endsWith('README.md')),
  ];
}

/** The TypeScript files of `src/`, where TSDoc `@example`s stand. */
export function sourceFiles(root: string): string[] {
  return (
    readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[]
  )
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .filter((path) => !path.startsWith(join('src', 'backend', 'console', 'page')))
    .sort();
}

const MARKER = /^<!--\s*example:\s*(.*?)\s*-->$/;
const TYPESCRIPT_FENCE = /^```(?:ts|typescript)\s*$/;

/** The marker's kind and detail. */
function parseMarker(marker: string | undefined): Pick<Example, 'kind' | 'detail'> {
  const said = marker === undefined ? undefined : MARKER.exec(marker)?.[1];
  if (said === undefined) return { kind: undefined, detail: '' };
  if (said === 'run') return { kind: 'run', detail: '' };
  const because = /^(typecheck|fragment),\s*because\s+(\S.*)$/.exec(said);
  if (because) return { kind: because[1] as ExampleKind, detail: because[2]! };
  const quotes = /^quotes\s+(\S+)$/.exec(said);
  if (quotes) return { kind: 'quotes', detail: quotes[1]! };
  return { kind: undefined, detail: said };
}

/** The TypeScript blocks of lines, each with the marker on the nearest line before it that is not blank. */
function blocksOf(file: string, lines: readonly string[], lineOf: (index: number) => number): Example[] {
  const examples: Example[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const fence = lines[index]!.trim();
    if (!fence.startsWith('```')) continue;
    const end = lines.findIndex((line, at) => at > index && line.trim() === '```');
    if (end === -1) break;
    if (TYPESCRIPT_FENCE.test(fence)) {
      let before = index - 1;
      while (before >= 0 && lines[before]!.trim() === '') before -= 1;
      const candidate = before >= 0 ? lines[before]!.trim() : undefined;
      const marker = candidate?.startsWith('<!--') ? candidate : undefined;
      examples.push({
        file,
        line: lineOf(index),
        code: `${lines.slice(index + 1, end).join('\n')}\n`,
        marker,
        ...parseMarker(marker),
      });
    }
    index = end;
  }
  return examples;
}

/** The TypeScript blocks of a markdown file. */
export function markdownExamples(root: string, file: string): Example[] {
  return blocksOf(file, readFileSync(join(root, file), 'utf8').split('\n'), (index) => index + 1);
}

/** The TypeScript blocks of the `@example`s of a source file's TSDoc comments. */
export function tsdocExamples(root: string, file: string): Example[] {
  const text = readFileSync(join(root, file), 'utf8');
  const examples: Example[] = [];
  for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    if (!comment[0].includes('@example')) continue;
    const firstLine = text.slice(0, comment.index).split('\n').length;
    const lines = comment[0]
      .split('\n')
      .map((line) => line.replace(/^\s*\/?\*+\/?\s?/, '').replace(/\s*\*\/$/, ''));
    // Only the blocks of an @example: from the tag to the next tag.
    let inExample = false;
    const kept = lines.map((line) => {
      if (/^@\w+/.test(line)) inExample = line.startsWith('@example');
      return inExample ? line : '';
    });
    examples.push(...blocksOf(file, kept, (index) => firstLine + index));
  }
  return examples;
}

/** Every example of the repo: the markdown files' first, then the TSDoc's. */
export function allExamples(root: string): Example[] {
  return [
    ...markdownFiles(root).flatMap((file) => markdownExamples(root, file)),
    ...sourceFiles(root).flatMap((file) => tsdocExamples(root, file)),
  ];
}
