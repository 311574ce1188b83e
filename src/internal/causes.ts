// Enough for any real chain of wrappers; the bound also stops a pathological one (a getter making new causes).
const MAX_LINKS = 16;

/**
 * An error and what caused it, breadth first: each value's `cause`, and the `errors` of an `AggregateError`. Only
 * objects are yielded, each once (a cycle ends the walk), at most 16. Reading a property that throws counts as
 * reading nothing: the walk itself never throws.
 */
export function* causeChain(error: unknown): Generator<object> {
  const queue: unknown[] = [error];
  const seen = new Set<object>();
  while (queue.length > 0 && seen.size < MAX_LINKS) {
    const link = queue.shift();
    if (typeof link !== 'object' || link === null || seen.has(link)) continue;
    seen.add(link);
    yield link;
    queue.push(property(link, 'cause'));
    const errors = property(link, 'errors');
    if (link instanceof AggregateError && Array.isArray(errors)) queue.push(...errors);
  }
}

/** A property of an arbitrary thrown object, or `undefined` when its getter throws. */
export function property(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}
