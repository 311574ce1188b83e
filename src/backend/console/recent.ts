/**
 * Lists kept per key for the keys written most recently: the newest `perKey` entries of each of the newest `keys`
 * keys. Writing to a key makes it the newest; the key written longest ago is forgotten first.
 */
export class RecentLists<T> {
  readonly #lists = new Map<string, T[]>();
  /**
   * Walks {@link #lists} from its first key as keys are forgotten. One iterator kept for good: a Map's iterator is
   * live, and every key before this one's place has been deleted (forgotten, or moved to the end when written
   * again), so it always stands just before the first key left. A new iterator per write would step over every key
   * deleted since the Map last compacted its table, thousands of them on a busy backend.
   */
  #oldest: Iterator<string> | undefined;

  constructor(
    readonly perKey: number,
    readonly keys: number,
  ) {}

  /** The key's entries, oldest first. */
  get(key: string): T[] {
    return [...(this.#lists.get(key) ?? [])];
  }

  push(key: string, entry: T): void {
    const list = this.#lists.get(key) ?? [];
    // Re-inserted, so the map's first key is the one written longest ago: the one to forget first.
    this.#lists.delete(key);
    this.#lists.set(key, list);
    list.push(entry);
    if (list.length > this.perKey) list.shift();
    if (this.#lists.size > this.keys) {
      this.#oldest ??= this.#lists.keys();
      this.#lists.delete(this.#oldest.next().value as string);
    }
  }
}
