/** The smallest, middle and largest of a set of measurements. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function median(values: readonly number[]): number {
  return spread(values).median;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('no measurements');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return {
    min: sorted[0]!,
    median: sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2,
    max: sorted.at(-1)!,
  };
}

/** The value below which `fraction` of the values lie (nearest rank): `percentile(values, 0.99)` is the p99. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) throw new Error('no measurements');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}
