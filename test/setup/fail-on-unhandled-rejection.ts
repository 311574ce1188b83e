import { afterEach, beforeEach } from 'vitest';

// A promise that rejects with no one to handle it is work the kit started and lost (a queued job, a timer's
// callback): any such rejection during a test fails that test, wherever it came from.
// Taken before any test fakes the timers: the check below must wait for a real turn of the event loop.
const realSetImmediate = setImmediate;
let rejections: unknown[] = [];

// A worker that runs several files (vitest.config.ts's shared-modules project) runs this file again for each: one
// listener for the process, which reports to the copy of this file that runs now.
const LISTENER = Symbol.for('approval-connector-kit.tests.unhandledRejection');
const current = globalThis as { [LISTENER]?: { report: (reason: unknown) => void } };
if (current[LISTENER] === undefined) {
  const listener = { report: (_reason: unknown) => {} };
  current[LISTENER] = listener;
  process.on('unhandledRejection', (reason) => listener.report(reason));
}
current[LISTENER].report = (reason) => {
  rejections.push(reason);
};

beforeEach(() => {
  rejections = [];
});

afterEach(async () => {
  // Node reports a rejection as unhandled once the microtasks after it have run: let them.
  await new Promise((resolve) => realSetImmediate(resolve));
  if (rejections.length === 0) return;
  const seen = rejections;
  rejections = [];
  throw new Error(`Unhandled rejection during the test:\n${seen.map(describe).join('\n')}`);
});

function describe(reason: unknown): string {
  return reason instanceof Error ? (reason.stack ?? `${reason.name}: ${reason.message}`) : String(reason);
}
