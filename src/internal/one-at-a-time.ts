/**
 * Runs tasks one at a time, in the order they are given: each starts once every earlier one has settled, whether it
 * succeeded or failed. The kit's one lock (key ring loads and rotations, sync runs, state writes).
 */
export class OneAtATime {
  /** Settles when the last task given settles; never rejects. */
  #last: Promise<unknown> = Promise.resolve();

  /** Runs `task` after every task given before it, and settles as it does. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#last.then(task);
    this.#last = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every task given so far has settled, either way. Never rejects. */
  async idle(): Promise<void> {
    await this.#last;
  }
}
