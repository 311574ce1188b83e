import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Task } from '../../../src/api/index.js';
import { type LeasedTask, ServerError } from '../../../src/client/index.js';
import { connectorOptionsSchema } from '../../../src/worker/core/connector-options.js';
import { type ConnectorMetrics, createLogger } from '../../../src/worker/index.js';
import { Leasing, type LeasingSettings } from '../../../src/worker/tasks/leasing.js';
import { deferred, gaps, T0, taskNumbered } from './support/poller.js';

interface Setup {
  getTask?: (options: { signal?: AbortSignal }) => Promise<Task | null>;
  /** Answers in place of `getTask`. */
  leaseTask?: ((options: { signal?: AbortSignal }) => Promise<LeasedTask | null>) | undefined;
  /** A leased task's run, in its slot; each task's approval id is recorded in `handled` first. */
  handler?: (task: Task) => Promise<void>;
  /** The results held outside the slots, as the reporter would count them. */
  backlog?: () => number;
  metrics?: ConnectorMetrics;
  random?: () => number;
  settings?: Partial<LeasingSettings>;
  onHealthChanged?: () => void;
}

let started: Leasing[] = [];
let logLines: { level: number; msg: string }[] = [];

/** Leasing on its own: no poller, no reporter, a client that only leases. */
function startLeasing(setup: Setup) {
  const polls: number[] = [];
  const handled: string[] = [];
  const leasing = new Leasing(
    {
      client: {
        leaseTask: async (options: { signal?: AbortSignal }): Promise<LeasedTask | null> => {
          polls.push(Date.now());
          if (setup.leaseTask) return setup.leaseTask(options);
          const task = await (setup.getTask ?? (async () => null))(options);
          return task === null ? null : { valid: true, task };
        },
      },
      logger: createLogger({
        level: 'info',
        destination: { write: (line: string) => void logLines.push(JSON.parse(line)) },
      }),
      metrics: setup.metrics,
      random: setup.random ?? (() => 0),
      run: async (leased) => {
        if (!leased.valid) throw new Error('a task that breaks the contract');
        handled.push((leased.task.data.approval as { id: string }).id);
        await setup.handler?.(leased.task);
      },
      backlog: setup.backlog ?? (() => 0),
      onHealthChanged: setup.onHealthChanged,
    },
    { concurrency: 2, idleMinMs: 100, idleMaxMs: 1_000, watchdogMs: 3_600_000, ...setup.settings },
  );
  started.push(leasing);
  leasing.start();
  return { leasing, polls, handled };
}

const warnings = () => logLines.filter((line) => line.level >= 40).map((line) => line.msg);

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  logLines = [];
});
afterEach(async () => {
  for (const leasing of started) leasing.stop();
  await vi.advanceTimersByTimeAsync(10);
  started = [];
  vi.useRealTimers();
});

describe('idle backoff', () => {
  it('waits longer after each empty poll, up to idleMaxMs, and polls at once again after a task', async () => {
    const answers: (Task | null)[] = [null, null, null, null, null, null, null, taskNumbered(1), null, null];
    const { polls, handled } = startLeasing({ getTask: async () => answers.shift() ?? null });
    await vi.advanceTimersByTimeAsync(2_000);
    // Both slots free: two requests at once, whose empty answers count once. Then one at a time; with no jitter
    // (random 0) each wait is half its ceiling: the ceiling doubles from 100 ms up to 1000 ms. The task's run ends
    // at once, so both slots are free again: two requests at once, and the shortest wait after their empty answers.
    expect(gaps(polls).slice(0, 10)).toEqual([0, 50, 100, 200, 400, 500, 500, 0, 0, 50]);
    expect(handled).toEqual(['PO-1']);
  });

  it('draws each wait up to its ceiling with jitter', async () => {
    const { polls } = startLeasing({ getTask: async () => null, random: () => 0.999 });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(gaps(polls)).toEqual([0, 100, 200, 400, 800, 1_000]);
  });

  it('backs off the same way when polling fails, and says so in its logs', async () => {
    const { polls } = startLeasing({
      getTask: async () => {
        throw new ServerError({ method: 'GET', path: '/v2/connector/tasks' }, 503, undefined);
      },
    });
    await vi.advanceTimersByTimeAsync(800);
    expect(gaps(polls)).toEqual([0, 50, 100, 200, 400]);
    expect(warnings()).toContain('polling for tasks failed; retrying');
  });
});

describe('concurrency', () => {
  it('runs at most `concurrency` tasks at once and leases none while every slot is busy', async () => {
    let next = 0;
    const gates: ReturnType<typeof deferred<void>>[] = [];
    let running = 0;
    let mostRunning = 0;
    const { polls, handled } = startLeasing({
      settings: { concurrency: 2 },
      getTask: async () => taskNumbered(next++),
      handler: async () => {
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
        running -= 1;
      },
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(polls).toHaveLength(2);
    expect(handled).toEqual(['PO-0', 'PO-1']);
    expect(running).toBe(2);

    // One slot frees up: exactly one more task is leased.
    gates.shift()?.resolve();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(polls).toHaveLength(3);
    expect(handled).toEqual(['PO-0', 'PO-1', 'PO-2']);
    expect(mostRunning).toBe(2);

    for (const gate of gates.splice(0)) gate.resolve();
  });
});

describe('lease depth', () => {
  /** A service whose Get task answers only when the test says, counting the requests in flight. */
  function heldService() {
    const answers: ReturnType<typeof deferred<Task | null>>[] = [];
    const counts = { leasing: 0, running: 0, mostHeld: 0 };
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const hold = () => {
      counts.mostHeld = Math.max(counts.mostHeld, counts.leasing + counts.running);
    };
    return {
      answers,
      counts,
      gates,
      getTask: async () => {
        const answer = deferred<Task | null>();
        answers.push(answer);
        counts.leasing += 1;
        hold();
        try {
          return await answer.promise;
        } finally {
          counts.leasing -= 1;
        }
      },
      handler: async () => {
        counts.running += 1;
        hold();
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
        counts.running -= 1;
      },
    };
  }

  it('keeps a lease request in flight for every free slot, not one at a time', async () => {
    const service = heldService();
    const { polls, handled } = startLeasing({
      settings: { concurrency: 4 },
      getTask: service.getTask,
      handler: service.handler,
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(service.counts.leasing).toBe(4);

    // A task takes the slot its request held: no request is sent for it while the task runs.
    service.answers[0]?.resolve(taskNumbered(1));
    service.answers[1]?.resolve(taskNumbered(2));
    await vi.advanceTimersByTimeAsync(0);
    expect(handled).toEqual(['PO-1', 'PO-2']);
    expect(service.counts).toMatchObject({ leasing: 2, running: 2 });
    expect(polls).toHaveLength(4);

    // A task that ends frees its slot, and a request takes it at once.
    service.gates[0]?.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(service.counts).toMatchObject({ leasing: 3, running: 1 });
    expect(polls).toHaveLength(5);
    expect(service.counts.mostHeld).toBe(4);

    for (const answer of service.answers) answer.resolve(null);
    for (const gate of service.gates) gate.resolve();
  });

  it('never leases a task without a free slot, whatever the service answers', async () => {
    const service = heldService();
    let next = 0;
    startLeasing({ settings: { concurrency: 3 }, getTask: service.getTask, handler: service.handler });
    // Every request answered with a task, and every other task ended, in rounds: slots free and fill in turn.
    for (let round = 0; round < 20; round += 1) {
      await vi.advanceTimersByTimeAsync(0);
      for (const answer of service.answers.splice(0)) answer.resolve(taskNumbered(next++));
      await vi.advanceTimersByTimeAsync(0);
      if (round % 2 === 1) for (const gate of service.gates.splice(0)) gate.resolve();
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(next).toBeGreaterThan(20);
    expect(service.counts.mostHeld).toBe(3);
    for (const answer of service.answers) answer.resolve(null);
    for (const gate of service.gates) gate.resolve();
  });
});

describe('idle schedule', () => {
  it('sends one request at a time while the service has nothing, however many slots are free', async () => {
    let leasing = 0;
    let mostLeasing = 0;
    const { polls } = startLeasing({
      settings: { concurrency: 8 },
      random: () => 0.999,
      getTask: async () => {
        leasing += 1;
        await Promise.resolve();
        leasing -= 1;
        return null;
      },
      leaseTask: undefined,
    });
    await vi.advanceTimersByTimeAsync(0);
    // At the start every slot is free: a request each, whose empty answers count as one.
    expect(polls).toHaveLength(8);
    const atStart = polls.length;
    const probe = setInterval(() => {
      mostLeasing = Math.max(mostLeasing, leasing);
    }, 1);
    await vi.advanceTimersByTimeAsync(4_000);
    clearInterval(probe);
    expect(gaps(polls.slice(atStart - 1))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(mostLeasing).toBeLessThanOrEqual(1);
  });

  it('fills every free slot again as soon as a task comes while idle', async () => {
    let quiet = true;
    let next = 0;
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const { polls, handled } = startLeasing({
      settings: { concurrency: 4 },
      getTask: async () => (quiet ? null : taskNumbered(next++)),
      handler: async () => {
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
      },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    const idlePolls = polls.length;
    quiet = false;
    await vi.advanceTimersByTimeAsync(1_000);
    // The idle request that found the task, and at once one for each of the three other slots.
    expect(polls.slice(idlePolls)).toHaveLength(4);
    expect(new Set(polls.slice(idlePolls)).size).toBe(1);
    expect(handled).toEqual(['PO-0', 'PO-1', 'PO-2', 'PO-3']);
    for (const gate of gates) gate.resolve();
  });

  it('with the default idle schedule, leases a task within 1.4 s of its creation, at no more than a request a second', async () => {
    const defaults = connectorOptionsSchema.shape.poller.parse({});
    const { idleMinMs, idleMaxMs } = defaults;
    // The worst case: every wait at its ceiling, and the task created just after a poll found nothing.
    let createNext = false;
    let created: number | undefined;
    let leasedAt: number | undefined;
    const slowest = startLeasing({
      settings: { concurrency: 8, idleMinMs, idleMaxMs },
      random: () => 0.999_999,
      getTask: async () => {
        if (created !== undefined && leasedAt === undefined) {
          leasedAt = Date.now();
          return taskNumbered(1);
        }
        if (leasedAt !== undefined) return null;
        if (createNext) created = Date.now();
        return null;
      },
    });
    await vi.advanceTimersByTimeAsync(60_000);
    createNext = true;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(slowest.handled).toEqual(['PO-1']);
    expect((leasedAt as number) - (created as number)).toBe(idleMaxMs);
    expect(idleMaxMs).toBeLessThanOrEqual(1_400);

    // The rate: waits drawn evenly over their range, as Math.random draws them, over ten idle minutes.
    let draw = 0;
    const even = startLeasing({
      settings: { concurrency: 8, idleMinMs, idleMaxMs },
      random: () => ((draw++ % 10) + 0.5) / 10,
      getTask: async () => null,
    });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(even.polls.length / 600).toBeLessThanOrEqual(1);
  });
});

describe('watchdog', () => {
  it('restarts a poll that hangs, and reports unhealthy until a poll succeeds again', async () => {
    const second = deferred<Task | null>();
    const answers = [
      // Never settles, and ignores its abort signal.
      () => new Promise<Task | null>(() => {}),
      () => second.promise,
    ];
    const health: boolean[] = [];
    const { leasing, polls } = startLeasing({
      settings: { concurrency: 1, watchdogMs: 1_000 },
      getTask: async () => (answers.shift() ?? (async () => null))(),
      onHealthChanged: () => health.push(leasing.healthy),
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(polls).toHaveLength(1);
    expect(leasing.healthy).toBe(true);

    // The watchdog checks every 500 ms; past 1000 ms without a poll it restarts it.
    await vi.advanceTimersByTimeAsync(500);
    expect(polls).toHaveLength(2);
    expect(leasing.healthy).toBe(false);
    expect(warnings()).toContain('the task poller stopped polling; restarting the poll');

    second.resolve(null);
    await vi.advanceTimersByTimeAsync(0);
    expect(leasing.healthy).toBe(true);
    // Told of each change, once: the worker's ready gauge follows.
    await vi.advanceTimersByTimeAsync(2_000);
    expect(health).toEqual([false, true]);
  });

  it('does not count leasing that waits for a free slot as stalled', async () => {
    let next = 0;
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const { leasing } = startLeasing({
      settings: { concurrency: 1, watchdogMs: 1_000 },
      getTask: async () => taskNumbered(next++),
      handler: async () => {
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
      },
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(leasing.healthy).toBe(true);
    for (const gate of gates.splice(0)) gate.resolve();
  });
});

describe('the results held outside the slots', () => {
  it('leases no more while the tasks and the results held fill twice the concurrency, and again once told of room', async () => {
    let backlog = 0;
    let next = 0;
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const { leasing, polls, handled } = startLeasing({
      settings: { concurrency: 2 },
      backlog: () => backlog,
      getTask: async () => taskNumbered(next++),
      handler: async () => {
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
      },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(handled).toEqual(['PO-0', 'PO-1']);
    // Both tasks end, their results held (as the reporter counts them): 2 results, no task, twice the concurrency.
    backlog = 2;
    for (const gate of gates.splice(0)) gate.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(handled).toEqual(['PO-0', 'PO-1', 'PO-2', 'PO-3']);
    backlog = 4;
    for (const gate of gates.splice(0)) gate.resolve();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(polls).toHaveLength(4);

    // A result acknowledged leaves room for one task, once the leasing is told.
    backlog = 3;
    leasing.changed();
    await vi.advanceTimersByTimeAsync(0);
    expect(polls).toHaveLength(5);
    expect(handled).toEqual(['PO-0', 'PO-1', 'PO-2', 'PO-3', 'PO-4']);
    for (const gate of gates.splice(0)) gate.resolve();
  });
});

describe('jobs', () => {
  it("logs a task's run that fails unexpectedly, and frees its slot", async () => {
    const answers: (LeasedTask | null)[] = [
      { valid: false, id: 'T-1', type: undefined, issues: [] },
      { valid: true, task: taskNumbered(2) },
    ];
    const { handled } = startLeasing({
      settings: { concurrency: 1 },
      leaseTask: async () => answers.shift() ?? null,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(logLines).toContainEqual(
      expect.objectContaining({ level: 50, msg: 'running the task failed unexpectedly', taskId: 'T-1' }),
    );
    expect(handled).toEqual(['PO-2']);
  });
});

describe('stopping', () => {
  it('aborts the Get task requests in flight, and drains once the runs started have ended', async () => {
    const signals: AbortSignal[] = [];
    const gate = deferred();
    let asked = 0;
    const { leasing, handled } = startLeasing({
      settings: { concurrency: 2 },
      getTask: ({ signal }) => {
        asked += 1;
        if (asked === 1) return Promise.resolve(taskNumbered(1));
        return new Promise((_resolve, reject) => {
          signals.push(signal as AbortSignal);
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      },
      handler: () => gate.promise,
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(handled).toEqual(['PO-1']);
    leasing.stop();
    let drained = false;
    void leasing.drained().then(() => {
      drained = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(signals.map((signal) => signal.aborted)).toEqual([true]);
    expect(drained).toBe(false);
    gate.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(drained).toBe(true);
  });
});

describe('the lease age', () => {
  it('counts from the last lease request the service answered, with a task or with none', async () => {
    const { leasing } = startLeasing({
      getTask: async () => null,
      settings: { idleMinMs: 1_000, idleMaxMs: 1_000 },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(leasing.leaseAgeMs).toBe(0);
    // Idle: one request a second at most, each answered "none waits".
    await vi.advanceTimersByTimeAsync(10_250);
    expect(leasing.leaseAgeMs).toBeLessThanOrEqual(1_000);
  });

  it('grows while the lease requests fail, and starts again at the first answer', async () => {
    let failing = true;
    const { leasing } = startLeasing({
      getTask: async () => {
        if (failing) throw new ServerError({ method: 'GET', path: '/v2/connector/tasks' }, 503, undefined);
        return null;
      },
      settings: { idleMinMs: 1_000, idleMaxMs: 1_000 },
    });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(leasing.leaseAgeMs).toBe(30_000);
    failing = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(leasing.leaseAgeMs).toBe(0);
  });

  it('grows while every slot is held, though the watchdog sees nothing wrong', async () => {
    const answers: (Task | null)[] = [taskNumbered(1)];
    const gate = deferred();
    const { leasing } = startLeasing({
      settings: { concurrency: 1, watchdogMs: 1_000 },
      getTask: async () => answers.shift() ?? null,
      handler: () => gate.promise,
    });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(leasing.leaseAgeMs).toBe(600_000);
    expect(leasing.healthy).toBe(true);
    gate.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(leasing.leaseAgeMs).toBe(0);
  });

  it('is undefined once stopped', async () => {
    const { leasing } = startLeasing({ getTask: async () => null });
    await vi.advanceTimersByTimeAsync(100);
    leasing.stop();
    expect(leasing.leaseAgeMs).toBeUndefined();
  });
});
