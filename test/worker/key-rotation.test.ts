import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConnectorMetrics,
  ConnectorWorker,
  createLogger,
  generateKeyRingData,
  KeyRing,
  type KeyRingData,
  type KeyStore,
  MemoryKeyStore,
  ReadOnlyKeyStore,
} from '../../src/worker/index.js';
import { announceNewKey, KeyRotation, keyCheck } from '../../src/worker/keys/key-rotation.js';
import { ScriptedServer } from '../client/support/scripted-server.js';
import { MemoryConnector, MemorySource } from './support/memory-source.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

let lines: { level: number; msg: string; [key: string]: unknown }[] = [];
const logger = () =>
  createLogger({
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
const messages = (level: number) => lines.filter((line) => line.level === level).map((line) => line.msg);

async function keyEvents(metrics: ConnectorMetrics): Promise<Record<string, number>> {
  const { body } = await metrics.render();
  const counts: Record<string, number> = {};
  for (const [, event, count] of body.matchAll(
    /^approval_connector_key_events_total\{event="(\w+)"\} (\d+)$/gm,
  )) {
    counts[event as string] = Number(count);
  }
  return counts;
}

const rotations: KeyRotation[] = [];

beforeEach(() => {
  vi.useFakeTimers({ now: T0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  lines = [];
});
afterEach(() => {
  for (const rotation of rotations.splice(0)) rotation.stop();
  vi.useRealTimers();
});

async function startRotation(
  store: KeyStore,
  keys: { keyLifetimeMs: number; rotationMarginMs: number },
  register: (publicKey: string) => Promise<void> = async () => {},
) {
  const metrics = new ConnectorMetrics();
  const log = logger();
  const ring = await KeyRing.load(store, { ...keys, onNewKey: announceNewKey(log, metrics) });
  const registered: string[] = [];
  const rotation = new KeyRotation({
    ring,
    registered: ring.current,
    register: async () => {
      await register(ring.current.publicKey);
      registered.push(ring.current.publicKey);
    },
    logger: log,
    metrics,
    now: () => Date.now(),
    random: () => 0.5,
  });
  rotations.push(rotation.start());
  return { ring, metrics, registered };
}

describe('KeyRotation', () => {
  it('rotates a 2-minute key when its 1-minute margin begins, and again after each rotation', async () => {
    const { ring, metrics, registered } = await startRotation(new MemoryKeyStore(), {
      keyLifetimeMs: 2 * MINUTE,
      rotationMarginMs: MINUTE,
    });
    const first = ring.current.publicKey;
    await vi.advanceTimersByTimeAsync(MINUTE - 1);
    expect(registered).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(registered).toHaveLength(1);
    expect(registered[0]).not.toBe(first);
    await vi.advanceTimersByTimeAsync(MINUTE);
    expect(registered).toHaveLength(2);
    expect(new Set([first, ...registered]).size).toBe(3);
    expect(messages(30)).toEqual([
      'created a connector key',
      'rotated the connector key',
      'registered the connector key with the service',
      'rotated the connector key',
      'registered the connector key with the service',
    ]);
    expect(await keyEvents(metrics)).toEqual({ created: 1, rotated: 2, adopted: 0, expiring: 0, expired: 0 });
  });

  it('waits for a rotation further away than a timer can wait, and does not rotate early', async () => {
    const { registered } = await startRotation(new MemoryKeyStore(), {
      keyLifetimeMs: 60 * DAY,
      rotationMarginMs: 7 * DAY,
    });
    await vi.advanceTimersByTimeAsync(53 * DAY - 1);
    expect(registered).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(registered).toHaveLength(1);
  });

  it('registers a rotated key whose first registration failed, retrying with backoff', async () => {
    let refusals = 2;
    const { ring, registered } = await startRotation(
      new MemoryKeyStore(),
      { keyLifetimeMs: 10 * MINUTE, rotationMarginMs: 5 * MINUTE },
      async () => {
        if (refusals-- > 0) throw new Error('service unavailable');
      },
    );
    await vi.advanceTimersByTimeAsync(5 * MINUTE);
    expect(registered).toEqual([]);
    expect(messages(50)).toEqual(['replacing the connector key failed; retrying']);
    // Full jitter, at least a second: with random 0.5 the first two waits are 1 s each.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(messages(50)).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(registered).toEqual([ring.current.publicKey]);
    expect(messages(50)).toHaveLength(2);
  });

  it('warns at the rotation margin and logs an error at the expiry of the key the service holds while registration fails, though a new key was rotated', async () => {
    let outage = true;
    const { ring, metrics, registered } = await startRotation(
      new MemoryKeyStore(),
      { keyLifetimeMs: 2 * MINUTE, rotationMarginMs: MINUTE },
      async () => {
        if (outage) throw new Error('service unavailable');
      },
    );
    const held = ring.current;
    // The margin begins: a new key is rotated, but the service keeps the old one.
    await vi.advanceTimersByTimeAsync(MINUTE);
    expect(ring.current.publicKey).not.toBe(held.publicKey);
    expect(lines.filter((line) => line.level === 40)).toEqual([
      expect.objectContaining({
        msg: 'the connector key is due for rotation and has not been replaced; it expires soon',
        publicKey: held.publicKey,
        expiresAt: held.expiresAt.toISOString(),
      }),
    ]);
    expect(await keyEvents(metrics)).toMatchObject({ expiring: 1, expired: 0 });
    // The key the service holds expires, the new one does not: reported when it happens.
    await vi.advanceTimersByTimeAsync(MINUTE - 1);
    expect(messages(50).filter((msg) => msg.startsWith('the connector key has expired'))).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lines.filter((line) => line.msg.startsWith('the connector key has expired'))).toEqual([
      expect.objectContaining({ level: 50, publicKey: held.publicKey }),
    ]);
    expect((await keyEvents(metrics)).expired).toBe(1);
    expect(registered).toEqual([]);

    // Once the service takes registrations again, the current key is registered.
    outage = false;
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    expect(registered.length).toBeGreaterThan(0);
    expect(registered.at(-1)).toBe(ring.current.publicKey);
  });

  it('warns while a due key is not replaced, logs an error once it expired, and adopts the key the operator adds', async () => {
    const env: Record<string, string> = {};
    const provide = (data: KeyRingData) => {
      env.CONNECTOR_KEYS = JSON.stringify(data);
    };
    const first = generateKeyRingData(undefined, { keyLifetimeMs: 2 * MINUTE });
    provide(first);
    const { ring, metrics, registered } = await startRotation(
      new ReadOnlyKeyStore({ variable: 'CONNECTOR_KEYS', env }),
      { keyLifetimeMs: 2 * MINUTE, rotationMarginMs: MINUTE },
    );
    await vi.advanceTimersByTimeAsync(MINUTE);
    expect(messages(40)).toEqual([
      'the connector key is due for rotation and has not been replaced; it expires soon',
    ]);
    await vi.advanceTimersByTimeAsync(MINUTE);
    expect(messages(50)).toEqual([
      'the connector key has expired: the service creates no task for this connector until a new key is registered',
    ]);
    const events = await keyEvents(metrics);
    expect(events.expiring).toBeGreaterThanOrEqual(1);
    expect(events.expired).toBe(1);
    expect(registered).toEqual([]);

    provide(generateKeyRingData(first, { keyLifetimeMs: DAY }));
    await vi.advanceTimersByTimeAsync(60 * MINUTE);
    expect(registered).toEqual([ring.current.publicKey]);
    expect(messages(30)).toContain('adopted a connector key from the key store');
    expect((await keyEvents(metrics)).adopted).toBe(1);
  });
});

describe('a running connector', () => {
  class KeyedConnector extends MemoryConnector {
    override readonly authRequired = true;
  }

  let server: ScriptedServer;
  afterEach(async () => {
    await server.close();
  });

  /** A worker against the scripted server with a key of 2 minutes, rotated 1 minute before it expires. */
  const keyedWorker = () =>
    new ConnectorWorker(new KeyedConnector(new MemorySource()), {
      service: { baseUrl: server.url, token: 'connector-token', retry: { retries: 0 } },
      logger: {
        level: 'info',
        destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
      },
      keyStore: new MemoryKeyStore(),
      keys: { keyLifetimeMs: 2 * MINUTE, rotationMarginMs: MINUTE },
      sync: { enabled: false },
      poller: { enabled: false },
    });

  it("rotates a running connector's 2-minute key when its 1-minute margin begins, not at an hourly check, and registers each new key", async () => {
    server = await ScriptedServer.start();
    server.otherwise((request) =>
      request.method === 'GET' && request.url === '/v2/connector/state'
        ? { json: { status: 'success', data: { state: null } } }
        : { json: { status: 'success' } },
    );
    const worker = keyedWorker();
    const registered = () =>
      server.requests
        .filter((request) => request.method === 'PATCH' && request.url === '/v2/connector')
        .map((request) => JSON.parse(request.body) as { publicKey: string; publicKeyExpiredAt: string });
    await worker.start();
    expect(registered()).toHaveLength(1);

    const registrationsLogged = () =>
      lines.filter((line) => line.msg === 'registered the connector key with the service').length;
    for (const rotation of [1, 2]) {
      await vi.advanceTimersByTimeAsync(MINUTE);
      // The server has the request before the worker has read its answer and logged the registration.
      await vi.waitFor(() => expect(registrationsLogged()).toBe(rotation));
      expect(registered()).toHaveLength(1 + rotation);
    }
    const [first, second, third] = registered();
    expect(new Set([first?.publicKey, second?.publicKey, third?.publicKey]).size).toBe(3);
    expect(Date.parse(third?.publicKeyExpiredAt ?? '')).toBe(T0 + 2 * MINUTE + 2 * MINUTE);
    expect(await keyEvents(worker.metrics)).toMatchObject({ created: 1, rotated: 2, expired: 0 });
    expect(lines.filter((line) => line.component === 'keys').map((line) => line.msg)).toEqual([
      'created a connector key',
      'rotated the connector key',
      'registered the connector key with the service',
      'rotated the connector key',
      'registered the connector key with the service',
    ]);
    await worker.stop();
  });
  it('warns and then errs about the registered key while the service refuses every registration after the start', async () => {
    server = await ScriptedServer.start();
    let outage = false;
    server.otherwise((request) => {
      if (request.method === 'GET' && request.url === '/v2/connector/state') {
        return { json: { status: 'success', data: { state: null } } };
      }
      if (outage && request.method === 'PATCH' && request.url === '/v2/connector') {
        return { status: 503, json: { status: 'failure' } };
      }
      return { json: { status: 'success' } };
    });
    const worker = keyedWorker();
    await worker.start();
    const [held] = server.requests
      .filter((request) => request.method === 'PATCH' && request.url === '/v2/connector')
      .map((request) => JSON.parse(request.body) as { publicKey: string });
    outage = true;
    const keyLines = (level: number) =>
      lines.filter((line) => line.component === 'keys' && line.level === level);

    await vi.advanceTimersByTimeAsync(MINUTE);
    await vi.waitFor(() => expect(keyLines(40).length).toBeGreaterThan(0));
    expect(keyLines(40)[0]).toMatchObject({
      msg: 'the connector key is due for rotation and has not been replaced; it expires soon',
      publicKey: held?.publicKey,
    });
    await vi.advanceTimersByTimeAsync(MINUTE);
    await vi.waitFor(() =>
      expect(keyLines(50).map((line) => line.msg)).toContain(
        'the connector key has expired: the service creates no task for this connector until a new key is registered',
      ),
    );
    expect(await keyEvents(worker.metrics)).toMatchObject({ rotated: 1, expired: 1 });
    expect((await keyEvents(worker.metrics)).expiring).toBeGreaterThanOrEqual(1);
    await worker.stop();
  });
});

describe("the keys' readiness check", () => {
  const key = { publicKey: 'AAAA', createdAt: new Date(T0), expiresAt: new Date(T0 + 30 * DAY) };

  it('says where the key the service holds stands: ok, expiring once due for rotation, expired', () => {
    expect(keyCheck(key, 7 * DAY, T0)).toEqual({
      status: 'ok',
      expiresAt: new Date(T0 + 30 * DAY).toISOString(),
      expiresInSeconds: 30 * 86_400,
      rotatesAt: new Date(T0 + 23 * DAY).toISOString(),
    });
    expect(keyCheck(key, 7 * DAY, T0 + 23 * DAY - 1).status).toBe('ok');
    expect(keyCheck(key, 7 * DAY, T0 + 23 * DAY).status).toBe('expiring');
    expect(keyCheck(key, 7 * DAY, T0 + 30 * DAY)).toMatchObject({ status: 'expired', expiresInSeconds: 0 });
    expect(keyCheck(undefined, 7 * DAY, T0)).toEqual({ status: 'not registered' });
  });
});
