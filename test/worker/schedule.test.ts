import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../../src/errors.js';
import { parseOptions } from '../../src/internal/options.js';
import { runOnSchedule, type ScheduledJob, scheduleSchema } from '../../src/worker/sync/schedule.js';

const T0 = Date.UTC(2026, 4, 1, 10, 0, 30);

/** A tick that records when each run starts, and finishes only when the test says so. */
function controlledTick() {
  const starts: string[] = [];
  const finishes: (() => void)[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const tick = async () => {
    starts.push(new Date().toISOString());
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    await new Promise<void>((resolve) => finishes.push(resolve));
    running -= 1;
  };
  return {
    tick,
    starts,
    get mostAtOnce() {
      return mostAtOnce;
    },
    /** Lets the oldest unfinished run end. */
    finish() {
      finishes.shift()?.();
    },
    /** A tick that lets the oldest unfinished run (itself, when none other runs) end at once. */
    async instant() {
      const run = tick();
      this.finish();
      await run;
    },
  };
}

let jobs: ScheduledJob[] = [];
const schedule = (...args: Parameters<typeof runOnSchedule>) => {
  const job = runOnSchedule(...args);
  jobs.push(job);
  return job;
};

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  for (const job of jobs) job.stop();
  jobs = [];
  vi.useRealTimers();
});

const at = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();

describe('an interval schedule', () => {
  it('runs one interval after the end of the previous run, never overlapping a slow run', async () => {
    const runs = controlledTick();
    schedule(1_000, runs.tick);

    await vi.advanceTimersByTimeAsync(999);
    expect(runs.starts).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs.starts).toEqual([at(1_000)]);

    // The run takes five seconds: no other run starts meanwhile.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs.starts).toEqual([at(1_000)]);
    runs.finish();

    // The next run comes one interval after that end, not on the original beat.
    await vi.advanceTimersByTimeAsync(999);
    expect(runs.starts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs.starts).toEqual([at(1_000), at(7_000)]);
    runs.finish();

    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs.starts).toEqual([at(1_000), at(7_000), at(8_000)]);
    expect(runs.mostAtOnce).toBe(1);
  });

  it('runs no more once stopped, even when stopped during a run', async () => {
    const runs = controlledTick();
    const job = schedule(1_000, runs.tick);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs.starts).toHaveLength(1);
    job.stop();
    runs.finish();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs.starts).toHaveLength(1);

    const idle = controlledTick();
    schedule(1_000, idle.tick).stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(idle.starts).toEqual([]);
  });

  it('keeps its beat when a run fails', async () => {
    let calls = 0;
    schedule(1_000, async () => {
      calls += 1;
      throw new Error('run failed');
    });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(calls).toBe(3);
  });
});

describe('a cron schedule', () => {
  it('ticks at each matching minute, in UTC', async () => {
    const runs = controlledTick();
    schedule('*/1 * * * *', () => runs.instant());
    await vi.advanceTimersByTimeAsync(29_999);
    expect(runs.starts).toEqual([]);
    await vi.advanceTimersByTimeAsync(3 * 60_000);
    expect(runs.starts).toEqual([
      '2026-05-01T10:01:00.000Z',
      '2026-05-01T10:02:00.000Z',
      '2026-05-01T10:03:00.000Z',
    ]);
  });

  it('ticks on the hour for 0 * * * *', async () => {
    const runs = controlledTick();
    schedule('0 * * * *', () => runs.instant());
    await vi.advanceTimersByTimeAsync(2 * 3_600_000);
    expect(runs.starts).toEqual(['2026-05-01T11:00:00.000Z', '2026-05-01T12:00:00.000Z']);
  });

  it('skips the ticks that come while a run is in progress', async () => {
    const runs = controlledTick();
    schedule('* * * * *', runs.tick);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(runs.starts).toEqual(['2026-05-01T10:01:00.000Z']);
    // The run lasts past 10:02 and 10:03: those ticks are skipped, not queued.
    await vi.advanceTimersByTimeAsync(150_000);
    expect(runs.starts).toHaveLength(1);
    runs.finish();
    await vi.advanceTimersByTimeAsync(29_999);
    expect(runs.starts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs.starts).toEqual(['2026-05-01T10:01:00.000Z', '2026-05-01T10:04:00.000Z']);
    expect(runs.mostAtOnce).toBe(1);
  });

  it('ticks no more once stopped', async () => {
    const runs = controlledTick();
    const job = schedule('* * * * *', () => runs.instant());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(runs.starts).toHaveLength(1);
    job.stop();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(runs.starts).toHaveLength(1);
  });

  it('keeps ticking, silently, when a run fails', async () => {
    let calls = 0;
    schedule('* * * * *', async () => {
      calls += 1;
      throw new Error('run failed');
    });
    await vi.advanceTimersByTimeAsync(30_000 + 2 * 60_000);
    expect(calls).toBe(3);
  });
});

describe('scheduleSchema', () => {
  const problem = (value: unknown) => {
    try {
      parseOptions(z.strictObject({ schedule: scheduleSchema }), { schedule: value }, 'options');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).issues.map((issue) => issue.message).join('; ');
    }
    return undefined;
  };

  it.each([
    [0, '`0` (number)'],
    [-1_000, '`-1000` (number)'],
    [1.5, '`1.5` (number)'],
    [Number.NaN, '`NaN` (number)'],
    [Number.POSITIVE_INFINITY, '`Infinity` (number)'],
  ])('rejects the interval %s', (value, shown) => {
    expect(problem(value)).toBe(
      `Expected \`schedule\` to be a cron expression or a number of milliseconds from 1 and up, got ${shown}`,
    );
  });

  it.each(['not cron', '61 * * * *', '* * 32 * *', '', '* * * *'])(
    'rejects the cron expression %j',
    (value) => {
      const message = problem(value);
      expect(message).toMatch(/^Expected `schedule` to be a valid cron expression \(.+\), got /);
      expect(message?.endsWith(`, got \`${JSON.stringify(value)}\` (string)`)).toBe(true);
    },
  );

  it.each([1, 60_000, '*/1 * * * *', '0 * * * *', '17 * * * *', '0 6 * * 1-5', '*/30 * * * * *'])(
    'accepts %j',
    (value) => {
      expect(problem(value)).toBeUndefined();
    },
  );
});
