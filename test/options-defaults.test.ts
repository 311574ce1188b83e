import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { backendOptionsSchema } from '../src/backend/options.js';
import { clientOptionsSchema } from '../src/client/options.js';
import { userMappingsOptionsSchema } from '../src/client/user-mappings.js';
import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import { keyRingOptionsSchema } from '../src/worker/keys/key-ring.js';
import { loggerOptionsSchema } from '../src/worker/operations/logger.js';
import { DEFAULT_TASK_DURATION_BUCKETS, metricsOptionsShape } from '../src/worker/operations/metrics.js';
import { operationsServerOptionsSchema } from '../src/worker/operations/server.js';
import { pushOptionsSchema } from '../src/worker/push/options.js';

// Each option's default is written twice: as `@default` in the JSDoc of its setting type, which is what a user reads,
// and as `.default(…)` or `.prefault({})` in the schema, which is what the kit runs with. (The types tie each option
// of the one to the other: an option missing from either does not compile.) Here every documented default is read
// from the source and compared with what the schema resolves an empty object to, field by field.

const root = fileURLToPath(new URL('..', import.meta.url));

interface Documented {
  /** `@default` of every property, by path. */
  defaults: Map<string, string>;
  /** The optional properties that do not say their default. */
  silent: string[];
}

/** The JSDoc of every property of these interfaces and of the object types written inside them. */
function documentedDefaults(file: string, interfaces: Record<string, string>): Documented {
  const source = ts.createSourceFile(
    file,
    readFileSync(`${root}${file}`, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const documented: Documented = { defaults: new Map(), silent: [] };
  const visit = (members: ts.NodeArray<ts.TypeElement>, prefix: string) => {
    for (const member of members) {
      if (!ts.isPropertySignature(member) || !ts.isIdentifier(member.name)) continue;
      const path = prefix === '' ? member.name.text : `${prefix}.${member.name.text}`;
      const tag = ts.getJSDocTags(member).find((tag) => tag.tagName.text === 'default');
      if (tag !== undefined)
        documented.defaults.set(path, ts.getTextOfJSDocComment(tag.comment)?.trim() ?? '');
      else if (member.questionToken !== undefined) documented.silent.push(path);
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
  return documented;
}

const DAY_MS = 24 * 60 * 60 * 1000;

type Value = { value: unknown } | 'empty object' | 'wall clock';

/**
 * What a `@default` says, as a value: its first word (`30 days` counting as one), the rest being an explanation in
 * words; a name in capitals is one of `constants`.
 */
function documentedValue(text: string, constants: Record<string, unknown>): Value | undefined {
  const word =
    /^('[^']*'|\{\}|\[\]|-?\d[\d_]* days|-?\d[\d_]*|true|false|none|undefined|Date\.now|Math\.random|[A-Z][A-Z\d_]+)(?:\s|$)/.exec(
      text,
    )?.[1];
  if (word === undefined) return undefined;
  if (word === '{}') return 'empty object';
  if (word === '[]') return { value: [] };
  if (word === 'none' || word === 'undefined') return { value: undefined };
  if (word === 'Date.now') return 'wall clock';
  if (word === 'Math.random') return { value: Math.random };
  if (word.startsWith("'")) return { value: word.slice(1, -1) };
  if (word === 'true' || word === 'false') return { value: word === 'true' };
  if (/^[A-Z]/.test(word)) {
    if (!(word in constants)) throw new Error(`${text}: name the constant ${word} in the test`);
    return { value: constants[word] };
  }
  const number = Number(word.replace(/ days$/, '').replaceAll('_', ''));
  return { value: word.endsWith(' days') ? number * DAY_MS : number };
}

/** `Date.now` itself, or a function that reads it at each call (so that fake timers installed later count). */
function readsWallClock(actual: unknown): boolean {
  if (actual === Date.now) return true;
  if (typeof actual !== 'function') return false;
  const before = Date.now();
  const read = actual();
  return typeof read === 'number' && read >= before && read <= Date.now();
}

const at = (value: unknown, path: string) =>
  path.split('.').reduce((object, key) => (object as Record<string, unknown> | undefined)?.[key], value);

const setAt = (value: Record<string, unknown>, path: string, leaf: unknown): Record<string, unknown> => {
  const [key, ...rest] = path.split('.') as [string, ...string[]];
  const inner = (value[key] ?? {}) as Record<string, unknown>;
  return { ...value, [key]: rest.length === 0 ? leaf : setAt(inner, rest.join('.'), leaf) };
};

/** Whether what an absent option resolves to is what the documented default says. */
function matches(documented: Value, actual: unknown, resolveEmpty: () => unknown): boolean {
  if (documented === 'wall clock') return readsWallClock(actual);
  // `{}`: an absent object is resolved as an empty one would be, every default inside it applied.
  if (documented === 'empty object') {
    return typeof actual === 'object' && actual !== null && isDeepStrictEqual(actual, resolveEmpty());
  }
  return typeof documented.value === 'function'
    ? Object.is(actual, documented.value)
    : isDeepStrictEqual(actual, documented.value);
}

/** Each documented default against the schema's: mismatches, and the defaults said only in words. */
function compare(
  defaults: Map<string, string>,
  resolve: (options: Record<string, unknown>) => unknown,
  constants: Record<string, unknown>,
) {
  const resolved = resolve({});
  const mismatches: string[] = [];
  const inWords: string[] = [];
  for (const [path, text] of defaults) {
    const documented = documentedValue(text, constants);
    const actual = at(resolved, path);
    if (documented === undefined) inWords.push(path);
    else if (!matches(documented, actual, () => at(resolve(setAt({}, path, {})), path))) {
      mismatches.push(`${path}: documented ${text}, resolved ${String(actual)}`);
    }
  }
  return { mismatches, inWords };
}

const SERVICE = { baseUrl: 'http://127.0.0.1:1', token: 'a-token' };
const OPERATIONS = {
  health: () => ({ healthy: true, state: 'running' }),
  isReady: () => ({ ready: true }),
  metrics: { render: async () => ({ contentType: 'text/plain', body: '' }) },
};

interface Case {
  name: string;
  file: string;
  /** The interfaces that document the options, each with the path of its options in what `resolve` returns. */
  interfaces: Record<string, string>;
  resolve: (options: Record<string, unknown>) => unknown;
  /** The defaults said only in words, for what no value written in a comment could be. */
  inWords: string[];
  constants?: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    name: 'the connector options',
    file: 'src/worker/core/connector-options.ts',
    interfaces: {
      ConnectorOptions: '',
      SyncOptions: 'sync',
      PollerOptions: 'poller',
      ShutdownOptions: 'shutdown',
    },
    resolve: (options) => connectorOptionsSchema.parse({ service: SERVICE, ...options }),
    // A key store made where the worker runs.
    inWords: ['keyStore'],
  },
  {
    name: 'the client options',
    file: 'src/client/options.ts',
    interfaces: { ClientOptions: '' },
    resolve: (options) => clientOptionsSchema.parse({ ...SERVICE, ...options }),
    // The pool the client makes for itself when given no dispatcher.
    inWords: ['dispatcher'],
  },
  {
    name: 'the key ring options',
    file: 'src/worker/keys/key-ring.ts',
    interfaces: { KeyRingOptions: '' },
    resolve: (options) => keyRingOptionsSchema.parse(options),
    inWords: [],
  },
  {
    name: 'the logger options',
    file: 'src/worker/operations/logger.ts',
    interfaces: { LoggerOptions: '' },
    resolve: (options) => loggerOptionsSchema.parse(options),
    // What `createLogger` makes when given neither.
    inWords: ['logger', 'destination'],
  },
  {
    name: 'the metrics options',
    file: 'src/worker/operations/metrics.ts',
    interfaces: { ConnectorMetricsOptions: '' },
    resolve: (options) => metricsOptionsShape.parse(options),
    // A new registry each time.
    inWords: ['registry'],
    constants: { DEFAULT_TASK_DURATION_BUCKETS },
  },
  {
    name: 'the operations server options',
    file: 'src/worker/operations/server.ts',
    interfaces: { OperationsServerOptions: '' },
    resolve: (options) => operationsServerOptionsSchema.parse({ ...OPERATIONS, ...options }),
    // No logger: a callback that throws is not logged.
    inWords: ['logger'],
  },
  {
    name: 'the push options',
    file: 'src/worker/push/options.ts',
    interfaces: { PushOptions: '', WebhookOptions: 'webhook' },
    resolve: (options) => pushOptionsSchema.parse(options),
    inWords: [],
  },
  {
    name: 'the user mapping options',
    file: 'src/client/user-mappings.ts',
    interfaces: { SyncUserMappingsOptions: '' },
    resolve: (options) => userMappingsOptionsSchema.parse(options),
    inWords: [],
  },
  {
    name: 'the reference backend options',
    file: 'src/backend/options.ts',
    interfaces: { ReferenceBackendOptions: '' },
    resolve: (options) => backendOptionsSchema.parse(options),
    // A random token, and a silent logger made for the backend.
    inWords: ['adminToken', 'logger'],
  },
];

describe('every documented default is the schema’s', () => {
  it.each(CASES)('of $name', ({ file, interfaces, resolve, inWords, constants = {} }) => {
    const { defaults, silent } = documentedDefaults(file, interfaces);
    // Every option a user may leave out says what it then is.
    expect(silent).toEqual([]);
    const compared = compare(defaults, resolve, constants);
    expect(compared.mismatches).toEqual([]);
    expect(compared.inWords).toEqual(inWords);
  });

  it('down to every option of the connector and of the client', () => {
    expect(documentedDefaults(CASES[0]!.file, CASES[0]!.interfaces).defaults.size).toBeGreaterThan(30);
    expect(documentedDefaults(CASES[1]!.file, CASES[1]!.interfaces).defaults.size).toBeGreaterThan(10);
  });
});
