import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Task, TaskResult } from '../../../src/api/index.js';
import {
  ApiError,
  ConflictError,
  type IntegrationClient,
  type LeasedTask,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
} from '../../../src/client/index.js';
import type { PrecheckVerdict, TaskContext } from '../../../src/connector/index.js';
import { connectorOptionsSchema } from '../../../src/worker/connector-options.js';
import { ConnectorMetrics, createLogger } from '../../../src/worker/index.js';
import { type PollerSettings, REPORT_RETRY_MS, TaskPoller } from '../../../src/worker/tasks/index.js';

const schemas = { approve: z.object({ approval: z.object({ id: z.string() }) }) };

function deferred<T = void>() {
  let resolve: (value: T) => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<T>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** A handler's work that only its signal's abort ends, rejected with the reason, which `told` hears first. */
const untilAborted = (signal: AbortSignal, told: (reason: unknown) => void) =>
  new Promise<never>((_resolve, reject) =>
    signal.addEventListener(
      'abort',
      () => {
        told(signal.reason);
        reject(signal.reason);
      },
      { once: true },
    ),
  );

const taskNumbered = (n: number): Task => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  type: 'approve',
  data: { approval: { id: `PO-${n}` } },
});

type GetTask = (options: { signal?: AbortSignal }) => Promise<Task | null>;
type Report = (taskId: string, result: TaskResult) => Promise<void>;

interface Setup {
  getTask?: GetTask;
  /** Answers in place of `getTask`, for tasks that break the contract. */
  leaseTask?: (options: { signal?: AbortSignal }) => Promise<LeasedTask | null>;
  metrics?: ConnectorMetrics;
  reportTaskResult?: Report;
  handler?: (input: { approval: { id: string } }, context: TaskContext<object>) => Promise<void>;
  precheck?: (input: { approval: { id: string } }, context: TaskContext<object>) => Promise<PrecheckVerdict>;
  random?: () => number;
  settings?: Partial<PollerSettings>;
  logLevel?: 'info' | 'warn';
  onHealthChanged?: () => void;
}

const target = { method: 'PATCH', path: '/v2/connector/tasks/x' };
let pollers: TaskPoller[] = [];
let logLines: { level: number; msg: string }[] = [];

function startPoller(setup: Setup) {
  const polls: number[] = [];
  const reports: { taskId: string; result: TaskResult }[] = [];
  const client = {
    leaseTask: async (options: { signal?: AbortSignal }): Promise<LeasedTask | null> => {
      polls.push(Date.now());
      if (setup.leaseTask) return setup.leaseTask(options);
      const task = await (setup.getTask ?? (async () => null))(options);
      return task === null ? null : { valid: true, task };
    },
    reportTaskResult: async (taskId: string, result: TaskResult) => {
      reports.push({ taskId, result });
      await setup.reportTaskResult?.(taskId, result);
    },
  };
  const handled: string[] = [];
  const logger = createLogger({
    level: setup.logLevel ?? 'info',
    destination: { write: (line: string) => void logLines.push(JSON.parse(line)) },
  });
  const children = vi.spyOn(logger, 'child');
  const poller = new TaskPoller(
    {
      client: client as unknown as IntegrationClient,
      tasks: {
        approve: {
          input: schemas.approve,
          ...(setup.precheck ? { precheck: setup.precheck } : {}),
          run: async (input: { approval: { id: string } }, context: TaskContext<object>) => {
            handled.push(input.approval.id);
            await setup.handler?.(input, context);
          },
        },
      },
      keyRing: undefined,
      classifyFailure: undefined,
      state: { read: () => undefined, write: async () => {} },
      logger,
      metrics: setup.metrics,
      random: setup.random ?? (() => 0),
      onHealthChanged: setup.onHealthChanged,
    },
    {
      concurrency: 2,
      idleMinMs: 100,
      idleMaxMs: 1_000,
      recentResults: 100,
      recentResultTtlMs: 3_600_000,
      watchdogMs: 3_600_000,
      timeoutMs: 3_600_000,
      ...setup.settings,
    },
  );
  pollers.push(poller);
  poller.start();
  return { poller, polls, reports, handled, children };
}

const T0 = Date.UTC(2026, 4, 1, 10);
const gaps = (times: number[]) => times.slice(1).map((time, index) => time - (times[index] as number));
const warnings = () => logLines.filter((line) => line.level >= 40).map((line) => line.msg);

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  logLines = [];
});
afterEach(async () => {
  const stopping = Promise.all(pollers.map((poller) => poller.stop(0, 0)));
  await vi.advanceTimersByTimeAsync(10);
  await stopping;
  pollers = [];
  vi.useRealTimers();
});

describe('idle backoff', () => {
  it('waits longer after each empty poll, up to idleMaxMs, and polls at once again after a task', async () => {
    const answers: (Task | null)[] = [null, null, null, null, null, null, null, taskNumbered(1), null, null];
    const { polls, handled } = startPoller({ getTask: async () => answers.shift() ?? null });
    await vi.advanceTimersByTimeAsync(2_000);
    // Both slots free: two requests at once, whose empty answers count once. Then one at a time; with no jitter
    // (random 0) each wait is half its ceiling: the ceiling doubles from 100 ms up to 1000 ms.
    expect(gaps(polls).slice(0, 9)).toEqual([0, 50, 100, 200, 400, 500, 500, 0, 50]);
    expect(handled).toEqual(['PO-1']);
  });

  it('draws each wait up to its ceiling with jitter', async () => {
    const { polls } = startPoller({ getTask: async () => null, random: () => 0.999 });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(gaps(polls)).toEqual([0, 100, 200, 400, 800, 1_000]);
  });

  it('backs off the same way when polling fails, and says so in its logs', async () => {
    const { polls } = startPoller({
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
    const { poller, polls, handled } = startPoller({
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
    expect(poller.inFlight).toBe(2);

    // One slot frees up: exactly one more task is leased.
    gates.shift()?.resolve();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(polls).toHaveLength(3);
    expect(handled).toEqual(['PO-0', 'PO-1', 'PO-2']);
    expect(mostRunning).toBe(2);

    for (const gate of gates.splice(0)) gate.resolve();
  });
});

describe('results reported outside the slot', () => {
  it("leases the next task while the previous one's result is reported, and holds no more than twice the concurrency", async () => {
    const answers: (Task | null)[] = [taskNumbered(1), taskNumbered(2), taskNumbered(3)];
    const acknowledged: ReturnType<typeof deferred<void>>[] = [];
    const { polls, reports, handled } = startPoller({
      settings: { concurrency: 1 },
      getTask: async () => answers.shift() ?? null,
      reportTaskResult: () => {
        const ack = deferred();
        acknowledged.push(ack);
        return ack.promise;
      },
    });
    await vi.advanceTimersByTimeAsync(0);
    // PO-1's result is on its way, and the slot ran PO-2 meanwhile: two tasks held, no third leased.
    expect(handled).toEqual(['PO-1', 'PO-2']);
    expect(reports.map(({ taskId }) => taskId)).toEqual([taskNumbered(1).id, taskNumbered(2).id]);
    expect(polls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(polls).toHaveLength(2);

    // An acknowledgement leaves room: the next task is leased at once.
    acknowledged[0]?.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(handled).toEqual(['PO-1', 'PO-2', 'PO-3']);
    for (const ack of acknowledged) ack.resolve();
  });

  it("sends the slot's next lease before the previous task's result, so the service answers it first", async () => {
    const sent: string[] = [];
    const answers: (Task | null)[] = [taskNumbered(1), taskNumbered(2)];
    startPoller({
      settings: { concurrency: 1 },
      getTask: async () => {
        sent.push('lease');
        return answers.shift() ?? null;
      },
      reportTaskResult: async (taskId) => {
        sent.push(`result of ${taskId.slice(-1)}`);
      },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['lease', 'lease', 'result of 1', 'lease', 'result of 2']);
  });

  it('does not report a result twice when the task is offered again while its result is reported', async () => {
    const answers: (Task | null)[] = [taskNumbered(1), taskNumbered(1)];
    const acknowledged = deferred();
    const { reports, handled } = startPoller({
      settings: { concurrency: 1 },
      getTask: async () => answers.shift() ?? null,
      reportTaskResult: () => acknowledged.promise,
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(handled).toEqual(['PO-1']);
    expect(reports).toHaveLength(1);
    expect(logLines.map((line) => line.msg)).toContain(
      'task offered again while its result is reported; not reporting it twice',
    );
    acknowledged.resolve();
  });

  it('waits for the results still being reported when it stops, within its deadline', async () => {
    const answers: (Task | null)[] = [taskNumbered(1)];
    const acknowledged = deferred();
    const { poller, reports } = startPoller({
      settings: { concurrency: 1 },
      getTask: async () => answers.shift() ?? null,
      reportTaskResult: () => acknowledged.promise,
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(reports).toHaveLength(1);
    let stopped = false;
    const stopping = poller.stop(1_000, 1_000).then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(500);
    expect(stopped).toBe(false);
    acknowledged.resolve();
    await vi.advanceTimersByTimeAsync(0);
    await stopping;
    expect(stopped).toBe(true);
    expect(logLines.filter((line) => line.level >= 40)).toEqual([]);
  });

  it('names a task whose result is still unacknowledged at the shutdown deadline among those whose outcome is unknown', async () => {
    const answers: (Task | null)[] = [taskNumbered(1)];
    const { poller, reports } = startPoller({
      settings: { concurrency: 1 },
      getTask: async () => answers.shift() ?? null,
      reportTaskResult: () => new Promise(() => {}),
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(reports).toHaveLength(1);
    const stopping = poller.stop(1_000, 1_000);
    await vi.advanceTimersByTimeAsync(2_000);
    await stopping;
    expect(logLines.filter((line) => line.level === 50)).toContainEqual(
      expect.objectContaining({
        msg: 'tasks whose outcome is unknown at the shutdown deadline: not reported, so the service offers them again',
        taskIds: [taskNumbered(1).id],
      }),
    );
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
    const { polls, handled } = startPoller({
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
    startPoller({ settings: { concurrency: 3 }, getTask: service.getTask, handler: service.handler });
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
    const { polls } = startPoller({
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
    const { polls, handled } = startPoller({
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
    const slowest = startPoller({
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
    const even = startPoller({
      settings: { concurrency: 8, idleMinMs, idleMaxMs },
      random: () => ((draw++ % 10) + 0.5) / 10,
      getTask: async () => null,
    });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(even.polls.length / 600).toBeLessThanOrEqual(1);
  });
});

describe('the per-task logger', () => {
  it("does not build a child logger per task when its level drops the task's lines", async () => {
    const answers: (Task | null)[] = [taskNumbered(1), taskNumbered(2)];
    const { handled, reports, children } = startPoller({
      logLevel: 'warn',
      getTask: async () => answers.shift() ?? null,
      handler: async (_, { logger }) => logger.info('working'),
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(handled).toEqual(['PO-1', 'PO-2']);
    expect(reports).toHaveLength(2);
    expect(children).not.toHaveBeenCalled();
    expect(logLines).toEqual([]);
  });

  it('binds the task to every line written through it', async () => {
    const answers: (Task | null)[] = [taskNumbered(1)];
    const { children } = startPoller({
      logLevel: 'warn',
      getTask: async () => answers.shift() ?? null,
      handler: async (_, { logger }) => {
        logger.info('dropped');
        logger.warn('kept');
        logger.error('kept too');
      },
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(children).toHaveBeenCalledTimes(1);
    const bound = { taskId: taskNumbered(1).id, taskType: 'approve' };
    expect(logLines).toEqual([
      expect.objectContaining({ msg: 'kept', ...bound }),
      expect.objectContaining({ msg: 'kept too', ...bound }),
    ]);
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
    const { poller, polls } = startPoller({
      settings: { concurrency: 1, watchdogMs: 1_000 },
      getTask: async () => (answers.shift() ?? (async () => null))(),
      onHealthChanged: () => health.push(poller.healthy),
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(polls).toHaveLength(1);
    expect(poller.healthy).toBe(true);

    // The watchdog checks every 500 ms; past 1000 ms without a poll it restarts it.
    await vi.advanceTimersByTimeAsync(500);
    expect(polls).toHaveLength(2);
    expect(poller.healthy).toBe(false);
    expect(warnings()).toContain('the task poller stopped polling; restarting the poll');

    second.resolve(null);
    await vi.advanceTimersByTimeAsync(0);
    expect(poller.healthy).toBe(true);
    // Told of each change, once: the worker's ready gauge follows.
    await vi.advanceTimersByTimeAsync(2_000);
    expect(health).toEqual([false, true]);
  });

  it('does not count a poller waiting for a free slot as stalled', async () => {
    let next = 0;
    const gates: ReturnType<typeof deferred<void>>[] = [];
    const { poller } = startPoller({
      settings: { concurrency: 1, watchdogMs: 1_000 },
      getTask: async () => taskNumbered(next++),
      handler: async () => {
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
      },
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(poller.healthy).toBe(true);
    for (const gate of gates.splice(0)) gate.resolve();
  });
});

describe('reporting results', () => {
  it.each([
    ['431', new ApiError('api', target, 431, { status: 'failure' })],
    ['414', new ApiError('api', target, 414, { status: 'failure' })],
    ['403', new UnauthorizedError(target, 403, { status: 'failure' })],
  ])(
    'gives up at once on a result the service refuses with a permanent %s, logs and counts it, and frees its slot',
    async (status, refusal) => {
      const metrics = new ConnectorMetrics();
      const answers: (Task | null)[] = [taskNumbered(1), taskNumbered(2)];
      const { reports, handled } = startPoller({
        settings: { concurrency: 1 },
        metrics,
        getTask: async () => answers.shift() ?? null,
        reportTaskResult: async (taskId) => {
          if (taskId === taskNumbered(1).id) throw refusal;
        },
      });
      await vi.advanceTimersByTimeAsync(10_000);
      // The only slot was freed: the second task ran and was reported.
      expect(handled).toEqual(['PO-1', 'PO-2']);
      expect(reports.map((report) => report.taskId)).toEqual([taskNumbered(1).id, taskNumbered(2).id]);
      expect(logLines.filter((line) => line.level >= 40)).toEqual([
        expect.objectContaining({
          level: 50,
          msg: 'the service refused the task result; not retrying it',
          taskId: taskNumbered(1).id,
          httpStatus: Number(status),
          status: 'success',
        }),
      ]);
      const { body } = await metrics.render();
      expect(body).toContain('approval_connector_task_reports_failed_total{reason="refused"} 1');
    },
  );

  it('retries a result the service cannot take yet (408, 425, 429, 5xx) only within REPORT_RETRY_MS, leasing no more while the results held fill twice its concurrency', async () => {
    const metrics = new ConnectorMetrics();
    const answers: (Task | null)[] = [taskNumbered(1), taskNumbered(2), taskNumbered(3)];
    const failures = [
      new ApiError('api', target, 408, undefined),
      new ApiError('api', target, 425, undefined),
      new RateLimitedError(target, 429, undefined, undefined),
    ];
    const refused = new Set([taskNumbered(1).id, taskNumbered(2).id]);
    const { reports, handled } = startPoller({
      settings: { concurrency: 1 },
      metrics,
      random: () => 0.5,
      getTask: async () => answers.shift() ?? null,
      reportTaskResult: async (taskId) => {
        if (!refused.has(taskId)) return;
        throw (
          (taskId === taskNumbered(1).id ? failures.shift() : undefined) ??
          new ServerError(target, 503, undefined)
        );
      },
    });
    await vi.advanceTimersByTimeAsync(REPORT_RETRY_MS - 1_000);
    // The slot leased PO-2 while PO-1's result was retried; with both results held, it leases no third task.
    expect(handled).toEqual(['PO-1', 'PO-2']);
    const attemptsOf = (id: string) => reports.filter((report) => report.taskId === id).length;
    expect(attemptsOf(taskNumbered(1).id)).toBeGreaterThan(4);
    expect(attemptsOf(taskNumbered(2).id)).toBeGreaterThan(4);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(handled).toEqual(['PO-1', 'PO-2', 'PO-3']);
    expect(attemptsOf(taskNumbered(3).id)).toBe(1);
    expect(warnings().filter((msg) => msg === 'reporting the task result failed; retrying')).toHaveLength(
      reports.length - 3,
    );
    expect(logLines.filter((line) => line.level === 50)).toEqual(
      [taskNumbered(1).id, taskNumbered(2).id].map((taskId) =>
        expect.objectContaining({
          msg: 'reporting the task result kept failing; giving up until the service offers the task again',
          taskId,
          httpStatus: 503,
          attempts: attemptsOf(taskId),
        }),
      ),
    );
    const { body } = await metrics.render();
    expect(body).toContain('approval_connector_task_reports_failed_total{reason="exhausted"} 2');
  });

  it('counts a 409 as acknowledged: no retry, and a redelivery is re-reported, not re-run', async () => {
    const answers: (Task | null)[] = [taskNumbered(3), null, null, taskNumbered(3)];
    const { reports, handled } = startPoller({
      getTask: async () => answers.shift() ?? null,
      reportTaskResult: async () => {
        throw new ConflictError(target, 409, { status: 'failure' });
      },
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(handled).toEqual(['PO-3']);
    // One report per delivery, none retried.
    expect(reports).toHaveLength(2);
    expect(warnings()).toEqual([]);
  });
});

describe('recent results', () => {
  /** A service that delivers the tasks numbered in `deliveries`, in order, one at a time. */
  function delivering(deliveries: number[], settings: Partial<PollerSettings>) {
    return startPoller({
      settings: { concurrency: 1, ...settings },
      getTask: async () => {
        const next = deliveries.shift();
        return next === undefined ? null : taskNumbered(next);
      },
    });
  }

  it('forgets the oldest results first, in order, however many more tasks than recentResults it has run', async () => {
    // Forty tasks through a memory of three: 37 results forgotten one at a time, oldest first.
    const tasks = Array.from({ length: 40 }, (_, n) => n + 1);
    const { handled, reports } = delivering([...tasks, 38, 39, 40, 37], { recentResults: 3 });
    await vi.advanceTimersByTimeAsync(60_000);
    // 38 to 40 are remembered: re-reported, not re-run. 37 was forgotten: run again.
    expect(handled).toEqual([...tasks.map((n) => `PO-${n}`), 'PO-37']);
    expect(reports.map((report) => report.taskId)).toEqual(
      [...tasks, 38, 39, 40, 37].map((n) => taskNumbered(n).id),
    );
  });

  it('keeps that order when a result is forgotten at its TTL in between', async () => {
    const deliveries = [1, 2];
    const { handled } = delivering(deliveries, { recentResults: 3, recentResultTtlMs: 5_000 });
    await vi.advanceTimersByTimeAsync(4_000);
    deliveries.push(3);
    await vi.advanceTimersByTimeAsync(2_000);
    // 1 and 2 are past their TTL: each is run again, and remembered anew after 3.
    deliveries.push(1, 4, 3, 2, 1, 3);
    await vi.advanceTimersByTimeAsync(10_000);
    // Remembered after each: [2, 3] (2 expires next) > [2, 3, 1] > [3, 1, 4] > 3 re-reported > 2 expired: run,
    // [1, 4, 2] > 1 re-reported > 3 forgotten: run, [4, 2, 3].
    expect(handled).toEqual(['PO-1', 'PO-2', 'PO-3', 'PO-1', 'PO-4', 'PO-2', 'PO-3']);
  });
});

describe('stopping', () => {
  it('aborts the Get task requests in flight, and runs nothing they would have leased', async () => {
    const signals: AbortSignal[] = [];
    const { poller, handled } = startPoller({
      settings: { concurrency: 3 },
      getTask: ({ signal }) =>
        new Promise((_resolve, reject) => {
          if (signal === undefined) throw new Error('a lease without a signal');
          signals.push(signal);
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false, false]);
    await poller.stop(1_000, 1_000);
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true, true]);
    expect(handled).toEqual([]);
  });

  it("aborts a running handler's signal with a StoppingError once the grace time is over, and reports nothing", async () => {
    const reasons: unknown[] = [];
    const answers: (Task | null)[] = [taskNumbered(1), taskNumbered(2)];
    const { poller, reports, handled } = startPoller({
      getTask: async () => answers.shift() ?? null,
      handler: (_, { signal }) => untilAborted(signal, (reason) => reasons.push(reason)),
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(handled).toEqual(['PO-1', 'PO-2']);
    const stopped = poller.stop(1_000, 1_000);
    await vi.advanceTimersByTimeAsync(999);
    expect(reasons).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await stopped;
    expect(reasons).toEqual([
      expect.objectContaining({ code: 'stopping' }),
      expect.objectContaining({ code: 'stopping' }),
    ]);
    expect(reports).toEqual([]);
    expect(warnings()).toContain('task interrupted by shutdown; handed back to the service');
  });
});

describe('tasks that break the contract', () => {
  it('reports internalError task_data_invalid for a leased task it cannot read, without running a handler', async () => {
    const metrics = new ConnectorMetrics();
    const answers: (LeasedTask | null)[] = [
      {
        valid: false,
        id: 'T-1',
        type: undefined,
        issues: [
          {
            path: ['type'],
            message: 'Invalid input: expected string, received number',
            code: 'invalid_type',
          },
        ],
      },
    ];
    const { reports, handled } = startPoller({ leaseTask: async () => answers.shift() ?? null, metrics });
    await vi.advanceTimersByTimeAsync(100);
    expect(handled).toEqual([]);
    expect(reports).toEqual([
      {
        taskId: 'T-1',
        result: {
          status: 'internalError',
          meta: {
            code: 'task_data_invalid',
            message:
              'Invalid data for task type "(unreadable)": type: Invalid input: expected string, received number',
          },
        },
      },
    ]);
    expect((await metrics.render()).body).toContain(
      'approval_connector_tasks_total{type="",status="internalError"} 1',
    );
  });
});

describe('jobs', () => {
  it('logs a task job that fails unexpectedly rather than leaving its rejection unhandled', async () => {
    // A metrics subclass of the author's that throws: the one thing in a task's job the kit does not control.
    class Broken extends ConnectorMetrics {
      override taskFinished(): void {
        throw new Error('metrics broke');
      }
    }
    const answers: (Task | null)[] = [taskNumbered(1)];
    startPoller({ getTask: async () => answers.shift() ?? null, metrics: new Broken() });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(logLines).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: 'running the task failed unexpectedly',
        taskId: taskNumbered(1).id,
        err: expect.objectContaining({ message: 'metrics broke' }),
      }),
    );
  });
});
