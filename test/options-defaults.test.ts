import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { clientOptionsSchema } from '../src/client/options.js';
import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import { pushOptionsSchema } from '../src/worker/push/options.js';

// Each option's default is written twice: as `@default` in the JSDoc of its setting type, which is what a user reads,
// and as `.default(…)` or `.prefault({})` in the schema, which is what the kit runs with. Here every documented
// default is read from the source and compared with what the schema resolves an empty object to, field by field.

const root = fileURLToPath(new URL('..', import.meta.url));

/** `@default` of every property of these interfaces and of the object types written inside them, by path. */
function documentedDefaults(file: string, interfaces: Record<string, string>): Map<string, string> {
  const source = ts.createSourceFile(
    file,
    readFileSync(`${root}${file}`, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const defaults = new Map<string, string>();
  const visit = (members: ts.NodeArray<ts.TypeElement>, prefix: string) => {
    for (const member of members) {
      if (!ts.isPropertySignature(member) || !ts.isIdentifier(member.name)) continue;
      const path = prefix === '' ? member.name.text : `${prefix}.${member.name.text}`;
      const tag = ts.getJSDocTags(member).find((tag) => tag.tagName.text === 'default');
      if (tag !== undefined) defaults.set(path, ts.getTextOfJSDocComment(tag.comment)?.trim() ?? '');
      if (member.type !== undefined && ts.isTypeLiteralNode(member.type)) visit(member.type.members, path);
    }
  };
  const found = new Set<string>();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node) || !(node.name.text in interfaces)) return;
    found.add(node.name.text);
    visit(node.members, interfaces[node.name.text]!);
  });
  expect([...found].sort()).toEqual(Object.keys(interfaces).sort());
  return defaults;
}

/** What a `@default` says, as a value: its first word, the rest being an explanation in words. */
function documentedValue(text: string): { value: unknown } | 'empty object' | undefined {
  const word = /^('[^']*'|\{\}|-?\d+|true|false|none|Date\.now|Math\.random)(?:\s|$)/.exec(text)?.[1];
  if (word === undefined) return undefined;
  if (word === '{}') return 'empty object';
  if (word === 'none') return { value: undefined };
  if (word === 'Date.now') return { value: Date.now };
  if (word === 'Math.random') return { value: Math.random };
  if (word.startsWith("'")) return { value: word.slice(1, -1) };
  return { value: JSON.parse(word) };
}

const at = (value: unknown, path: string) =>
  path.split('.').reduce((object, key) => (object as Record<string, unknown> | undefined)?.[key], value);

const setAt = (value: Record<string, unknown>, path: string, leaf: unknown): Record<string, unknown> => {
  const [key, ...rest] = path.split('.') as [string, ...string[]];
  const inner = (value[key] ?? {}) as Record<string, unknown>;
  return { ...value, [key]: rest.length === 0 ? leaf : setAt(inner, rest.join('.'), leaf) };
};

/** Each documented default against the schema's: mismatches, and the defaults said only in words. */
function compare(defaults: Map<string, string>, resolve: (options: Record<string, unknown>) => unknown) {
  const resolved = resolve({});
  const mismatches: string[] = [];
  const inWords: string[] = [];
  for (const [path, text] of defaults) {
    const documented = documentedValue(text);
    const actual = at(resolved, path);
    if (documented === undefined) inWords.push(path);
    // `{}`: an absent object is resolved as an empty one would be, every default inside it applied.
    else if (documented === 'empty object') {
      const given = at(resolve(setAt({}, path, {})), path);
      if (typeof actual !== 'object' || actual === null || !isDeepStrictEqual(actual, given)) {
        mismatches.push(`${path}: documented {}, resolved ${String(actual)}`);
      }
    } else if (!Object.is(actual, documented.value)) {
      mismatches.push(`${path}: documented ${text}, resolved ${String(actual)}`);
    }
  }
  return { mismatches, inWords };
}

const SERVICE = { baseUrl: 'http://127.0.0.1:1', token: 'a-token' };

describe('every documented default is the schema’s', () => {
  it('of the connector options', () => {
    const defaults = documentedDefaults('src/worker/core/connector-options.ts', {
      ConnectorOptions: '',
      SyncOptions: 'sync',
      PollerOptions: 'poller',
      ShutdownOptions: 'shutdown',
    });
    expect(defaults.size).toBeGreaterThan(30);
    const { mismatches, inWords } = compare(defaults, (options) =>
      connectorOptionsSchema.parse({ service: SERVICE, ...options }),
    );
    expect(mismatches).toEqual([]);
    // Said in words, for what no value written in a comment could be: a key store made where the worker runs.
    expect(inWords).toEqual(['keyStore']);
  });

  it('of the push options', () => {
    const defaults = documentedDefaults('src/worker/push/options.ts', {
      PushOptions: '',
      WebhookOptions: 'webhook',
    });
    expect(defaults.size).toBeGreaterThan(12);
    const { mismatches, inWords } = compare(defaults, (options) => pushOptionsSchema.parse(options));
    expect(mismatches).toEqual([]);
    expect(inWords).toEqual([]);
  });

  it('of the client options', () => {
    const defaults = documentedDefaults('src/client/options.ts', { ClientOptions: '' });
    expect(defaults.size).toBeGreaterThan(10);
    const { mismatches, inWords } = compare(defaults, (options) =>
      clientOptionsSchema.parse({ ...SERVICE, ...options }),
    );
    expect(mismatches).toEqual([]);
    // The pool the client makes for itself when given no dispatcher.
    expect(inWords).toEqual(['dispatcher']);
  });
});
