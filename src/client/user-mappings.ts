/**
 * Maps a source system's user ids to the service's users by email, with Add user mappings and `upsert: 1`.
 * See `docs/operations.md`, "User mappings".
 * @module
 */

import { z } from 'zod';
import type { NewUserMapping } from '../api/index.js';
import { integer, type OptionsShape, parseOptions, type Resolved } from '../internal/options.js';
import { BadRequestError, ConflictError, NotFoundError } from './errors.js';
import type { ManagementClient } from './management-client.js';

/** One user of the source system: its id there and its email. */
export interface UserMappingEntry {
  systemUserId: string;
  email: string;
}

/** Options of {@link syncUserMappings}. */
export interface SyncUserMappingsOptions {
  /**
   * Mappings per Add user mappings request, 1 to 1000. A request is all or nothing on the service; a refused one is split
   * in halves and sent again until each refused mapping is alone, so that one bad mapping does not hold back the
   * others.
   * @default 100
   */
  batchSize?: number;
  /**
   * Items per page when reading the organization's users and the system's mappings, 1 to 1000 (what the service
   * allows).
   * @default 1000
   */
  pageSize?: number;
  /**
   * Most emails listed in `unknownEmails` and most items in `failures`; the counts are always exact.
   * @default 100
   */
  maxListed?: number;
  /**
   * Stops the work: nothing more is sent, and the call rejects with `signal.reason`.
   * @default none
   */
  signal?: AbortSignal;
}

/** User mapping options with every default applied. */
type ResolvedUserMappingsOptions = Resolved<SyncUserMappingsOptions, 'signal'>;

/** A source user whose mapping was not written. */
export interface UserMappingFailure {
  systemUserId: string;
  email: string;
  /**
   * Why: `invalid_entry` (an id or email that is empty or not a string), `ambiguous_email` (several service users
   * have it), `duplicate_user` (an earlier entry of this run mapped the same service user to another id), or the
   * client error's code for a mapping the service refused (`conflict` when the id belongs to another user).
   */
  code: string;
  message: string;
}

/** What {@link syncUserMappings} did. */
export interface UserMappingsReport {
  /** Mappings written (new, or replacing the user's earlier id). */
  mapped: number;
  /** Entries already mapped exactly so; nothing was sent for them. */
  unchanged: number;
  /** Entries whose email is not a user of the organization. */
  unknown: number;
  /** Their emails, as the source gave them, up to `maxListed`. */
  unknownEmails: string[];
  /** Entries whose mapping was not written. */
  failed: number;
  /** Why, up to `maxListed`. */
  failures: UserMappingFailure[];
}

interface Pending {
  entry: UserMappingEntry;
  userId: string;
}

/**
 * Maps each source user to the service user with the same email (compared without regard to ASCII case, spaces
 * around it ignored), writing only what is new or changed. Reads the organization's users and the system's mappings
 * once each, then streams `entries`, so memory grows with the organization, not with the source.
 *
 * Failures of single mappings are reported, not thrown; a failure of the service as a whole (unauthorized, still
 * unavailable after the client's retries) rejects, and what was written before it stays written.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { ManagementClient } from 'approval-connector-kit/client';
 * import { syncUserMappings } from 'approval-connector-kit/worker';
 *
 * const management = new ManagementClient({ baseUrl, token: managementToken });
 * const report = await syncUserMappings(management, systemId, jira.users());
 * logger.info(report, 'user mappings synced');
 * ```
 */
export async function syncUserMappings(
  client: ManagementClient,
  systemId: string,
  entries: AsyncIterable<UserMappingEntry> | Iterable<UserMappingEntry>,
  options: SyncUserMappingsOptions = {},
): Promise<UserMappingsReport> {
  const { batchSize, pageSize, maxListed, signal } = compileOptions(options);
  signal?.throwIfAborted();
  const held = await readHeld(client, systemId, { signal, pageSize });
  const run = new MappingRun(client, systemId, held, { maxListed, signal });
  let batch: Pending[] = [];
  for await (const entry of entries) {
    signal?.throwIfAborted();
    const pending = run.check(entry);
    if (pending === undefined) continue;
    batch.push(pending);
    if (batch.length >= batchSize) {
      await run.send(batch);
      batch = [];
    }
  }
  signal?.throwIfAborted();
  if (batch.length > 0) await run.send(batch);
  return run.report;
}

/** What the service holds, read once a run. */
interface Held {
  /** Each user's current id in the system: an entry that matches it is skipped, one that differs is upserted. */
  idOfUser: Map<string, string>;
  /** The user of each email, by {@link emailKey}; `null` marks an email several users have. */
  userOfEmail: Map<string, string | null>;
}

async function readHeld(
  client: ManagementClient,
  systemId: string,
  request: { signal: AbortSignal | undefined; pageSize: number },
): Promise<Held> {
  const idOfUser = new Map<string, string>();
  for await (const mapping of client.iterateSystemUserMappings(systemId, request)) {
    idOfUser.set(mapping.userId, mapping.systemUserId);
  }
  // Get users' filter is exact and case-sensitive, so one lookup per entry could miss `Ada@` for `ada@`; one walk
  // over all users costs a request per thousand users instead of one per entry.
  const userOfEmail = new Map<string, string | null>();
  for await (const user of client.iterateUsers({}, request)) {
    const key = emailKey(user.email);
    userOfEmail.set(key, userOfEmail.has(key) ? null : user.id);
  }
  return { idOfUser, userOfEmail };
}

/** One run of {@link syncUserMappings}: what each entry needs, the writes, and the report. */
class MappingRun {
  readonly report: UserMappingsReport = {
    mapped: 0,
    unchanged: 0,
    unknown: 0,
    unknownEmails: [],
    failed: 0,
    failures: [],
  };
  readonly #client: ManagementClient;
  readonly #systemId: string;
  readonly #held: Held;
  readonly #maxListed: number;
  readonly #signal: AbortSignal | undefined;
  /** Users given an id in this run: a second, different id for one of them is the source's contradiction. */
  readonly #claimed = new Map<string, string>();

  constructor(
    client: ManagementClient,
    systemId: string,
    held: Held,
    options: { maxListed: number; signal: AbortSignal | undefined },
  ) {
    this.#client = client;
    this.#systemId = systemId;
    this.#held = held;
    this.#maxListed = options.maxListed;
    this.#signal = options.signal;
  }

  /** The mapping an entry needs written, or `undefined` when none (it is unchanged, unknown or failed: counted). */
  check(entry: UserMappingEntry | undefined): Pending | undefined {
    if (!isValidEntry(entry)) {
      this.#fail(
        entry ?? { systemUserId: '', email: '' },
        'invalid_entry',
        'systemUserId and email must be non-empty strings',
      );
      return undefined;
    }
    const userId = this.#held.userOfEmail.get(emailKey(entry.email));
    if (userId === undefined) {
      this.report.unknown += 1;
      if (this.report.unknownEmails.length < this.#maxListed) this.report.unknownEmails.push(entry.email);
      return undefined;
    }
    if (userId === null) {
      this.#fail(entry, 'ambiguous_email', 'several users of the organization have this email');
      return undefined;
    }
    const earlier = this.#claimed.get(userId);
    if (earlier !== undefined && earlier !== entry.systemUserId) {
      this.#fail(
        entry,
        'duplicate_user',
        `an earlier entry mapped the same user to ${JSON.stringify(earlier)}`,
      );
      return undefined;
    }
    this.#claimed.set(userId, entry.systemUserId);
    if (earlier !== undefined || this.#held.idOfUser.get(userId) === entry.systemUserId) {
      this.report.unchanged += 1;
      return undefined;
    }
    return { entry, userId };
  }

  /**
   * Writes mappings in one request. The service takes a request whole or not at all: a refused one is halved until
   * each refused mapping is alone, in the source's order, and reported.
   */
  async send(items: Pending[]): Promise<void> {
    const body: NewUserMapping[] = items.map(({ entry, userId }) => ({
      userId,
      systemUserId: entry.systemUserId,
      upsert: 1,
    }));
    try {
      await this.#client.addUserMappings(this.#systemId, body, { signal: this.#signal });
    } catch (error) {
      if (!isRefusal(error)) throw error;
      if (items.length === 1) {
        this.#fail(items[0]!.entry, error.code, error.message);
        return;
      }
      const middle = Math.ceil(items.length / 2);
      await this.send(items.slice(0, middle));
      await this.send(items.slice(middle));
      return;
    }
    this.report.mapped += items.length;
    for (const { entry, userId } of items) this.#held.idOfUser.set(userId, entry.systemUserId);
  }

  #fail(entry: UserMappingEntry, code: string, message: string): void {
    this.report.failed += 1;
    if (this.report.failures.length < this.#maxListed) {
      this.report.failures.push({
        systemUserId: String(entry.systemUserId),
        email: String(entry.email),
        code,
        message,
      });
    }
  }
}

// The service compares emails without regard to ASCII case only, so a full Unicode fold could merge two users.
function emailKey(email: string): string {
  return email.trim().replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

function isValidEntry(entry: UserMappingEntry | undefined): entry is UserMappingEntry {
  return (
    typeof entry?.systemUserId === 'string' &&
    entry.systemUserId !== '' &&
    typeof entry.email === 'string' &&
    entry.email.trim() !== ''
  );
}

/** The service refused the mappings themselves; another request without them may succeed. */
function isRefusal(error: unknown): error is ConflictError | NotFoundError | BadRequestError {
  return error instanceof ConflictError || error instanceof NotFoundError || error instanceof BadRequestError;
}

/** The schema of {@link SyncUserMappingsOptions}: checks them and applies every default. */
export const userMappingsOptionsSchema = z.strictObject({
  batchSize: integer(1, 1000).default(100),
  pageSize: integer(1, 1000).default(1000),
  maxListed: integer(0).default(100),
  signal: z.instanceof(AbortSignal, { error: 'an AbortSignal' }).optional(),
} satisfies OptionsShape<SyncUserMappingsOptions, ResolvedUserMappingsOptions>);

function compileOptions(options: SyncUserMappingsOptions): ResolvedUserMappingsOptions {
  return parseOptions(userMappingsOptionsSchema, options, 'user mapping options');
}
