import { describe, expect, it } from 'vitest';
import { OneAtATime } from '../../src/internal/one-at-a-time.js';

/** A promise with its resolve and reject at hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('OneAtATime', () => {
  it('starts each task only once the one before it has settled, in the order given', async () => {
    const lock = new OneAtATime();
    const events: string[] = [];
    const first = deferred();
    const a = lock.run(async () => {
      events.push('a starts');
      await first.promise;
      events.push('a ends');
      return 'a';
    });
    const b = lock.run(async () => {
      events.push('b starts');
      return 'b';
    });
    await Promise.resolve();
    expect(events).toEqual(['a starts']);
    first.resolve();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(events).toEqual(['a starts', 'a ends', 'b starts']);
  });

  it('goes on after a task fails, and rejects only that task', async () => {
    const lock = new OneAtATime();
    const failed = lock.run(() => Promise.reject(new Error('first failed')));
    const thrown = lock.run(() => {
      throw new Error('thrown before a promise');
    });
    const next = lock.run(async () => 'next ran');
    await expect(failed).rejects.toThrow('first failed');
    await expect(thrown).rejects.toThrow('thrown before a promise');
    await expect(next).resolves.toBe('next ran');
  });

  it('is idle once every task given so far has settled, and idle() never rejects', async () => {
    const lock = new OneAtATime();
    const gate = deferred();
    let settled = false;
    lock.run(() => gate.promise).catch(() => {});
    const idle = lock.idle().then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    gate.reject(new Error('failed'));
    await idle;
    expect(settled).toBe(true);
  });
});
