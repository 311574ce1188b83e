/**
 * A small seeded generator of numbers in [0, 1) (mulberry32): reproducible choices from a printed seed, for the
 * conformance battery and the kit's own soak tests. Not for anything secret.
 * @module
 */

/** A stream of numbers in [0, 1) from `seed`. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 2 ** 32;
  };
}
