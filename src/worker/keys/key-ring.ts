/**
 * The connector's x25519 key pairs: a {@link KeyRing} holds the current key and the earlier ones that have not
 * expired, rotates before the current one expires, and opens the credentials a task carries with whichever key
 * they were sealed to. Secret keys stay in private fields: no message, log line or JSON of the ring shows one.
 * See `docs/keys.md`.
 * @module
 */
import nacl from 'tweetnacl';
import { z } from 'zod';
import {
  type EncryptedCredentials,
  fromBase64,
  isPublicKey,
  openCredentials,
  toBase64,
} from '../../api/index.js';
import type { Credentials } from '../../connector/index.js';
import { CredentialsUnreadableError } from '../../connector/index.js';
import { wrapCredentials } from '../../connector/internal.js';
import { ApprovalKitError } from '../../errors.js';
import { OneAtATime } from '../../internal/one-at-a-time.js';
import {
  crossCheck,
  func,
  integer,
  type OptionsShape,
  parseOptions,
  type Resolved,
} from '../../internal/options.js';
import { type KeyRingData, type KeyStore, KeyStoreReadOnlyError, parseKeyRingData } from './key-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_KEY_LIFETIME_MS = 30 * DAY_MS;
const DEFAULT_ROTATION_MARGIN_MS = 7 * DAY_MS;

/** Options of a {@link KeyRing}. */
export interface KeyRingOptions {
  /**
   * How long a new key is valid, in milliseconds. Registered as the key's `publicKeyExpiredAt`.
   * @default 30 days
   */
  keyLifetimeMs?: number;
  /**
   * How long before the current key expires a new one replaces it, in milliseconds. Tasks sealed to the old key
   * still open during this margin; it also leaves time to retry when the store or the service is down. Must be
   * less than `keyLifetimeMs`.
   * @default 7 days
   */
  rotationMarginMs?: number;
  /**
   * The clock, in milliseconds since the epoch.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Called when a key becomes current after the ring was loaded, for logs and metrics: `created` when the ring made
   * one because it held no unexpired key (an empty store), `rotated` when it made one to replace a current key that
   * was due, `adopted` when it took one that another process or the operator put in the store. It must not throw.
   * @default none
   */
  onNewKey?: (key: PublicKeyInfo, reason: NewKeyReason) => void;
}

/** Why a key became current: see {@link KeyRingOptions.onNewKey}. */
export type NewKeyReason = 'created' | 'rotated' | 'adopted';

/** The public half of a key pair, with its validity. */
export interface PublicKeyInfo {
  /** The x25519 public key, 32 bytes in standard base64. */
  readonly publicKey: string;
  readonly createdAt: Date;
  /** When the key stops opening credentials and is dropped; the `publicKeyExpiredAt` registered with it. */
  readonly expiresAt: Date;
}

/**
 * The key ring has no key that has not expired, and cannot make one: its store is read-only (the operator has not
 * provided a new key) or holds nothing.
 */
export class KeyRingUnavailableError extends ApprovalKitError<'key_ring_unavailable'> {
  constructor(message: string) {
    super('key_ring_unavailable', message);
  }
}

type StoredKey = KeyRingData['keys'][number];

/** One key pair. The secret key is reachable only through `open` and `toData` (for the store). */
class RingKey {
  readonly publicKey: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly #secretKey: Uint8Array;

  private constructor(publicKey: string, secretKey: Uint8Array, createdAt: number, expiresAt: number) {
    this.publicKey = publicKey;
    this.#secretKey = secretKey;
    this.createdAt = createdAt;
    this.expiresAt = expiresAt;
  }

  static generate(now: number, lifetimeMs: number): RingKey {
    const pair = nacl.box.keyPair();
    return new RingKey(toBase64(pair.publicKey), pair.secretKey, now, now + lifetimeMs);
  }

  static fromData(stored: StoredKey): RingKey {
    return new RingKey(
      stored.publicKey,
      fromBase64(stored.secretKey),
      Date.parse(stored.createdAt),
      Date.parse(stored.expiresAt),
    );
  }

  open(sealed: EncryptedCredentials): Record<string, unknown> | undefined {
    return openCredentials(sealed, this.#secretKey);
  }

  toData(): StoredKey {
    return {
      publicKey: this.publicKey,
      secretKey: toBase64(this.#secretKey),
      createdAt: new Date(this.createdAt).toISOString(),
      expiresAt: new Date(this.expiresAt).toISOString(),
    };
  }

  info(): PublicKeyInfo {
    return {
      publicKey: this.publicKey,
      createdAt: new Date(this.createdAt),
      expiresAt: new Date(this.expiresAt),
    };
  }
}

/**
 * Adds a new key pair to key ring data and drops the expired ones: the next ring an operator puts in a read-only
 * store. The new key is the current one from then on.
 *
 * @example
 * <!-- example: typecheck, because it writes a file of keys -->
 * ```ts
 * import { writeFile } from 'node:fs/promises';
 * import { FileKeyStore, generateKeyRingData } from 'approval-connector-kit/worker';
 *
 * const next = generateKeyRingData(await new FileKeyStore('keys.json').load());
 * await writeFile('keys.json', JSON.stringify(next), { mode: 0o600 });
 * ```
 */
export function generateKeyRingData(
  previous?: KeyRingData,
  options: Pick<KeyRingOptions, 'keyLifetimeMs' | 'now'> = {},
): KeyRingData {
  const { keyLifetimeMs, now } = compileKeyRingOptions({ ...options, rotationMarginMs: 0 });
  const at = now();
  const kept = previous === undefined ? [] : parseKeyRingData(previous, 'the previous key ring').keys;
  return {
    version: 1,
    keys: [
      RingKey.generate(at, keyLifetimeMs).toData(),
      ...kept.filter((key) => Date.parse(key.expiresAt) > at),
    ],
  };
}

/**
 * A connector's key pairs: the current one, whose public key is registered with the service, and earlier ones
 * kept until their own expiry so that tasks sealed to them still open. Expired keys are dropped.
 *
 * With a writable store the ring creates the first key and rotates: once the current key is within
 * `rotationMarginMs` of its expiry, a new key becomes current (the caller then registers it). With a read-only
 * store it adopts the newest key the operator has put there. A key once loaded stays in memory until it expires,
 * even if the store no longer lists it.
 *
 * @example
 * <!-- example: typecheck, because the task is the service's -->
 * ```ts
 * import { FileKeyStore, KeyRing } from 'approval-connector-kit/worker';
 *
 * const ring = await KeyRing.load(new FileKeyStore('.connector/keys.json'));
 * await client.registerConnector({ authRequired: true, publicKey: ring.current.publicKey,
 *   publicKeyExpiredAt: ring.current.expiresAt });
 * const credentials = await ring.open(leased.data.credentials!); // sealed, with authRequired
 * ```
 */
export class KeyRing {
  readonly #store: KeyStore;
  readonly #options: CompiledKeyRingOptions;
  /** Newest first: the first unexpired key is the current one. */
  #keys: RingKey[] = [];
  /** Whether keys were pruned since the store was last written. */
  #pruned = false;
  /** Loads, saves and rotations, one at a time, so that two callers never rotate twice. */
  readonly #exclusive = new OneAtATime();
  /** The public key last made current, and the key this ring itself made last, with why. */
  #announced: string | undefined;
  #made: { publicKey: string; reason: NewKeyReason } | undefined;

  private constructor(store: KeyStore, options: CompiledKeyRingOptions) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Loads the key ring from a store. With a writable store, creates and saves a first key when there is none and
   * rotates when rotation is due. Throws {@link KeyRingInvalidError} when the stored data is malformed and
   * {@link KeyRingUnavailableError} when a read-only store has no key that has not expired.
   */
  static async load(store: KeyStore, options: KeyRingOptions = {}): Promise<KeyRing> {
    const ring = new KeyRing(store, compileKeyRingOptions(options));
    await ring.#exclusive.run(() => ring.#merge());
    // What the store held is loaded, not new; a key made or adopted from here on is announced.
    ring.#announced = ring.#keys[0]?.publicKey;
    if (store.readOnly === true) ring.#current();
    else await ring.rotateIfDue();
    return ring;
  }

  /** The key to register with the service. Throws {@link KeyRingUnavailableError} when every key has expired. */
  get current(): PublicKeyInfo {
    return this.#current().info();
  }

  /** How long before a key expires it is due to be replaced, in milliseconds (`rotationMarginMs`). */
  get rotationMarginMs(): number {
    return this.#options.rotationMarginMs;
  }

  /** When the current key is due to be replaced: `rotationMarginMs` before it expires. */
  get rotationDueAt(): Date {
    return new Date(this.#current().expiresAt - this.#options.rotationMarginMs);
  }

  /** Whether the current key is within `rotationMarginMs` of its expiry, or there is no current key. */
  isRotationDue(): boolean {
    this.#prune();
    const current = this.#keys[0];
    return current === undefined || this.#options.now() >= current.expiresAt - this.#options.rotationMarginMs;
  }

  /**
   * Rotates when due and saves. Resolves to `true` when the current key changed, so the caller registers the new
   * public key. Before rotating, the store is read again, so that a process sharing it that has just rotated is
   * followed rather than overtaken. A read-only store is read again at every call instead, to adopt a key the
   * operator added; the ring never creates one there.
   */
  rotateIfDue(): Promise<boolean> {
    return this.#exclusive.run(async () => {
      const before = this.#keys[0]?.publicKey;
      const writable = this.#store.readOnly !== true;
      if (!writable) await this.#merge();
      else if (this.isRotationDue()) {
        await this.#merge();
        if (this.isRotationDue()) await this.#addKey();
      }
      if (this.#pruned && writable) {
        await this.#merge();
        await this.#save(this.#keys);
      }
      this.#announce();
      return this.#keys[0]?.publicKey !== before;
    });
  }

  /**
   * Makes a new key current now, whether or not rotation is due, and saves it. Earlier keys stay until they expire.
   * Throws {@link KeyStoreReadOnlyError} with a read-only store.
   */
  rotate(): Promise<PublicKeyInfo> {
    return this.#exclusive.run(async () => {
      if (this.#store.readOnly === true) throw new KeyStoreReadOnlyError(this.#store.description);
      await this.#merge();
      await this.#addKey();
      this.#announce();
      return this.#current().info();
    });
  }

  /**
   * Reads the store again and adds the keys it holds that this ring does not. Resolves to `true` when the current
   * key changed.
   */
  reload(): Promise<boolean> {
    return this.#exclusive.run(async () => {
      const before = this.#keys[0]?.publicKey;
      await this.#merge();
      this.#announce();
      return this.#keys[0]?.publicKey !== before;
    });
  }

  /**
   * Opens the credentials a task carries with the key named in `sealed.publicKey`, else with any key that has not
   * expired. When no key of the ring is named, the store is read once more first (another process may have
   * rotated). Every field of the result is a {@link Secret}. Throws {@link CredentialsUnreadableError}.
   */
  async open(sealed: EncryptedCredentials): Promise<Credentials> {
    let opened = this.#tryOpen(sealed);
    if (opened === undefined && !this.#holds(sealed.publicKey)) {
      try {
        await this.reload();
      } catch (error) {
        throw new CredentialsUnreadableError(
          `Credentials are sealed to ${describeKey(sealed.publicKey)}, which this connector does not hold, and ` +
            `its key store could not be read again`,
          { cause: error },
        );
      }
      opened = this.#tryOpen(sealed);
    }
    if (opened !== undefined) return wrapCredentials(opened);
    throw new CredentialsUnreadableError(
      this.#holds(sealed.publicKey)
        ? 'Credentials could not be decrypted: tampered with, or not a JSON object'
        : `Credentials are sealed to ${describeKey(sealed.publicKey)}, which this connector does not hold ` +
            '(expired, or never its own)',
    );
  }

  /** The public view: current key and every unexpired key, never a secret key. */
  toJSON(): { current: PublicKeyInfo | null; keys: PublicKeyInfo[] } {
    this.#prune();
    return { current: this.#keys[0]?.info() ?? null, keys: this.#keys.map((key) => key.info()) };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): unknown {
    return this.toJSON();
  }

  #current(): RingKey {
    this.#prune();
    const current = this.#keys[0];
    if (current !== undefined) return current;
    const store = this.#store;
    throw new KeyRingUnavailableError(
      store.readOnly === true
        ? `No unexpired key in ${store.description}: it is read-only, so the operator must add a new key there`
        : `No unexpired key in ${store.description}`,
    );
  }

  #holds(publicKey: string): boolean {
    this.#prune();
    return this.#keys.some((key) => key.publicKey === publicKey);
  }

  #tryOpen(sealed: EncryptedCredentials): Record<string, unknown> | undefined {
    this.#prune();
    // The named key first; the others cover a sender that named the key wrongly.
    const ordered = [...this.#keys].sort(
      (a, b) => Number(b.publicKey === sealed.publicKey) - Number(a.publicKey === sealed.publicKey),
    );
    for (const key of ordered) {
      const opened = key.open(sealed);
      if (opened !== undefined) return opened;
    }
    return undefined;
  }

  #prune(): void {
    const now = this.#options.now();
    const before = this.#keys.length;
    this.#keys = this.#keys.filter((key) => key.expiresAt > now);
    if (this.#keys.length !== before) this.#pruned = true;
  }

  async #merge(): Promise<void> {
    const loaded = await this.#store.load();
    if (loaded !== undefined) {
      const data = parseKeyRingData(loaded, this.#store.description);
      const held = new Set(this.#keys.map((key) => key.publicKey));
      const added = data.keys.filter((key) => !held.has(key.publicKey)).map((key) => RingKey.fromData(key));
      this.#keys = sortNewestFirst([...this.#keys, ...added]);
    }
    this.#prune();
  }

  // The new key becomes current only once saved: a key the store lost would be registered, and its tasks would
  // become unreadable after a restart.
  async #addKey(): Promise<void> {
    const key = RingKey.generate(this.#options.now(), this.#options.keyLifetimeMs);
    const keys = [key, ...this.#keys];
    await this.#save(keys);
    this.#made = { publicKey: key.publicKey, reason: this.#keys.length === 0 ? 'created' : 'rotated' };
    this.#keys = keys;
  }

  #announce(): void {
    const current = this.#keys[0];
    if (current === undefined || current.publicKey === this.#announced) return;
    this.#announced = current.publicKey;
    const made = this.#made?.publicKey === current.publicKey ? this.#made.reason : 'adopted';
    this.#options.onNewKey?.(current.info(), made);
  }

  async #save(keys: readonly RingKey[]): Promise<void> {
    await this.#store.save({ version: 1, keys: keys.map((key) => key.toData()) });
    this.#pruned = false;
  }
}

function sortNewestFirst(keys: RingKey[]): RingKey[] {
  return keys.sort((a, b) => b.createdAt - a.createdAt || b.expiresAt - a.expiresAt);
}

function describeKey(publicKey: unknown): string {
  return typeof publicKey === 'string' && isPublicKey(publicKey)
    ? `public key ${publicKey}`
    : 'an unknown key';
}

/**
 * The schema of {@link KeyRingOptions} without the rule that ties the margin to the lifetime (see
 * {@link keyRingOptionsSchema}), so that the connector can take two of its options.
 */
export const keyRingOptionsShape = z.strictObject({
  keyLifetimeMs: integer(1).default(DEFAULT_KEY_LIFETIME_MS),
  rotationMarginMs: integer(0).default(DEFAULT_ROTATION_MARGIN_MS),
  // Looked up at each call, so fake timers installed later are honoured.
  now: func<() => number>().default(() => () => Date.now()),
  onNewKey: func<(key: PublicKeyInfo, reason: NewKeyReason) => void>().optional(),
} satisfies OptionsShape<KeyRingOptions, CompiledKeyRingOptions>);

/** The rotation margin must be less than the key lifetime, or every key would be due as soon as it is made. */
export const marginUnderLifetime = crossCheck<{ keyLifetimeMs: number; rotationMarginMs: number }>(
  (keys, context) => {
    if (keys.rotationMarginMs >= keys.keyLifetimeMs) {
      context.addIssue({
        code: 'too_big',
        origin: 'number',
        maximum: keys.keyLifetimeMs,
        inclusive: false,
        path: ['rotationMarginMs'],
        input: keys.rotationMarginMs,
        message: `an integer from 0 to less than keyLifetimeMs (${keys.keyLifetimeMs})`,
      });
    }
  },
);

/** The schema of {@link KeyRingOptions}: checks them and applies every default. */
export const keyRingOptionsSchema = keyRingOptionsShape.check(marginUnderLifetime);

type CompiledKeyRingOptions = Resolved<KeyRingOptions, 'onNewKey'>;

function compileKeyRingOptions(options: KeyRingOptions): CompiledKeyRingOptions {
  return parseOptions(keyRingOptionsSchema, options, 'key ring options');
}
