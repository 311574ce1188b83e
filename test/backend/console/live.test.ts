import { describe, expect, it } from 'vitest';
import { ConsoleLive, HISTORY_APPROVALS } from '../../../src/backend/console/live.js';
import { StoreChanges } from '../../../src/backend/store/changes.js';

/** A console watching a change feed of its own, and a way to write approvals into that feed. */
function watching() {
  const changes = new StoreChanges();
  const live = new ConsoleLive(changes);
  let at = Date.parse('2026-05-01T00:00:00.000Z');
  const write = (approvalId: string) => {
    const lastModified = new Date(at).toISOString();
    at += 1_000;
    changes.publish({
      kind: 'approval',
      systemId: 'S',
      approvalId,
      lastModified,
      applied: true,
      at: new Date(at).toISOString(),
    });
  };
  return { live, write, kept: (approvalId: string) => live.history('S', approvalId).length > 0 };
}

describe("the console's write history", () => {
  it('forgets the approvals written longest ago, in order, however many more it has seen than it keeps', () => {
    const { live, write, kept } = watching();
    const ids = Array.from({ length: HISTORY_APPROVALS * 5 }, (_, n) => `A-${n}`);
    for (const id of ids) write(id);
    expect(ids.filter(kept)).toEqual(ids.slice(-HISTORY_APPROVALS));
    // Written again: now the most recent, so kept while the ones written after it the first time go.
    write('A-4500');
    for (let n = 0; n < HISTORY_APPROVALS - 1; n++) write(`B-${n}`);
    expect(ids.filter(kept)).toEqual(['A-4500']);
    expect(live.history('S', 'A-4500')).toHaveLength(2);
    expect(kept('B-0')).toBe(true);
    // One more forgets the oldest kept: A-4500, written again before every B.
    write('C');
    expect(kept('A-4500')).toBe(false);
    expect(kept('B-0')).toBe(true);
  });
});
