import { afterAll, vi } from 'vitest';

// The files of the shared-modules project (vitest.config.ts) run one after another in a worker that keeps its
// modules: what a file may have left changed in it is put back after the file, so that the next one starts as it
// would in a worker of its own. Each file still cleans up after its own tests; this is the net below them.
afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});
