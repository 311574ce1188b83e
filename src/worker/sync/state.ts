/**
 * Connector state as the service holds it, and the one module that knows its layout: the kit's part under `kit`,
 * the author's beside it under `app` (`docs/connector.md`, "State"), the sync cursor at `kit.sync.cursor`. Whatever
 * reads a saved cursor (the worker as it starts, the conformance kit, the tests) reads it with
 * {@link savedCursorOf}, so that each reads the cursor a worker resumes from. The one part read elsewhere is push
 * health, `kit.push.health`, which the reference backend's console reads through `internal/saved-push-health.ts`.
 * @module
 */
import { z } from 'zod';
import type { IntegrationClient } from '../../client/index.js';
import { SyncCursor } from '../../connector/internal.js';
import { OneAtATime } from '../../internal/one-at-a-time.js';
import { SavedPushHealth } from '../../internal/saved-push-health.js';
import { type CursorKey, compareKeys, cursorOfKey, keyOfCursor } from './cursor.js';

/** The key of connector state that holds the kit's part. */
export const KIT_STATE_KEY = 'kit';
/** The key of connector state that holds the author's part. */
export const APP_STATE_KEY = 'app';

/**
 * A push path's webhook as the source registered it, and where it delivers: what a restart finds rather than
 * registering another. Its fields are the author's `WebhookRegistration`, with `expiresAt` an ISO string.
 */
export const SavedWebhook = z.object({
  /** The push ingress's public address it was registered for. */
  url: z.string(),
  id: z.string().min(1),
  expiresAt: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  /** When it was registered or last refreshed, ISO 8601. */
  registeredAt: z.string(),
});
export type SavedWebhook = z.infer<typeof SavedWebhook>;

/** The kit's part of connector state, under {@link KIT_STATE_KEY}. Never holds a secret. */
const KitState = z.looseObject({
  version: z.literal(1),
  sync: z
    .looseObject({
      cursor: SyncCursor.optional(),
      /** When the cursor last moved (an ISO instant of the worker's clock), written with it. */
      lastRunAt: z.string().optional(),
    })
    .default({}),
  // A saved webhook that no longer reads as one is dropped (and registered again), not a reason to start afresh;
  // push health is the worker's own report, rewritten as its push path goes live.
  push: z
    .looseObject({
      webhook: SavedWebhook.optional().catch(undefined),
      health: SavedPushHealth.optional().catch(undefined),
    })
    .optional(),
});
type KitState = z.infer<typeof KitState>;

/** The kit's part of a fresh connector state. */
const freshKitState = (): KitState => ({ version: 1, sync: {} });

const StoredState = z.looseObject({ [KIT_STATE_KEY]: KitState });

/** The kit's part of a connector state object; unknown or malformed, it is `undefined`, and the kit starts afresh. */
function kitStateOf(state: unknown): KitState | undefined {
  const stored = StoredState.safeParse(state);
  return stored.success ? stored.data[KIT_STATE_KEY] : undefined;
}

/** The cursor saved in a connector state object: the one a worker resumes from, if there is one. */
export function savedCursorOf(state: unknown): SyncCursor | undefined {
  return kitStateOf(state)?.sync.cursor;
}

/** The cursor as the service holds it: its key, and when it moved there (epoch milliseconds), where known. */
export interface SavedCursor {
  readonly key: CursorKey | undefined;
  readonly movedAt: number | undefined;
}

/** The saved cursor of the kit's part of a state read from, or written to, the service. */
function savedOf(kit: KitState): SavedCursor {
  const { cursor, lastRunAt } = kit.sync;
  const movedAt = lastRunAt === undefined ? Number.NaN : Date.parse(lastRunAt);
  return {
    key: cursor === undefined ? undefined : keyOfCursor(cursor),
    movedAt: Number.isNaN(movedAt) ? undefined : movedAt,
  };
}

/**
 * Connector state as one object on the service: `{kit: {...}, app: {...}}`. The service replaces the whole object on
 * each write, so both parts are written together, one write at a time, the latest value winning.
 */
export class StateStore<AppState extends object> {
  readonly #client: IntegrationClient;
  readonly #writes = new OneAtATime();
  #kit: KitState = freshKitState();
  /** The saved cursor's key, parsed once. */
  #cursorKey: CursorKey | undefined;
  #app: AppState | undefined;
  #dirty = false;
  #saved: SavedCursor = { key: undefined, movedAt: undefined };

  constructor(client: IntegrationClient) {
    this.#client = client;
  }

  /** Reads the state from the service. Unknown or malformed kit state starts afresh rather than failing the worker. */
  async load(signal?: AbortSignal): Promise<void> {
    const stored = await this.#client.getState(signal ? { signal } : {});
    const state = stored?.state ?? {};
    this.#kit = kitStateOf(state) ?? freshKitState();
    this.#saved = savedOf(this.#kit);
    this.#cursorKey = undefined;
    this.#app = state[APP_STATE_KEY] as AppState | undefined;
  }

  get cursor(): SyncCursor | undefined {
    return this.#kit.sync.cursor;
  }

  /** The cursor as the service holds it: as loaded, or as last written (a cursor advanced since is not). */
  get saved(): SavedCursor {
    return this.#saved;
  }

  /** The push path's webhook as last saved, if any. */
  get webhook(): SavedWebhook | undefined {
    return this.#kit.push?.webhook;
  }

  /** Sets (or, `undefined`, forgets) the push path's webhook and writes it. */
  async setWebhook(webhook: SavedWebhook | undefined, signal?: AbortSignal): Promise<void> {
    const { webhook: _previous, ...push } = this.#kit.push ?? {};
    this.#kit = { ...this.#kit, push: webhook === undefined ? push : { ...push, webhook } };
    this.#dirty = true;
    await this.flush(signal);
  }

  /** Sets the push path's health (see `internal/saved-push-health.ts`); it is written with the next {@link flush}. */
  setPushHealth(health: SavedPushHealth): void {
    this.#kit = { ...this.#kit, push: { ...this.#kit.push, health } };
    this.#dirty = true;
  }

  /** Whether something changed since the last write began: the next {@link flush} writes. */
  get unsaved(): boolean {
    return this.#dirty;
  }

  /** The author's state as last loaded or written. */
  get app(): AppState | undefined {
    return this.#app;
  }

  /** Sets the cursor; it is written with the next {@link flush}. It never moves backwards. */
  advanceCursor(key: CursorKey, now: Date): void {
    const current = this.#kit.sync.cursor;
    this.#cursorKey ??= current === undefined ? undefined : keyOfCursor(current);
    if (this.#cursorKey !== undefined && compareKeys(key, this.#cursorKey) <= 0) return;
    this.#cursorKey = key;
    const cursor = cursorOfKey(key);
    this.#kit = { ...this.#kit, sync: { ...this.#kit.sync, cursor, lastRunAt: now.toISOString() } };
    this.#dirty = true;
  }

  /** Replaces the author's state and writes it. */
  async setApp(app: AppState, signal?: AbortSignal): Promise<void> {
    this.#app = app;
    this.#dirty = true;
    await this.flush(signal);
  }

  /**
   * Writes the state if it changed since the last write. Writes run one at a time; a waiting one writes the latest.
   * `signal` cuts the write short; the state then stays to be written. Resolves with whether it wrote.
   */
  flush(signal?: AbortSignal): Promise<boolean> {
    const options = signal ? { signal } : {};
    // Not given to the queue: it would start the next write while this one is still being cut short, and that one
    // would find nothing to write.
    return this.#writes.run(async () => {
      if (!this.#dirty) return false;
      this.#dirty = false;
      const kit = this.#kit;
      try {
        await this.#client.putState(
          {
            [KIT_STATE_KEY]: kit,
            ...(this.#app === undefined ? {} : { [APP_STATE_KEY]: this.#app }),
          },
          options,
        );
        this.#saved = savedOf(kit);
        return true;
      } catch (error) {
        this.#dirty = true;
        throw error;
      }
    });
  }
}
