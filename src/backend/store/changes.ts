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
  /**
   * A task of the system changed; `systemId` is absent when leases ended across systems. `taskId` and `event` say
   * which task and what happened to it, for a timeline.
   */
  | { kind: 'task'; systemId: string | undefined; taskId?: string; event?: TaskEvent }
  | { kind: 'connector' | 'state' | 'templates'; systemId: string }
  /** Organizations, systems, users or user mappings. */
  | { kind: 'directory' };

/** Something that happened to a task, as its timeline shows it. */
export interface TaskEvent {
  /**
   * `created`; `delivered` by Get task (with a lease until `leaseExpiresAt`, or without one under the duplicate
   * delivery fault); `leaseEnded` early (expired by an operation); `completed` by the connector's result.
   */
  type: 'created' | 'delivered' | 'leaseEnded' | 'completed';
  /** When, on the store's clock (ISO 8601). */
  at: string;
  /** On `delivered`: which delivery it was, from 1. */
  delivery?: number;
  /** On `delivered`: when its lease ends; absent when it was handed out without one. */
  leaseExpiresAt?: string;
  /** On `completed`: the result's status. */
  resultStatus?: string;
}

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
