import { describe, expect, it } from 'vitest';
import { type ConnectorStatus, RateWindow, renderStatusLine } from '../../../src/cli/dev/index.js';
import { ValidationError } from '../../../src/errors.js';

const NOW = Date.parse('2026-05-01T10:00:00.000Z');
const wide = { now: NOW, width: 200 };

function status(overrides: Partial<ConnectorStatus> = {}): ConnectorStatus {
  return {
    name: 'my-connector',
    phase: 'running',
    approvals: { synced: 0, perSecond: undefined },
    tasks: { waiting: 0, running: 0, done: 0, failed: 0 },
    ...overrides,
  };
}

describe('renderStatusLine', () => {
  it('shows the phase, the approvals synced and their rate, and the tasks by status', () => {
    const line = renderStatusLine(
      status({
        approvals: { synced: 12_400, perSecond: 310.4 },
        tasks: { waiting: 1, running: 2, done: 1_003, failed: 0 },
      }),
      wide,
    );
    expect(line).toBe(
      'my-connector running · approvals: 12,400 synced, 310/s · tasks: 1 waiting, 2 running, 1,003 done',
    );
  });

  it('gives a slow rate a decimal, and shows no rate while none come', () => {
    expect(renderStatusLine(status({ approvals: { synced: 3, perSecond: 2.25 } }), wide)).toContain(
      'approvals: 3 synced, 2.3/s ·',
    );
    expect(renderStatusLine(status({ approvals: { synced: 3, perSecond: undefined } }), wide)).toContain(
      'approvals: 3 synced ·',
    );
  });

  it('counts the failed tasks among those done, when there are any', () => {
    const line = renderStatusLine(status({ tasks: { waiting: 0, running: 0, done: 4, failed: 1 } }), wide);
    expect(line).toMatch(/tasks: 0 waiting, 0 running, 4 done \(1 failed\)$/);
  });

  it('shows the last error, its first line only, with its age', () => {
    const line = renderStatusLine(
      status({ lastError: { at: NOW - 75_000, message: 'the build failed\nsrc/connector.ts(3,1): …' } }),
      wide,
    );
    expect(line).toMatch(/ · last error 1m ago: the build failed$/);
    expect(renderStatusLine(status({ lastError: { at: NOW - 4_500, message: 'boom' } }), wide)).toMatch(
      /last error 4s ago: boom$/,
    );
    expect(
      renderStatusLine(status({ lastError: { at: NOW - 2 * 3_600_000, message: 'boom' } }), wide),
    ).toMatch(/last error 2h ago: boom$/);
  });

  it('says how a worker that stopped ended, and that the loop waits for a change', () => {
    expect(renderStatusLine(status({ phase: 'stopped', exit: 2 }), wide)).toMatch(
      /^my-connector stopped \(exit code 2\), waiting for a change · /,
    );
    expect(renderStatusLine(status({ phase: 'stopped', exit: 'SIGKILL' }), wide)).toMatch(
      /^my-connector stopped \(SIGKILL\), waiting for a change · /,
    );
    expect(renderStatusLine(status({ phase: 'stopped' }), wide)).toMatch(
      /^my-connector not running, waiting for a change · /,
    );
    expect(renderStatusLine(status({ phase: 'building' }), wide)).toMatch(/^my-connector building · /);
  });

  it('is cut to the width it is given, so that a terminal never wraps it', () => {
    const line = renderStatusLine(status({ lastError: { at: NOW, message: 'x'.repeat(300) } }), {
      now: NOW,
      width: 60,
    });
    expect([...line]).toHaveLength(60);
    expect(line.endsWith('…')).toBe(true);
    expect(line.startsWith('my-connector running · approvals: 0 synced')).toBe(true);
  });
});

describe('RateWindow', () => {
  function clocked(windowMs?: number) {
    let now = NOW;
    const window = new RateWindow({ now: () => now, ...(windowMs === undefined ? {} : { windowMs }) });
    return { window, advance: (ms: number) => (now += ms) };
  }

  it('has no rate before anything comes, and counts everything', () => {
    const { window } = clocked();
    expect(window.perSecond()).toBeUndefined();
    expect(window.total).toBe(0);
    window.add(3);
    window.add();
    expect(window.total).toBe(4);
  });

  it('divides what came within the window by the window once it has been coming that long', () => {
    const { window, advance } = clocked(5_000);
    window.add(100);
    for (let second = 1; second < 10; second += 1) {
      advance(1_000);
      window.add(100);
    }
    // The last five seconds, (4 s, 9 s], held five additions of 100.
    expect(window.perSecond()).toBe(100);
    advance(1_000);
    expect(window.perSecond()).toBe(80);
  });

  it('divides a burst by the time it has been coming, at least a second', () => {
    const { window, advance } = clocked(5_000);
    window.add(50);
    advance(200);
    window.add(50);
    expect(window.perSecond()).toBe(100);
    advance(1_800);
    expect(window.perSecond()).toBe(50);
  });

  it('forgets what came before the window, and has no rate once nothing came within it', () => {
    const { window, advance } = clocked(5_000);
    window.add(10);
    advance(5_000);
    expect(window.perSecond()).toBeUndefined();
    expect(window.total).toBe(10);
    window.add(4);
    expect(window.perSecond()).toBe(4);
  });

  it('refuses a window under a second', () => {
    expect(() => new RateWindow({ windowMs: 10 })).toThrow(ValidationError);
    expect(() => new RateWindow({ windowMs: 10 })).toThrow(
      'Expected `windowMs` to be an integer from 1000 and up, got `10` (number)',
    );
  });
});
