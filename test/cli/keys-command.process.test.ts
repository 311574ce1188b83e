import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runKeysCommand } from '../../src/cli/commands/keys.js';
import { KeyRing, KeyRingData, ReadOnlyKeyStore } from '../../src/worker/index.js';
import { runInProcess } from './support/in-process.js';
import { killAll, spawnCli } from './support/processes.js';

const folder = mkdtempSync(join(tmpdir(), 'connector-keys-'));
afterEach(() => killAll());
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/**
 * `connector keys <args>` run by its function in this process: what it prints and answers are the same as a
 * process's, without the second a process takes to start.
 */
const keys = (...args: string[]) => runInProcess(runKeysCommand, args);

/** The same in a process of its own, as an operator runs it: one run for each exit code a process shows. */
async function keysProcess(...args: string[]) {
  const run = spawnCli(['keys', ...args]);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('connector keys generate', () => {
  it('prints a key ring with a new key, which a worker reading it as a read-only store takes as current', async () => {
    const { code, stdout, stderr } = await keysProcess('generate');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const ring = KeyRingData.parse(JSON.parse(stdout));
    expect(ring.keys).toHaveLength(1);
    const file = join(folder, 'mounted.json');
    writeFileSync(file, stdout);
    const loaded = await KeyRing.load(new ReadOnlyKeyStore({ file }));
    expect(loaded.current.publicKey).toBe(ring.keys[0]!.publicKey);
  });

  it('keeps the unexpired keys of the previous ring beside the new current one', async () => {
    const first = join(folder, 'first.json');
    expect((await keys('generate', '--out', first)).code).toBe(0);
    const previous = KeyRingData.parse(JSON.parse(readFileSync(first, 'utf8')));
    const { code, stdout } = await keys('generate', '--previous', first);
    expect(code).toBe(0);
    const next = KeyRingData.parse(JSON.parse(stdout));
    // Compared as strings: a key's base64 may hold `+`, which a pattern would read as a quantifier.
    const [current, kept, ...more] = next.keys.map((key) => key.publicKey);
    expect(more).toEqual([]);
    expect(kept).toBe(previous.keys[0]!.publicKey);
    expect(current).not.toBe(kept);
    const loaded = await KeyRing.load(new ReadOnlyKeyStore({ file: writeTo('next.json', stdout) }));
    expect(loaded.current.publicKey).toBe(next.keys[0]!.publicKey);
  });

  it('writes --out as a new file only its owner reads, and never replaces one', async () => {
    const out = join(folder, 'out.json');
    const { code, stdout } = await keys('generate', '--out', out);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const before = readFileSync(out, 'utf8');
    const again = await keys('generate', '--out', out);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(`${out} exists already; --out writes a new file\n`);
    expect(readFileSync(out, 'utf8')).toBe(before);
  });

  it('exits 1 when --out cannot be written: its folder does not exist', async () => {
    const out = join(folder, 'no-such-folder', 'ring.json');
    const { code, stdout, stderr } = await keys('generate', '--out', out);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(out);
  });

  it('refuses a previous ring that is not one, naming the file, never quoting it', async () => {
    const secretish = 'c2VjcmV0LWtleS1tYXRlcmlhbC1ub3QtYS1rZXk=';
    const bad = writeTo('bad.json', JSON.stringify({ version: 1, keys: [{ publicKey: secretish }] }));
    const { code, stdout, stderr } = await keys('generate', '--previous', bad);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(new RegExp(`^Invalid key ring in file ${bad}: `));
    expect(stderr).not.toContain(secretish);
    const missing = await keys('generate', '--previous', join(folder, 'none.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`No key ring in ${join(folder, 'none.json')}: it is missing or empty\n`);
  });

  it('answers a missing or unknown subcommand, or flag, with a readable message and its usage', async () => {
    const none = await keysProcess();
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /^Usage: [\s\S]*\n\nInvalid options of connector keys: Expected a subcommand: generate\n$/,
    );
    const typo = await keys('generate', '--previus', 'x.json');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /\n\nInvalid options of connector keys: Unknown option `--previus`; did you mean `--previous`\?\n$/,
    );
    const help = await keys('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: connector keys generate \[--previous FILE\] \[--out FILE\]/);
  });
});

function writeTo(name: string, text: string): string {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
}
