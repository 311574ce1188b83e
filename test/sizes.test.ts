import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The sizes docs/architecture.md holds the source to ("Sizes"): no file over MAX_FILE_LINES lines, and no more than
// MAX_LONG_FUNCTIONS functions over MAX_FUNCTION_LINES lines, the console's page (a browser script with its own
// build) left out of the count of functions.

const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 60;
const MAX_LONG_FUNCTIONS = 6;

const root = fileURLToPath(new URL('..', import.meta.url));
const CONSOLE_PAGE = 'src/backend/console/page/';

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `file:line name (lines)` of each function, method, accessor or constructor over `limit` lines. */
function longFunctions(file: string, text: string, limit: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const lines = source.getLineAndCharacterOfPosition(node.end).line - start + 1;
      const name = node.name === undefined ? '(anonymous)' : node.name.getText(source);
      if (lines > limit) found.push(`${file}:${start + 1} ${name} (${lines})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the sizes of the source', () => {
  const files = sourceFiles('src').map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));

  it(`holds no file over ${MAX_FILE_LINES} lines`, () => {
    const over = files
      .map(({ path, text }) => ({ path, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ path, lines }) => `${relative('.', path)} (${lines})`);
    expect(over).toEqual([]);
  });

  it(`holds at most ${MAX_LONG_FUNCTIONS} functions over ${MAX_FUNCTION_LINES} lines outside the console's page`, () => {
    const long = files
      .filter(({ path }) => !path.startsWith(CONSOLE_PAGE))
      .flatMap(({ path, text }) => longFunctions(path, text, MAX_FUNCTION_LINES));
    expect(long.length, long.join('\n')).toBeLessThanOrEqual(MAX_LONG_FUNCTIONS);
  });

  it('counts a long function, and only a long one', () => {
    const body = (lines: number) =>
      Array.from({ length: lines }, (_, n) => `  const v${n} = ${n};`).join('\n');
    const text = `function short() {\n${body(10)}\n}\nconst long = () => {\n${body(MAX_FUNCTION_LINES)}\n};\n`;
    expect(longFunctions('x.ts', text, MAX_FUNCTION_LINES)).toEqual([
      `x.ts:13 (anonymous) (${MAX_FUNCTION_LINES + 2})`,
    ]);
  });
});
