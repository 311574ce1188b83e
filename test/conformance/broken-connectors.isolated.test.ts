import { describe, it } from 'vitest';
import { expectCaught, PUSH_CASES, SEEDS, SYNC_CASES, TASK_CASES } from './support/broken.js';

describe.each(SEEDS)(
  'under seed %i, a connector correct but for one bug fails the check named for it',
  (seed) => {
    it.each(
      [...SYNC_CASES, ...PUSH_CASES, ...TASK_CASES].map((entry) => [entry.bug, entry.check, entry] as const),
    )('%s fails %s', (_bug, _check, entry) => expectCaught(entry, seed), 60_000);
  },
);
