import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIFECYCLE_MOVES } from '../../src/worker/core/lifecycle.js';

const doc = readFileSync(new URL('../../docs/worker.md', import.meta.url), 'utf8');
const from = doc.indexOf('\n## Lifecycle\n');
const next = doc.indexOf('\n## ', from + 1);
const section = doc.slice(from, next === -1 ? undefined : next);

/** The table of docs/worker.md's lifecycle section: each state and the states it moves to. */
function documentedMoves(): Record<string, string[]> {
  const rows = [...section.matchAll(/^\| `([a-z]+)` +\| ([^|]+)\|/gm)];
  return Object.fromEntries(
    rows.map(([, state, moves]) => [
      state,
      moves!.trim() === 'none' ? [] : moves!.split(',').map((move) => move.trim().replaceAll('`', '')),
    ]),
  );
}

describe('docs/worker.md, lifecycle', () => {
  it('has the section', () => {
    expect(section.startsWith('\n## Lifecycle\n')).toBe(true);
  });

  it('shows the moves of LIFECYCLE_MOVES, every state in its order, and no other', () => {
    const documented = documentedMoves();
    expect(Object.keys(documented)).toEqual(Object.keys(LIFECYCLE_MOVES));
    expect(documented).toEqual(LIFECYCLE_MOVES);
  });
});
