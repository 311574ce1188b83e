/**
 * Seeded randomness for the soak: the same seed gives the same source, the same fault sequence and the same plan,
 * so a failing run can be repeated.
 * @module
 */

export { seededRandom } from '../../src/internal/random.js';

/** A 32-bit hash of a seed and some parts; the same input always gives the same number. */
export function hash32(seed: number, ...parts: readonly (number | string)[]): number {
  let hash = mix((seed ^ 0x9e3779b9) >>> 0);
  for (const part of parts) {
    const text = String(part);
    for (let index = 0; index < text.length; index += 1) {
      hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193) >>> 0;
    }
    // Mixing after each part keeps ('ab', 'c') apart from ('a', 'bc').
    hash = mix(hash ^ 0x2c);
  }
  return hash;
}

/** {@link hash32} as a number in [0, 1). */
export function unit(seed: number, ...parts: readonly (number | string)[]): number {
  return hash32(seed, ...parts) / 2 ** 32;
}

/** One of `items`, picked by `random`. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError('pick() needs at least one item');
  return item;
}

// The finalizer of murmur3: spreads every input bit over the whole word.
function mix(value: number): number {
  let hash = value;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
