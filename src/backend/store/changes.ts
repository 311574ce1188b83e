/** A write the store committed, as those who watch the store (the console's live updates) hear of it. */
export type StoreChange =
  | {
      kind: 'approval';
      systemId: string;
      approvalId: string;
      /** The write's `lastModified` (ISO 8601), absent when it carried none. */
      lastModified: string | undefined;
      /** Whether the lastModified rule let the write change the stored approval. */
      applied: boolean;
      /** When the write came, on the store's clock (ISO 8601). */
      at: string;
    }
  /** A task of the system changed; `systemId` is absent when leases ended across systems. */
  | { kind: 'task'; systemId: string | undefined }
  | { kind: 'connector' | 'state' | 'templates'; systemId: string }
  /** Organizations, systems, users or user mappings. */
  | { kind: 'directory' };

export type StoreChangeListener = (change: StoreChange) => void;

/** Tells listeners of every committed write. A write that is rolled back is never told. */
export class StoreChanges {
  readonly #listeners = new Set<StoreChangeListener>();

  /** Whether anyone listens; the store skips noting changes when no one does. */
  get watched(): boolean {
    return this.#listeners.size > 0;
  }

  /** Calls `listener` after each committed write until the returned function is called. */
  subscribe(listener: StoreChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(change: StoreChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        // The write has committed: a watcher's failure must not turn its request into an error.
      }
    }
  }
}
