import { z } from 'zod';
import type { IntegrationClient } from '../../client/index.js';
import { SyncCursor } from '../../connector/internal.js';
import { OneAtATime } from '../../internal/one-at-a-time.js';

/** The kit's part of connector state, under the key `kit`. Never holds a secret. */
const KitState = z.looseObject({
  version: z.literal(1),
  sync: z
    .looseObject({
      cursor: SyncCursor.optional(),
      lastRunAt: z.string().optional(),
    })
    .default({}),
});
type KitState = z.infer<typeof KitState>;

/** The key of connector state that holds the kit's part. The author's part sits beside it, under `app`. */
export const KIT_STATE_KEY = 'kit';
export const APP_STATE_KEY = 'app';

/**
 * Connector state as one object on the service: `{kit: {...}, app: {...}}`. The service replaces the whole object on
 * each write, so both parts are written together, one write at a time, the latest value winning.
 */
export class StateStore<AppState extends object> {
  readonly #client: IntegrationClient;
  readonly #writes = new OneAtATime();
  #kit: KitState = { version: 1, sync: {} };
  /** The saved cursor's key, parsed once. */
  #cursorKey: CursorKey | undefined;
  #app: AppState | undefined;
  #dirty = false;

  constructor(client: IntegrationClient) {
    this.#client = client;
  }

  /** Reads the state from the service. Unknown or malformed kit state starts afresh rather than failing the worker. */
  async load(signal?: AbortSignal): Promise<void> {
    const stored = await this.#client.getState(signal ? { signal } : {});
    const state = stored?.state ?? {};
    const kit = KitState.safeParse(state[KIT_STATE_KEY]);
    this.#kit = kit.success ? kit.data : { version: 1, sync: {} };
    this.#cursorKey = undefined;
    this.#app = state[APP_STATE_KEY] as AppState | undefined;
  }

  get cursor(): SyncCursor | undefined {
    return this.#kit.sync.cursor;
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
   * `signal` cuts the write short; the state then stays to be written.
   */
  flush(signal?: AbortSignal): Promise<void> {
    const options = signal ? { signal } : {};
    // Not given to the queue: it would start the next write while this one is still being cut short, and that one
    // would find nothing to write.
    return this.#writes.run(async () => {
      if (!this.#dirty) return;
      this.#dirty = false;
      try {
        await this.#client.putState(
          {
            [KIT_STATE_KEY]: this.#kit,
            ...(this.#app === undefined ? {} : { [APP_STATE_KEY]: this.#app }),
          },
          options,
        );
      } catch (error) {
        this.#dirty = true;
        throw error;
      }
    });
  }
}

/**
 * A place in the source's order with its instant already parsed (epoch milliseconds), so that ordering places,
 * once per record of a sync, never parses a date; it becomes a {@link SyncCursor} only when it is saved.
 */
export interface CursorKey {
  readonly at: number;
  readonly id: string;
}

/** The key of a saved cursor. */
export function keyOfCursor(cursor: SyncCursor): CursorKey {
  return { at: Date.parse(cursor.lastModified), id: cursor.id };
}

/** The cursor saved for a key: `lastModified` as `Date.toISOString` writes it. */
export function cursorOfKey(key: CursorKey): SyncCursor {
  return { lastModified: new Date(key.at).toISOString(), id: key.id };
}

/** Orders keys by instant, then by `id`: the order of `(lastModified, id)` with `lastModified` read as an instant. */
export function compareKeys(a: CursorKey, b: CursorKey): number {
  const byTime = a.at - b.at;
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
