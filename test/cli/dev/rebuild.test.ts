import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { debounce, QUIET_MS } from '../../../src/cli/dev/rebuild.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('debounce', () => {
  it('runs once, when calls have stopped for the quiet time', () => {
    const run = vi.fn();
    const changed = debounce(run, QUIET_MS);
    changed.call();
    vi.advanceTimersByTime(QUIET_MS - 1);
    changed.call();
    vi.advanceTimersByTime(QUIET_MS - 1);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(run).toHaveBeenCalledTimes(1);
    changed.call();
    vi.advanceTimersByTime(QUIET_MS);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('drops a call still waiting when cancelled', () => {
    const run = vi.fn();
    const changed = debounce(run, QUIET_MS);
    changed.call();
    changed.cancel();
    vi.advanceTimersByTime(10 * QUIET_MS);
    expect(run).not.toHaveBeenCalled();
  });
});
