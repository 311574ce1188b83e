import { describe, expect, it, vi } from 'vitest';
import type { Task } from '../../../src/api/index.js';
import {
  ApiError,
  ConflictError,
  type LeasedTask,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
} from '../../../src/client/index.js';
import { ConnectorMetrics } from '../../../src/worker/index.js';
import { type PollerSettings, REPORT_RETRY_MS } from '../../../src/worker/tasks/index.js';
import {
  deferred,
  logLines,
  startPoller,
  target,
  taskNumbered,
  untilAborted,
  usePollers,
  warnings,
} from './support/poller.js';

usePollers();

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

describe('its readiness check', () => {
  it('says ok while leasing, not leasing once no lease request succeeded for watchdogMs, and stopped once stopped', async () => {
    let failing = false;
    const { poller } = startPoller({
      getTask: async () => {
        if (failing) throw new ServerError(target, 503, undefined);
        return null;
      },
      settings: { watchdogMs: 60_000, concurrency: 3 },
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(poller.check()).toEqual({
      status: 'ok',
      lastLeaseAgeSeconds: 0,
      notLeasingAfterSeconds: 60,
      running: 0,
      concurrency: 3,
    });
    failing = true;
    await vi.advanceTimersByTimeAsync(60_000);
    // The requests go on and fail: the watchdog sees polling, and the lease age says nothing came of it.
    expect(poller.healthy).toBe(true);
    expect(poller.check()).toMatchObject({ status: 'not leasing', lastLeaseAgeSeconds: 60 });
    failing = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(poller.check()).toMatchObject({ status: 'ok' });

    await poller.stop(0, 0);
    expect(poller.check()).toEqual({ status: 'stopped' });
    expect(poller.leaseAgeMs).toBeUndefined();
  });

  it('says stalled while the watchdog finds polling stalled', async () => {
    const hung = deferred<Task | null>();
    const { poller } = startPoller({ getTask: () => hung.promise, settings: { watchdogMs: 1_000 } });
    await vi.advanceTimersByTimeAsync(1_600);
    expect(poller.healthy).toBe(false);
    expect(poller.check()).toMatchObject({ status: 'stalled' });
  });
});
