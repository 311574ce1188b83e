import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type IForbiddenRuleType, type IModule, type IViolation } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The map of the rooms (docs/architecture.md) is the rule: every import of the source, type-only ones included, is
// checked against its table, and no import circle is allowed.

const root = fileURLToPath(new URL('..', import.meta.url));

/** A row of the rooms table. Paths are relative to the repository; a folder's ends with `/`. */
interface Room {
  name: string;
  /** The room's folder or files. */
  files: string[];
  /** The rooms it may import. */
  mayImport: string[];
  /** Files of other rooms it may import past their entry. */
  alsoFiles: string[];
  /** The files through which other rooms enter it; every file when `undefined`. */
  entries: string[] | undefined;
  /** Sub-folders reached, inside the room, only through their own `index.ts`. */
  subRooms: string[];
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map(([, span]) => span as string);

/** Reads the rooms table of docs/architecture.md: the first table under its heading "The rooms". */
function readRooms(markdown: string): Room[] {
  const section = markdown.split(/^## The rooms$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error('docs/architecture.md has no section "The rooms"');
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  const rooms = rows.map(([name, files, , mayImport, entries, subRooms]): Room => {
    if (name === undefined || files === undefined || mayImport === undefined || entries === undefined) {
      throw new Error(`A row of the rooms table has too few cells: ${name}`);
    }
    const paths = codeSpans(files);
    const home = paths.find((path) => path.endsWith('/')) ?? 'src/';
    return {
      name,
      files: paths,
      mayImport: mayImport
        .replace(/`[^`]*`|\([^)]*\)/g, '')
        .split(/,|\band\b/)
        .map((word) => word.trim())
        .filter((word) => word !== '' && word !== 'nothing'),
      alsoFiles: codeSpans(mayImport),
      entries: entries === 'any of its files' ? undefined : codeSpans(entries).map((entry) => home + entry),
      subRooms: codeSpans(subRooms ?? '').map((folder) => home + folder),
    };
  });
  const names = new Set(rooms.map((room) => room.name));
  for (const room of rooms) {
    for (const other of room.mayImport) {
      if (!names.has(other)) throw new Error(`The room ${room.name} may import "${other}", which is no room`);
    }
  }
  return rooms;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A regular expression for dependency-cruiser that matches a file, or every file of a folder. */
const pattern = (path: string) => (path.endsWith('/') ? `^${escapeRegExp(path)}` : `^${escapeRegExp(path)}$`);
const patterns = (paths: string[]) => paths.map(pattern);

/** The table as dependency-cruiser's rules, each named for what it forbids. */
function rulesOf(rooms: Room[]): IForbiddenRuleType[] {
  const byName = new Map(rooms.map((room) => [room.name, room]));
  const rules: IForbiddenRuleType[] = [
    { name: 'an import circle', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
  ];
  for (const room of rooms) {
    const allowed = room.mayImport.map((name) => byName.get(name) as Room);
    rules.push({
      name: `${room.name} imports a room its row does not list`,
      severity: 'error',
      from: { path: patterns(room.files) },
      to: { path: '^src/', pathNot: patterns([...room.files, ...allowed.flatMap((other) => other.files)]) },
    });
    for (const other of allowed) {
      if (other.entries === undefined) continue;
      rules.push({
        name: `${room.name} reaches into ${other.name} past its entries (${other.entries.join(', ')})`,
        severity: 'error',
        from: { path: patterns(room.files) },
        to: { path: patterns(other.files), pathNot: patterns([...other.entries, ...room.alsoFiles]) },
      });
    }
    for (const folder of room.subRooms) {
      rules.push({
        name: `${room.name} reaches into ${folder} past its index.ts`,
        severity: 'error',
        from: { path: patterns(room.files), pathNot: pattern(folder) },
        to: { path: pattern(folder), pathNot: pattern(`${folder}index.ts`) },
      });
    }
  }
  return rules;
}

const describeViolation = (violation: IViolation) =>
  violation.cycle === undefined
    ? `${violation.rule.name}: ${violation.from} -> ${violation.to}`
    : `${violation.rule.name}: ${[violation.from, ...violation.cycle.map((step) => step.name)].join(' -> ')}`;

/**
 * Cruises `src/` under `baseDir`, type-only imports included, and returns what breaks the rooms' rules and the
 * source files that belong to no room.
 */
async function checkRooms(
  baseDir: string,
  rooms: Room[],
): Promise<{ violations: string[]; roomless: string[] }> {
  const { output } = await cruise(['src'], {
    baseDir,
    tsPreCompilationDeps: true,
    // The kit is ES modules alone; the rules need nothing but the graph, which keeps the cruise to seconds.
    moduleSystems: ['es6'],
    skipAnalysisNotInRules: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    validate: true,
    ruleSet: { forbidden: rulesOf(rooms) },
  });
  if (typeof output === 'string') throw new Error('dependency-cruiser gave no result');
  const everyRoomFile = rooms.flatMap((room) => patterns(room.files)).map((source) => new RegExp(source));
  return {
    violations: (output.summary.violations ?? []).map(describeViolation).sort(),
    roomless: output.modules
      .map((module: IModule) => module.source)
      .filter((source) => source.startsWith('src/') && !everyRoomFile.some((room) => room.test(source))),
  };
}

const rooms = readRooms(readFileSync(join(root, 'docs/architecture.md'), 'utf8'));

describe('the rooms of the source', () => {
  it('are read from the map in docs/architecture.md', () => {
    expect(rooms.map((room) => room.name)).toEqual(
      expect.arrayContaining(['api', 'client', 'connector', 'worker', 'backend', 'testing', 'cli']),
    );
    expect(rooms.find((room) => room.name === 'worker')).toMatchObject({
      files: ['src/worker/'],
      mayImport: ['base', 'api', 'client', 'connector'],
      entries: ['src/worker/index.ts', 'src/worker/internal.ts'],
      subRooms: [
        'src/worker/core/',
        'src/worker/keys/',
        'src/worker/operations/',
        'src/worker/process/',
        'src/worker/push/',
        'src/worker/sync/',
        'src/worker/tasks/',
      ],
    });
  });

  it('hold every file of the source, import only what the map allows, and import no circle', async () => {
    const { violations, roomless } = await checkRooms(root, rooms);
    expect(roomless).toEqual([]);
    expect(violations).toEqual([]);
  }, 60_000);
});

describe('the check of the rooms', () => {
  // A small source laid out as the kit's is, with one import of each kind the check must refuse.
  const planted: Record<string, string> = {
    'src/errors.ts': 'export class ApprovalKitError extends Error {}\n',
    'src/api/index.ts': "export * from './integration.js';\n",
    'src/api/integration.ts':
      "import { ApprovalKitError } from '../errors.js';\nexport const Task = ApprovalKitError;\n",
    'src/api/credentials.ts': 'export const sealCredentials = 1;\n',
    // A room its row does not list: the backend never imports the client.
    'src/backend/index.ts': "import { retry } from '../client/index.js';\nexport const backend = retry;\n",
    // A file of the api past its entry, in a type-only import, and the one file the backend's row allows it past
    // the entry.
    'src/backend/store/index.ts':
      "import type { Task } from '../../api/integration.js';\nexport type Held = typeof Task;\n",
    'src/backend/console/index.ts': "export { sealCredentials } from '../../api/credentials.js';\n",
    // A sub-folder of its own room past its index.
    'src/backend/seed.ts': "export { tables } from './store/tables.js';\n",
    'src/backend/store/tables.ts': 'export const tables = 1;\n',
    'src/client/index.ts': "export { retry } from './retry.js';\n",
    // A circle of type-only imports, which are gone at run time.
    'src/client/retry.ts':
      "import type { Transport } from './transport.js';\nexport const retry = (t?: Transport) => t;\n",
    'src/client/transport.ts':
      "import type { retry } from './retry.js';\nexport type Transport = typeof retry;\n",
    // A file of no room.
    'src/stray/odd.ts': "import { Task } from '../api/index.js';\nexport const odd = Task;\n",
  };
  let work: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'kit-rooms-'));
    for (const [path, text] of Object.entries(planted)) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      writeFileSync(join(work, path), text);
    }
  });

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('fails on a circle, a room not allowed, an entry or an index reached past, and a file of no room', async () => {
    const { violations, roomless } = await checkRooms(work, rooms);
    expect(roomless).toEqual(['src/stray/odd.ts']);
    expect(violations).toEqual([
      'an import circle: src/client/retry.ts -> src/client/transport.ts -> src/client/retry.ts',
      'backend imports a room its row does not list: src/backend/index.ts -> src/client/index.ts',
      'backend reaches into api past its entries (src/api/index.ts): src/backend/store/index.ts -> src/api/integration.ts',
      'backend reaches into src/backend/store/ past its index.ts: src/backend/seed.ts -> src/backend/store/tables.ts',
    ]);
  });
});
