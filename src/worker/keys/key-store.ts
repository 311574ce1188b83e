/**
 * Where a connector's key pairs live between runs: a {@link KeyStore}. The kit ships a file store (the default for
 * a single worker), a read-only store for containers (an environment variable or a mounted secret file) and an
 * in-memory store for tests. See `docs/keys.md`.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import nacl from 'tweetnacl';
import { z } from 'zod';
import { fromBase64, toBase64 } from '../../api/index.js';
import { ApprovalKitError, formatIssues, toIssues, type ValidationIssue } from '../../errors.js';
import { nonEmptyString, parseOptions } from '../../internal/options.js';

const KEY_PATTERN = /^[A-Za-z0-9+/]{43}=$/;
const Key = z.string().regex(KEY_PATTERN, 'must be a 32-byte key in standard base64');
const Instant = z.iso.datetime({ offset: true });

const StoredKey = z
  .object({
    publicKey: Key,
    secretKey: Key,
    createdAt: Instant,
    expiresAt: Instant,
  })
  .superRefine((key, ctx) => {
    if (Date.parse(key.expiresAt) <= Date.parse(key.createdAt)) {
      ctx.addIssue({ code: 'custom', path: ['expiresAt'], message: 'must be later than createdAt' });
    }
    // Refinements run even after a field failed; only a well-formed pair can be checked.
    if (!KEY_PATTERN.test(key.publicKey) || !KEY_PATTERN.test(key.secretKey)) return;
    // A mismatch means the pair was assembled wrong, and tasks would be sealed to a key nobody can open.
    const derived = nacl.box.keyPair.fromSecretKey(fromBase64(key.secretKey)).publicKey;
    if (toBase64(derived) !== key.publicKey) {
      ctx.addIssue({ code: 'custom', path: ['secretKey'], message: 'does not belong to publicKey' });
    }
  });

/**
 * The stored form of a key ring: a versioned list of x25519 key pairs, binary values in standard base64 and times
 * in ISO 8601. The newest key (by `createdAt`) that has not expired is the current one.
 *
 * @example
 * ```json
 * { "version": 1, "keys": [{ "publicKey": "…", "secretKey": "…",
 *   "createdAt": "2026-05-01T10:00:00.000Z", "expiresAt": "2026-05-31T10:00:00.000Z" }] }
 * ```
 */
export const KeyRingData = z.object({
  version: z.literal(1),
  keys: z.array(StoredKey),
});
export type KeyRingData = z.infer<typeof KeyRingData>;

/** The key ring read from a store is malformed. The message names each problem, never a key. */
export class KeyRingInvalidError extends ApprovalKitError<'key_ring_invalid'> {
  readonly issues: readonly ValidationIssue[];

  constructor(source: string, issues: readonly ValidationIssue[]) {
    super('key_ring_invalid', `Invalid key ring in ${source}: ${formatIssues(issues)}`);
    this.issues = issues;
  }
}

/** A read-only key store was asked to save: its keys are provided, and rotated, by the operator. */
export class KeyStoreReadOnlyError extends ApprovalKitError<'key_store_read_only'> {
  constructor(source: string) {
    super(
      'key_store_read_only',
      `Cannot save keys to ${source}: it is read-only; the operator provides new keys there`,
    );
  }
}

/**
 * Validates key ring data read from `source` (named in the error). Throws {@link KeyRingInvalidError}; neither the
 * message nor a `cause` carries the data, since parser messages quote their input.
 */
export function parseKeyRingData(value: unknown, source: string): KeyRingData {
  const result = KeyRingData.safeParse(value);
  if (!result.success) throw new KeyRingInvalidError(source, toIssues(result.error));
  return result.data;
}

/** Parses key ring text: JSON, or JSON in standard base64 (convenient in environment variables). */
function parseKeyRingText(text: string, source: string): KeyRingData {
  const trimmed = text.trim();
  const json = trimmed.startsWith('{') ? trimmed : Buffer.from(trimmed, 'base64').toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new KeyRingInvalidError(source, [
      { path: [], message: 'is not JSON (nor base64 of JSON)', code: 'invalid_format' },
    ]);
  }
  return parseKeyRingData(value, source);
}

/**
 * Keeps a connector's key ring between runs. Implement it to keep keys elsewhere (a vault, a database); the kit
 * validates what `load` returns.
 */
export interface KeyStore {
  /** Where the keys are, for messages: a file name or a variable name, never a key. */
  readonly description: string;
  /**
   * Whether `save` is impossible. The key ring then never creates keys; it adopts what the operator puts in the
   * store.
   * @default false
   */
  readonly readOnly?: boolean;
  /** The stored key ring, or `undefined` when there is none yet. */
  load(): Promise<KeyRingData | undefined>;
  /** Replaces the stored key ring, atomically: after a crash, either the old or the new ring is stored. */
  save(data: KeyRingData): Promise<void>;
}

const fileKeyStoreOptionsSchema = z.strictObject({ path: nonEmptyString() });

/**
 * Keeps the key ring in a JSON file readable by its owner only (mode 0600). A save writes a temporary file in the
 * same directory, flushes it to disk and renames it over the old file, so a crash never leaves a partial ring.
 * The directory is created (mode 0700) when missing.
 *
 * Every process that shares the file must be able to rename in its directory; two processes rotating at the same
 * instant both keep their own key in memory, and a task sealed to the one not saved makes the loser reload.
 */
export class FileKeyStore implements KeyStore {
  readonly path: string;
  readonly description: string;

  constructor(path: string) {
    parseOptions(fileKeyStoreOptionsSchema, { path }, 'FileKeyStore options');
    this.path = path;
    this.description = `file ${path}`;
  }

  async load(): Promise<KeyRingData | undefined> {
    const text = await readIfExists(this.path);
    return text === undefined ? undefined : parseKeyRingText(text, this.description);
  }

  async save(data: KeyRingData): Promise<void> {
    const text = `${JSON.stringify(parseKeyRingData(data, 'the data to save'), null, 2)}\n`;
    const directory = dirname(this.path);
    await mkdir(directory, { recursive: true, mode: 0o700 });
    // Same directory as the target, so that the rename cannot cross file systems and stays atomic.
    const temporary = join(directory, `.${basename(this.path)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temporary, 'wx', 0o600);
      try {
        // The umask may have taken bits off the mode given to open; the owner must still be able to read.
        await handle.chmod(0o600);
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, this.path);
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => undefined);
      throw error;
    }
    await syncDirectory(directory);
  }
}

/** Where a {@link ReadOnlyKeyStore} reads: an environment variable, or a file mounted from a secret. */
export type ReadOnlyKeyStoreSource =
  | {
      /** Name of the environment variable holding the key ring (JSON, or base64 of JSON). */
      variable: string;
      /**
       * The environment to read.
       * @default process.env
       */
      env?: Readonly<Record<string, string | undefined>>;
    }
  | {
      /** Path of the file holding the key ring (JSON, or base64 of JSON), typically a mounted secret. */
      file: string;
    };

const readOnlySourceSchema = z.union(
  [
    z.strictObject({
      variable: nonEmptyString(),
      env: z
        .custom<Readonly<Record<string, string | undefined>>>(
          (value) => typeof value === 'object' && value !== null,
          { error: 'an object of environment variables' },
        )
        .optional(),
    }),
    z.strictObject({ file: nonEmptyString() }),
  ],
  { error: 'either `{ variable }` or `{ file }`' },
);

/**
 * Reads a key ring the operator provides, for containers whose file system is ephemeral or shared by replicas.
 * Saving is impossible, so the kit never rotates these keys: the operator adds a new key before the current one
 * expires and the connector adopts it (see `docs/keys.md`). A mounted file is read again on every load, so a
 * secret updated in place is picked up without a restart; an environment variable needs a restart.
 */
export class ReadOnlyKeyStore implements KeyStore {
  readonly readOnly = true;
  readonly description: string;
  readonly #source: ReadOnlyKeyStoreSource;

  constructor(source: ReadOnlyKeyStoreSource) {
    this.#source = parseOptions(readOnlySourceSchema, source, 'ReadOnlyKeyStore options');
    this.description =
      'variable' in this.#source
        ? `environment variable ${this.#source.variable}`
        : `file ${this.#source.file}`;
  }

  async load(): Promise<KeyRingData | undefined> {
    const source = this.#source;
    const text =
      'variable' in source ? (source.env ?? process.env)[source.variable] : await readIfExists(source.file);
    if (text === undefined || text.trim() === '') return undefined;
    return parseKeyRingText(text, this.description);
  }

  async save(_data: KeyRingData): Promise<void> {
    throw new KeyStoreReadOnlyError(this.description);
  }
}

/** Keeps the key ring in memory, for tests. Stores and returns copies, as a real store would. */
export class MemoryKeyStore implements KeyStore {
  readonly description = 'memory';
  #data: KeyRingData | undefined;

  constructor(data?: KeyRingData) {
    this.#data = data === undefined ? undefined : structuredClone(data);
  }

  async load(): Promise<KeyRingData | undefined> {
    return this.#data === undefined ? undefined : structuredClone(this.#data);
  }

  async save(data: KeyRingData): Promise<void> {
    this.#data = structuredClone(parseKeyRingData(data, 'the data to save'));
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

// A rename is durable only once its directory entry is; some platforms cannot open a directory, and there the
// rename is as durable as the platform makes it.
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not supported here (Windows); nothing more can be done.
  }
}
