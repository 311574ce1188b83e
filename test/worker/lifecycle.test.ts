import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkMove,
  LIFECYCLE_MOVES,
  LifecycleError,
  type LifecycleState,
} from '../../src/worker/core/lifecycle.js';

const states = Object.keys(LIFECYCLE_MOVES) as LifecycleState[];

describe('the moves of a worker’s state', () => {
  it('names every state once, as the type does', () => {
    expect(states).toEqual(['idle', 'starting', 'running', 'failed', 'stopping', 'stopped']);
  });

  it.each(
    states.flatMap((from) => states.map((to) => [from, to, LIFECYCLE_MOVES[from].includes(to)] as const)),
  )('%s to %s is allowed: %s', (from, to, allowed) => {
    if (allowed) {
      expect(() => checkMove(from, to)).not.toThrow();
      return;
    }
    const refused = (() => {
      try {
        checkMove(from, to);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(LifecycleError);
    expect(refused).toMatchObject({
      code: 'lifecycle',
      message: `Cannot move to ${to} a connector that is ${from}`,
    });
  });

  it('ends in stopped, from every state, and leaves it never', () => {
    const reaches = (from: LifecycleState, seen = new Set<LifecycleState>()): Set<LifecycleState> => {
      for (const to of LIFECYCLE_MOVES[from]) {
        if (seen.has(to)) continue;
        seen.add(to);
        reaches(to, seen);
      }
      return seen;
    };
    for (const state of states.filter((one) => one !== 'stopped')) {
      expect(reaches(state).has('stopped'), state).toBe(true);
    }
    expect(LIFECYCLE_MOVES.stopped).toEqual([]);
  });

  it('changes in one place of the worker: #transition, which checks the move', () => {
    const source = readFileSync(new URL('../../src/worker/core/worker.ts', import.meta.url), 'utf8');
    const assignments = [...source.matchAll(/this\.#lifecycle\s*=(?!=)/g)];
    expect(assignments).toHaveLength(1);
    const transition = source.slice(source.indexOf('  #transition(to: LifecycleState): void {'));
    expect(transition.indexOf('checkMove(from, to);')).toBeGreaterThan(0);
    expect(transition.indexOf('checkMove(from, to);')).toBeLessThan(
      transition.indexOf('this.#lifecycle = to;'),
    );
    expect(source.indexOf('this.#lifecycle = to;')).toBe(assignments[0]!.index);
  });
});
