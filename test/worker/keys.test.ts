import { inspect } from 'node:util';
import nacl from 'tweetnacl';
import { beforeEach, describe, expect, it } from 'vitest';
import { isPublicKey, sealCredentials, toBase64 } from '../../src/api/index.js';
import { CredentialsUnreadableError, Secret } from '../../src/connector/index.js';
import { ValidationError } from '../../src/errors.js';
import {
  generateKeyRingData,
  KeyRing,
  type KeyRingData,
  type KeyRingOptions,
  KeyRingUnavailableError,
  type KeyStore,
  KeyStoreReadOnlyError,
  MemoryKeyStore,
  ReadOnlyKeyStore,
} from '../../src/worker/index.js';

const DAY = 24 * 60 * 60 * 1000;
const start = Date.parse('2026-03-01T00:00:00.000Z');
let now = start;
const clock = () => now;

beforeEach(() => {
  now = start;
});

async function secretKeysIn(store: KeyStore): Promise<string[]> {
  return ((await store.load())?.keys ?? []).map((key) => key.secretKey);
}

describe('KeyRing.load', () => {
  it('creates, saves and returns a first key when the store is empty', async () => {
    const store = new MemoryKeyStore();
    const ring = await KeyRing.load(store, { now: clock });

    expect(isPublicKey(ring.current.publicKey)).toBe(true);
    expect(ring.current.createdAt.getTime()).toBe(start);
    expect(ring.current.expiresAt.getTime()).toBe(start + 30 * DAY);
    expect(ring.rotationDueAt.getTime()).toBe(start + 23 * DAY);
    const stored = await store.load();
    expect(stored?.keys.map((key) => key.publicKey)).toEqual([ring.current.publicKey]);
  });

  it('reuses the stored key on the next start', async () => {
    const store = new MemoryKeyStore();
    const first = await KeyRing.load(store, { now: clock });
    now += 5 * DAY;
    const second = await KeyRing.load(store, { now: clock });
    expect(second.current.publicKey).toBe(first.current.publicKey);
  });

  it('rotates at once when the stored key is already due', async () => {
    const store = new MemoryKeyStore(generateKeyRingData(undefined, { now: clock }));
    now += 25 * DAY;
    const ring = await KeyRing.load(store, { now: clock });
    expect(ring.current.createdAt.getTime()).toBe(now);
    expect((await store.load())?.keys).toHaveLength(2);
  });

  it('validates its options, naming the option and what it received', async () => {
    const load = (options: Parameters<typeof KeyRing.load>[1]) => KeyRing.load(new MemoryKeyStore(), options);
    await expect(load({ keyLifetimeMs: DAY, rotationMarginMs: DAY })).rejects.toThrow(
      'Invalid key ring options: Expected `rotationMarginMs` to be an integer from 0 to less than keyLifetimeMs (86400000), got `86400000` (number)',
    );
    await expect(load({ keyLifetimeMs: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(load({ keyLifetimeMs: 1.5 })).rejects.toMatchObject({ code: 'validation' });
    await expect(load({ keyLifeTimeMs: DAY } as KeyRingOptions)).rejects.toThrow(
      'Invalid key ring options: Unknown option `keyLifeTimeMs`; did you mean `keyLifetimeMs`?',
    );
  });
});

describe('rotation', () => {
  it('rotates at expiry minus the margin and keeps opening tasks sealed to the old key until it expires', async () => {
    const store = new MemoryKeyStore();
    const ring = await KeyRing.load(store, {
      now: clock,
      keyLifetimeMs: 10 * DAY,
      rotationMarginMs: 2 * DAY,
    });
    const old = ring.current;
    const waiting = sealCredentials({ username: 'ada', password: 'old-key-pw' }, old.publicKey);

    now = start + 8 * DAY - 1;
    expect(ring.isRotationDue()).toBe(false);
    expect(await ring.rotateIfDue()).toBe(false);
    expect(ring.current.publicKey).toBe(old.publicKey);

    now = start + 8 * DAY;
    expect(ring.isRotationDue()).toBe(true);
    expect(await ring.rotateIfDue()).toBe(true);
    const next = ring.current;
    expect(next.publicKey).not.toBe(old.publicKey);
    expect(next.expiresAt.getTime()).toBe(now + 10 * DAY);
    expect((await store.load())?.keys.map((key) => key.publicKey)).toEqual([next.publicKey, old.publicKey]);

    // A task sealed to the old key before rotation still opens, and so does one sealed to the new key.
    now = start + 10 * DAY - 1;
    const credentials = await ring.open(waiting);
    expect(credentials.password).toBeInstanceOf(Secret);
    expect(credentials.password?.reveal()).toBe('old-key-pw');
    expect((await ring.open(sealCredentials({ token: 't' }, next.publicKey))).token?.reveal()).toBe('t');

    // Once the old key has expired, it opens nothing and is pruned from the ring and, at the next check, the store.
    now = start + 10 * DAY;
    await expect(ring.open(waiting)).rejects.toBeInstanceOf(CredentialsUnreadableError);
    await expect(ring.open(waiting)).rejects.toMatchObject({ code: 'credentials_unreadable' });
    expect(ring.toJSON().keys.map((key) => key.publicKey)).toEqual([next.publicKey]);
    expect(await ring.rotateIfDue()).toBe(false);
    expect((await store.load())?.keys.map((key) => key.publicKey)).toEqual([next.publicKey]);
  });

  it('rotates once when asked twice at the same time', async () => {
    const ring = await KeyRing.load(new MemoryKeyStore(), { now: clock });
    now += 23 * DAY;
    const results = await Promise.all([ring.rotateIfDue(), ring.rotateIfDue()]);
    expect(results.sort()).toEqual([false, true]);
    expect(ring.toJSON().keys).toHaveLength(2);
  });

  it('keeps the current key when the new one cannot be saved', async () => {
    const memory = new MemoryKeyStore();
    let failSave = false;
    const store: KeyStore = {
      description: 'flaky store',
      load: () => memory.load(),
      save: async (data) => {
        if (failSave) throw new Error('disk full');
        await memory.save(data);
      },
    };
    const ring = await KeyRing.load(store, { now: clock });
    const before = ring.current.publicKey;
    now += 23 * DAY;
    failSave = true;
    await expect(ring.rotateIfDue()).rejects.toThrow('disk full');
    expect(ring.current.publicKey).toBe(before);
    failSave = false;
    expect(await ring.rotateIfDue()).toBe(true);
  });

  it('rotates on demand, keeping earlier keys', async () => {
    const ring = await KeyRing.load(new MemoryKeyStore(), { now: clock });
    const before = ring.current.publicKey;
    const after = await ring.rotate();
    expect(after.publicKey).not.toBe(before);
    expect(ring.toJSON().keys.map((key) => key.publicKey)).toEqual([after.publicKey, before]);
  });

  it('follows a process sharing the store that rotated first', async () => {
    const store = new MemoryKeyStore();
    const a = await KeyRing.load(store, { now: clock });
    const b = await KeyRing.load(store, { now: clock });
    now += 23 * DAY;
    expect(await a.rotateIfDue()).toBe(true);
    expect(await b.rotateIfDue()).toBe(true);
    expect(b.current.publicKey).toBe(a.current.publicKey);
  });
});

describe('onNewKey', () => {
  it('tells of each key made current after load, and why: created, rotated, adopted', async () => {
    const store = new MemoryKeyStore();
    const told: [string, string][] = [];
    const onNewKey = (key: { publicKey: string }, reason: string) => void told.push([reason, key.publicKey]);
    const a = await KeyRing.load(store, { now: clock, onNewKey });
    expect(told).toEqual([['created', a.current.publicKey]]);

    // Loading what the store holds is not news; another process's rotation, adopted, is.
    const bTold: [string, string][] = [];
    const b = await KeyRing.load(store, {
      now: clock,
      onNewKey: (key, reason) => void bTold.push([reason, key.publicKey]),
    });
    expect(bTold).toEqual([]);
    now += 23 * DAY;
    await a.rotateIfDue();
    expect(told.at(-1)).toEqual(['rotated', a.current.publicKey]);
    await b.rotateIfDue();
    expect(bTold).toEqual([['adopted', a.current.publicKey]]);
    await a.rotateIfDue();
    expect(told).toHaveLength(2);

    // With every key expired, the next one is created anew.
    now += 30 * DAY;
    await a.rotateIfDue();
    expect(told.at(-1)).toEqual(['created', a.current.publicKey]);
  });
});

describe('open', () => {
  it('opens credentials sealed to the current key, every field a Secret', async () => {
    const ring = await KeyRing.load(new MemoryKeyStore(), { now: clock });
    const credentials = await ring.open(
      sealCredentials({ username: 'ada', password: 'pw-1' }, ring.current.publicKey),
    );
    expect(credentials.username?.reveal()).toBe('ada');
    expect(JSON.stringify(credentials)).not.toContain('pw-1');
  });

  it('falls back to every unexpired key when the named one is wrong', async () => {
    const ring = await KeyRing.load(new MemoryKeyStore(), { now: clock });
    const sealed = sealCredentials({ password: 'pw-2' }, ring.current.publicKey);
    const misnamed = { ...sealed, publicKey: toBase64(nacl.box.keyPair().publicKey) };
    expect((await ring.open(misnamed)).password?.reveal()).toBe('pw-2');
  });

  it('reads the store again for a key it does not hold', async () => {
    const store = new MemoryKeyStore();
    const a = await KeyRing.load(store, { now: clock });
    const b = await KeyRing.load(store, { now: clock });
    const rotated = await a.rotate();
    const credentials = await b.open(sealCredentials({ password: 'pw-3' }, rotated.publicKey));
    expect(credentials.password?.reveal()).toBe('pw-3');
  });

  it('fails with CredentialsUnreadableError for a foreign key or tampered credentials', async () => {
    const ring = await KeyRing.load(new MemoryKeyStore(), { now: clock });
    const foreign = toBase64(nacl.box.keyPair().publicKey);
    await expect(ring.open(sealCredentials({ password: 'x' }, foreign))).rejects.toThrow(
      `sealed to public key ${foreign}, which this connector does not hold`,
    );

    const sealed = sealCredentials({ password: 'x' }, ring.current.publicKey);
    const tampered = { ...sealed, ciphertext: toBase64(new Uint8Array(40)) };
    await expect(ring.open(tampered)).rejects.toThrow(/tampered/);
    await expect(ring.open({ ...sealed, nonce: 'not base64!' })).rejects.toMatchObject({
      code: 'credentials_unreadable',
    });
  });
});

describe('read-only store', () => {
  function operatorEnv(data: KeyRingData) {
    return { CONNECTOR_KEYS: JSON.stringify(data) };
  }

  it('adopts the newest key the operator provides and never creates one', async () => {
    const first = generateKeyRingData(undefined, { now: clock });
    const env: Record<string, string> = operatorEnv(first);
    const store = new ReadOnlyKeyStore({ variable: 'CONNECTOR_KEYS', env });
    const ring = await KeyRing.load(store, { now: clock });
    const old = ring.current.publicKey;
    expect(old).toBe(first.keys[0]?.publicKey);

    now += 25 * DAY;
    expect(await ring.rotateIfDue()).toBe(false);
    expect(ring.current.publicKey).toBe(old);
    await expect(ring.rotate()).rejects.toBeInstanceOf(KeyStoreReadOnlyError);

    const waiting = sealCredentials({ password: 'pw-4' }, old);
    env.CONNECTOR_KEYS = JSON.stringify(generateKeyRingData(first, { now: clock }));
    expect(await ring.rotateIfDue()).toBe(true);
    expect(ring.current.publicKey).not.toBe(old);
    expect((await ring.open(waiting)).password?.reveal()).toBe('pw-4');
  });

  it('adopts a key the operator adds before rotation is due', async () => {
    const first = generateKeyRingData(undefined, { now: clock });
    const env: Record<string, string> = operatorEnv(first);
    const ring = await KeyRing.load(new ReadOnlyKeyStore({ variable: 'CONNECTOR_KEYS', env }), {
      now: clock,
    });
    now += DAY;
    expect(await ring.rotateIfDue()).toBe(false);
    const next = generateKeyRingData(first, { now: clock });
    env.CONNECTOR_KEYS = JSON.stringify(next);
    expect(await ring.rotateIfDue()).toBe(true);
    expect(ring.current.publicKey).toBe(next.keys[0]?.publicKey);
  });

  it('fails to load when the operator has provided no key, or only expired ones', async () => {
    const empty = new ReadOnlyKeyStore({ variable: 'CONNECTOR_KEYS', env: {} });
    await expect(KeyRing.load(empty, { now: clock })).rejects.toBeInstanceOf(KeyRingUnavailableError);
    await expect(KeyRing.load(empty, { now: clock })).rejects.toThrow(
      'No unexpired key in environment variable CONNECTOR_KEYS: it is read-only',
    );

    const stale = operatorEnv(generateKeyRingData(undefined, { now: clock }));
    now += 30 * DAY;
    const expired = new ReadOnlyKeyStore({ variable: 'CONNECTOR_KEYS', env: stale });
    await expect(KeyRing.load(expired, { now: clock })).rejects.toMatchObject({
      code: 'key_ring_unavailable',
    });
  });

  it('reports that the current key has expired when the operator did not rotate', async () => {
    const env = operatorEnv(generateKeyRingData(undefined, { now: clock }));
    const ring = await KeyRing.load(new ReadOnlyKeyStore({ variable: 'CONNECTOR_KEYS', env }), {
      now: clock,
    });
    now += 30 * DAY;
    expect(await ring.rotateIfDue()).toBe(true);
    expect(() => ring.current).toThrow(KeyRingUnavailableError);
  });
});

describe('secret keys stay private', () => {
  it('never shows a secret key in JSON, inspection or errors of the ring', async () => {
    const store = new MemoryKeyStore();
    const ring = await KeyRing.load(store, { now: clock });
    await ring.rotate();
    const secretKeys = await secretKeysIn(store);
    expect(secretKeys).toHaveLength(2);

    const shown = [
      JSON.stringify(ring),
      inspect(ring, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    ];
    expect(shown[0]).toContain(ring.current.publicKey);

    now += 60 * DAY;
    for (const attempt of [() => ring.current, () => ring.rotationDueAt]) {
      try {
        attempt();
        expect.unreachable();
      } catch (error) {
        shown.push(inspect(error), String(error));
      }
    }
    for (const text of shown) {
      for (const secretKey of secretKeys) expect(text).not.toContain(secretKey);
    }
  });
});

describe('generateKeyRingData', () => {
  it('adds a current key and drops expired ones', () => {
    const first = generateKeyRingData(undefined, { now: clock, keyLifetimeMs: DAY });
    now += 2 * DAY;
    const second = generateKeyRingData(first, { now: clock, keyLifetimeMs: DAY });
    expect(second.keys).toHaveLength(1);
    expect(second.keys[0]?.publicKey).not.toBe(first.keys[0]?.publicKey);
    expect(second.keys[0]?.expiresAt).toBe(new Date(now + DAY).toISOString());
  });
});
