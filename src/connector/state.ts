/**
 * Connector state as the author's code sees it: its own part, through {@link StateAccess}, and the sync cursor the
 * kit keeps beside it.
 * @module
 */
import { z } from 'zod';

/** A position in the source's stream of changes: the last change pushed, by `(lastModified, id)`. */
export const SyncCursor = z.object({
  /** ISO 8601 instant of the change. */
  lastModified: z.string(),
  /** The approval's id, ordering changes that share `lastModified`. */
  id: z.string(),
});
export type SyncCursor = z.infer<typeof SyncCursor>;

/**
 * The author's own part of connector state (under `app`), as a connector's methods reach it through their context.
 * The kit's part (the sync cursor) is kept beside it on every write.
 */
export interface StateAccess<AppState extends object = Record<string, unknown>> {
  /** The author's state as last loaded or written; `undefined` before the first write. */
  read(): AppState | undefined;
  /** Replaces the author's state and saves it, with the kit's part, one write at a time. */
  write(state: AppState): Promise<void>;
}
