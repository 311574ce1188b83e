import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Backoff, backoffDelay } from '../../src/internal/backoff.js';

const backoff = (overrides: Partial<Backoff> = {}): Backoff => ({
  baseMs: 100,
  maxMs: 1000,
  jitter: 'full',
  random: () => 0.5,
  ...overrides,
});

const arbitraries = [
  fc.integer({ min: 0, max: 2000 }),
  fc.integer({ min: 0, max: 10_000 }),
  fc.integer({ min: 0, max: 100_000 }),
  fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
] as const;

describe('backoffDelay', () => {
  it('with full jitter, is a whole number uniform in [0, min(maxMs, baseMs * 2^waited)]', () => {
    fc.assert(
      fc.property(...arbitraries, (waited, baseMs, maxMs, random) => {
        const delay = backoffDelay(waited, backoff({ baseMs, maxMs, random: () => random }));
        const ceiling = Math.min(maxMs, baseMs * 2 ** waited) || 0;
        return Number.isInteger(delay) && delay >= 0 && delay <= ceiling;
      }),
    );
    // As the clients wait before retry 3 (two waits before it): the whole range, ends included.
    expect(backoffDelay(2, backoff({ random: () => 0 }))).toBe(0);
    expect(backoffDelay(2, backoff({ random: () => 0.999999 }))).toBe(400);
    expect(backoffDelay(9, backoff({ random: () => 0.999999 }))).toBe(1000);
  });

  it('with equal jitter, is a whole number in [ceiling / 2, ceiling], so that waits keep growing', () => {
    fc.assert(
      fc.property(...arbitraries, (waited, baseMs, maxMs, random) => {
        const delay = backoffDelay(waited, backoff({ baseMs, maxMs, jitter: 'equal', random: () => random }));
        const ceiling = Math.min(maxMs, baseMs * 2 ** waited) || 0;
        return Number.isInteger(delay) && delay >= Math.floor(ceiling / 2) && delay <= ceiling;
      }),
    );
    // As the poller waits after empty polls from idleMinMs 5: half of 5, 10, 20, 40 without jitter.
    const equal = backoff({ baseMs: 5, jitter: 'equal', random: () => 0 });
    expect([0, 1, 2, 3].map((waited) => backoffDelay(waited, equal))).toEqual([3, 5, 10, 20]);
  });

  it('stays at its largest ceiling however many waits came before, never Infinity or NaN', () => {
    expect(backoffDelay(5_000, backoff({ random: () => 0.999999 }))).toBe(1000);
    expect(backoffDelay(5_000, backoff({ baseMs: 0, random: () => 0.999999 }))).toBe(0);
    expect(backoffDelay(5_000, backoff({ jitter: 'equal', random: () => 0 }))).toBe(500);
  });
});
