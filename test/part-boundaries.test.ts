import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The lint rules that keep each part to its entry, run on probe files laid out as the kit's source is.

const root = fileURLToPath(new URL('..', import.meta.url));
const biome = join(root, 'node_modules', '.bin', 'biome');

/** Each probe: the folder of a file of the kit, and a module it imports. */
const forbidden: [string, string][] = [
  ['src/connector', '../client/retry.js'],
  ['src/connector', '../api/integration.js'],
  ['src/connector', './keys/key-ring.js'],
  ['src/connector/sync', '../operations/logger.js'],
  ['src/connector', '../backend/index.js'],
  ['src/client', '../api/endpoints.js'],
  ['src/client', '../connector/index.js'],
  ['src/backend/http', '../../api/integration.js'],
  ['src/backend', '../client/index.js'],
  ['src/testing', '../connector/connector-options.js'],
  ['src/cli/commands', '../../backend/options.js'],
  ['src/internal', '../api/index.js'],
  ['src/api', '../client/index.js'],
  ['src', './client/retry.js'],
];
const allowed: [string, string][] = [
  ['src/connector', '../client/index.js'],
  ['src/connector', '../api/index.js'],
  ['src/connector', './keys/index.js'],
  ['src/connector', '../internal/wait.js'],
  ['src/connector', '../errors.js'],
  ['src/connector/keys', './key-ring.js'],
  ['src/connector/keys', '../operations/index.js'],
  ['src/client', '../api/index.js'],
  ['src/backend', '../api/index.js'],
  ['src/testing', '../backend/index.js'],
  ['src/testing', '../connector/index.js'],
  ['src/cli/commands', '../../backend/index.js'],
  ['src', './client/index.js'],
];

let flagged: Set<string>;
let work: string;
const probeFile = ([folder]: [string, string], index: number, kind: string) =>
  `${folder}/probe-${kind}-${index}.ts`;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'kit-boundaries-'));
  const config = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8'));
  // The probes are not in a repository, and need no schema.
  delete config.$schema;
  config.vcs = { enabled: false };
  writeFileSync(join(work, 'biome.json'), JSON.stringify(config));
  for (const [kind, probes] of [
    ['forbidden', forbidden],
    ['allowed', allowed],
  ] as const) {
    probes.forEach((probe, index) => {
      const file = join(work, probeFile(probe, index, kind));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `import * as probe from '${probe[1]}';\n\nexport { probe };\n`);
    });
  }
  const { stdout } = await promisify(execFile)(
    biome,
    ['lint', '--reporter=json', '--max-diagnostics=none', '.'],
    {
      cwd: work,
    },
  ).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
  const report = JSON.parse(stdout) as { diagnostics: { category: string; location: { path: string } }[] };
  flagged = new Set(
    report.diagnostics
      .filter((diagnostic) => diagnostic.category === 'lint/style/noRestrictedImports')
      .map((diagnostic) => diagnostic.location.path),
  );
}, 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the lint rules of the parts', () => {
  it.each(forbidden.map((probe, index) => [...probe, index] as const))(
    'refuse, in %s, an import of %s: another part reached past its entry',
    (folder, module, index) => {
      expect(flagged.has(probeFile([folder, module], index, 'forbidden'))).toBe(true);
    },
  );

  it.each(allowed.map((probe, index) => [...probe, index] as const))(
    'let %s import %s',
    (folder, module, index) => {
      expect(flagged.has(probeFile([folder, module], index, 'allowed'))).toBe(false);
    },
  );
});
