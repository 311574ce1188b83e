import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sealCredentials } from '../../src/api/index.js';
import {
  FileKeyStore,
  generateKeyRingData,
  KeyRing,
  KeyRingInvalidError,
  KeyStoreReadOnlyError,
  MemoryKeyStore,
  ReadOnlyKeyStore,
} from '../../src/worker/index.js';

// Lets a test make the rename of a save fail after the temporary file was written: the moment a crash would hurt.
const crash = vi.hoisted(() => ({
  renameFails: false,
  atRename: undefined as { content: string; mode: number } | undefined,
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: async (from: string, to: string) => {
      if (crash.renameFails) {
        crash.atRename = {
          content: await actual.readFile(from, 'utf8'),
          mode: (await actual.stat(from)).mode,
        };
        throw Object.assign(new Error('simulated crash before rename'), { code: 'EIO' });
      }
      return actual.rename(from, to);
    },
  };
});

const posix = process.platform !== 'win32';
let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'key-store-'));
  crash.renameFails = false;
  crash.atRename = undefined;
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function secretKeysOf(data: { keys: Array<{ secretKey: string }> }): string[] {
  return data.keys.map((key) => key.secretKey);
}

describe('FileKeyStore', () => {
  it('has nothing to load before the first save', async () => {
    expect(await new FileKeyStore(join(directory, 'keys.json')).load()).toBeUndefined();
  });

  it.runIf(posix)('saves readable by its owner only, in a directory it creates', async () => {
    const path = join(directory, 'state', 'keys.json');
    await new FileKeyStore(path).save(generateKeyRingData());
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(directory, 'state'))).mode & 0o777).toBe(0o700);
  });

  it.runIf(posix)('tightens the mode of a file it replaces', async () => {
    const path = join(directory, 'keys.json');
    await writeFile(path, '{}');
    await chmod(path, 0o644);
    await new FileKeyStore(path).save(generateKeyRingData());
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('survives a restart: a new ring on the same file has the same keys', async () => {
    const path = join(directory, 'keys.json');
    const first = await KeyRing.load(new FileKeyStore(path));
    const rotated = await first.rotate();
    const sealedToOld = sealCredentials({ password: 'pw-1' }, first.toJSON().keys[1]?.publicKey ?? '');

    const second = await KeyRing.load(new FileKeyStore(path));
    expect(second.current.publicKey).toBe(rotated.publicKey);
    expect(second.toJSON().keys).toEqual(first.toJSON().keys);
    expect((await second.open(sealedToOld)).password?.reveal()).toBe('pw-1');
  });

  it('leaves the previous ring whole when a save fails after writing the temporary file', async () => {
    const path = join(directory, 'keys.json');
    const store = new FileKeyStore(path);
    const before = generateKeyRingData();
    await store.save(before);
    const saved = await readFile(path, 'utf8');

    crash.renameFails = true;
    const next = generateKeyRingData(before);
    await expect(store.save(next)).rejects.toThrow('simulated crash before rename');

    // The new ring was complete and private on disk before the rename that failed.
    expect(JSON.parse(crash.atRename?.content ?? '')).toEqual(next);
    if (posix) expect((crash.atRename?.mode ?? 0) & 0o777).toBe(0o600);
    // The file still holds the previous ring, whole, and no temporary file is left behind.
    expect(await readFile(path, 'utf8')).toBe(saved);
    expect(await readdir(directory)).toEqual(['keys.json']);
    expect(await store.load()).toEqual(before);
  });

  it('ignores a temporary file a crash left behind', async () => {
    const path = join(directory, 'keys.json');
    const data = generateKeyRingData();
    await new FileKeyStore(path).save(data);
    await writeFile(join(directory, '.keys.json.0a1b2c3d4e5f.tmp'), '{"version":1,"keys":[{"publicKey":');
    expect(await new FileKeyStore(path).load()).toEqual(data);
  });

  it('fails on a malformed file with a clear error that shows no key material', async () => {
    const path = join(directory, 'keys.json');
    const data = generateKeyRingData();
    const [key] = data.keys;
    if (key === undefined) throw new Error('no key generated');
    const store = new FileKeyStore(path);

    await writeFile(path, `{"version":1,"keys":[{"secretKey":"${key.secretKey}"`);
    const notJson = await store.load().catch((error: unknown) => error);
    expect(notJson).toBeInstanceOf(KeyRingInvalidError);
    expect(notJson).toMatchObject({ code: 'key_ring_invalid' });
    expect((notJson as Error).cause).toBeUndefined();
    expect(String(notJson)).toBe(
      `KeyRingInvalidError: Invalid key ring in file ${path}: is not JSON (nor base64 of JSON)`,
    );

    const other = generateKeyRingData().keys[0]?.secretKey ?? '';
    await writeFile(
      path,
      JSON.stringify({
        version: 1,
        keys: [
          { ...key, secretKey: other },
          { ...key, secretKey: key.secretKey.slice(0, 20), expiresAt: 'soon' },
        ],
      }),
    );
    const mismatched = await store.load().catch((error: unknown) => error);
    expect(mismatched).toBeInstanceOf(KeyRingInvalidError);
    const message = (mismatched as KeyRingInvalidError).message;
    expect(message).toContain('keys[0].secretKey: does not belong to publicKey');
    expect(message).toContain('keys[1].secretKey: must be a 32-byte key in standard base64');
    expect(message).toContain('keys[1].expiresAt');
    for (const text of [message, inspect(mismatched, { depth: Number.POSITIVE_INFINITY })]) {
      for (const secret of [key.secretKey, key.secretKey.slice(0, 20), other])
        expect(text).not.toContain(secret);
    }
  });

  it('makes KeyRing.load fail with the same error', async () => {
    const path = join(directory, 'keys.json');
    await writeFile(path, JSON.stringify({ version: 2, keys: [] }));
    await expect(KeyRing.load(new FileKeyStore(path))).rejects.toMatchObject({
      code: 'key_ring_invalid',
      issues: [{ path: ['version'] }],
    });
  });
});

describe('ReadOnlyKeyStore', () => {
  const data = generateKeyRingData();

  it('reads a key ring from an environment variable, as JSON or base64 of JSON', async () => {
    const json = new ReadOnlyKeyStore({ variable: 'KEYS', env: { KEYS: JSON.stringify(data) } });
    expect(await json.load()).toEqual(data);
    const base64 = Buffer.from(JSON.stringify(data)).toString('base64');
    expect(await new ReadOnlyKeyStore({ variable: 'KEYS', env: { KEYS: base64 } }).load()).toEqual(data);
  });

  it('has nothing to load when the variable is unset or empty', async () => {
    expect(await new ReadOnlyKeyStore({ variable: 'KEYS', env: {} }).load()).toBeUndefined();
    expect(await new ReadOnlyKeyStore({ variable: 'KEYS', env: { KEYS: ' ' } }).load()).toBeUndefined();
  });

  it('reads the process environment by default', async () => {
    vi.stubEnv('CONNECTOR_TEST_KEYS', JSON.stringify(data));
    try {
      expect(await new ReadOnlyKeyStore({ variable: 'CONNECTOR_TEST_KEYS' }).load()).toEqual(data);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('reads a mounted secret file again on every load', async () => {
    const path = join(directory, 'keys.json');
    const store = new ReadOnlyKeyStore({ file: path });
    expect(await store.load()).toBeUndefined();
    await writeFile(path, JSON.stringify(data));
    expect(await store.load()).toEqual(data);
    const next = generateKeyRingData(data);
    await writeFile(path, JSON.stringify(next));
    expect(await store.load()).toEqual(next);
  });

  it('refuses to save', async () => {
    const store = new ReadOnlyKeyStore({ variable: 'KEYS', env: {} });
    expect(store.readOnly).toBe(true);
    await expect(store.save(data)).rejects.toBeInstanceOf(KeyStoreReadOnlyError);
    await expect(store.save(data)).rejects.toMatchObject({ code: 'key_store_read_only' });
  });

  it('names the variable, never its value, when the value is malformed', async () => {
    const value = JSON.stringify({ ...data, version: 'one' });
    const error = await new ReadOnlyKeyStore({ variable: 'KEYS', env: { KEYS: value } })
      .load()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyRingInvalidError);
    expect(String(error)).toContain('Invalid key ring in environment variable KEYS: version');
    for (const secretKey of secretKeysOf(data)) expect(String(error)).not.toContain(secretKey);
  });
});

describe('MemoryKeyStore', () => {
  it('stores and returns copies', async () => {
    const data = generateKeyRingData();
    const store = new MemoryKeyStore(data);
    const loaded = await store.load();
    loaded?.keys.pop();
    expect(await store.load()).toEqual(data);
  });
});
