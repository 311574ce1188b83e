import { afterEach, beforeEach } from 'vitest';

// A promise that rejects with no one to handle it is work the kit started and lost (a queued job, a timer's
// callback): any such rejection during a test fails that test, wherever it came from.
// Taken before any test fakes the timers: the check below must wait for a real turn of the event loop.
const realSetImmediate = setImmediate;
let rejections: unknown[] = [];

process.on('unhandledRejection', (reason) => {
  rejections.push(reason);
});

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
