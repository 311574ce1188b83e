import { describe, it } from 'vitest';
import { DEADLINE_CASES, expectCaught, SEEDS } from './support/broken.js';

// Apart from the other broken connectors: each waits out the battery's two seconds after a deadline, so this file
// runs beside them.
describe.each(SEEDS)('under seed %i, a handler that ignores its signal fails tasks.deadline', (seed) => {
  it.each(DEADLINE_CASES.map((entry) => [entry.bug, entry] as const))(
    '%s',
    (_bug, entry) => expectCaught(entry, seed),
    60_000,
  );
});
