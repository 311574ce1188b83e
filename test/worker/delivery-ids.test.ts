import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeliveryIds } from '../../src/worker/push/delivery-ids.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the delivery ids of the push ingress', () => {
  it('tells a delivery seen within the window, and forgets it after', () => {
    const ids = new DeliveryIds({ windowMs: 60_000, limit: 100 });
    expect(ids.seenBefore('D-1')).toBe(false);
    vi.advanceTimersByTime(59_999);
    expect(ids.seenBefore('D-1')).toBe(true);
    vi.advanceTimersByTime(1);
    expect(ids.seenBefore('D-1')).toBe(false);
  });

  it('holds at most its limit, forgetting the oldest first', () => {
    const ids = new DeliveryIds({ windowMs: 60_000, limit: 2 });
    for (const id of ['D-1', 'D-2', 'D-3']) ids.seenBefore(id);
    expect(ids.seenBefore('D-3')).toBe(true);
    expect(ids.seenBefore('D-2')).toBe(true);
    expect(ids.seenBefore('D-1')).toBe(false);
  });
});
