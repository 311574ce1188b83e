import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Task, TaskResult } from '../../../src/api/index.js';
import {
  ApiError,
  ConflictError,
  type IntegrationClient,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
} from '../../../src/client/index.js';
import { ConnectorMetrics, createLogger } from '../../../src/worker/index.js';
import type { PinoLogger } from '../../../src/worker/operations/index.js';
import { TaskPoller } from '../../../src/worker/tasks/index.js';
import { REPORT_BACKOFF, REPORT_RETRY_MS, ResultReporter } from '../../../src/worker/tasks/reporter.js';
import { gaps, T0 } from './support/poller.js';

const target = { method: 'PATCH', path: '/v2/connector/tasks/x' };
const unavailable = () => new ServerError(target, 503, undefined);
const taskId = 'T-1';
const result: TaskResult = { status: 'success' };

let logLines: Record<string, unknown>[] = [];
let logger: PinoLogger;
const logged = (msg: string) => logLines.filter((line) => line.msg === msg);

interface Setup {
  /** Answers the report numbered `attempt` (from 0): resolves to acknowledge it, rejects to fail it. */
  answer: (attempt: number, signal: AbortSignal | undefined) => Promise<void>;
  random?: () => number;
  metrics?: ConnectorMetrics;
}

function startReporter(setup: Setup) {
  const attempts: number[] = [];
  const settled: number[] = [];
  const reporter = new ResultReporter({
    client: {
      reportTaskResult: async (_id: string, _result: TaskResult, options?: { signal?: AbortSignal }) => {
        attempts.push(Date.now());
        await setup.answer(attempts.length - 1, options?.signal);
      },
    } as Pick<IntegrationClient, 'reportTaskResult'>,
    metrics: setup.metrics,
    random: setup.random ?? (() => 0),
    onSettled: () => settled.push(Date.now()),
  });
  reporter.start(taskId, result, logger);
  return { reporter, attempts, settled };
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  logLines = [];
  logger = createLogger({
    level: 'info',
    destination: { write: (line) => void logLines.push(JSON.parse(line)) },
  });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('ResultReporter', () => {
  it('retries a result the service cannot take yet with its own backoff, until it is acknowledged', async () => {
    const { reporter, attempts, settled } = startReporter({
      answer: async (attempt) => {
        if (attempt < 5) throw unavailable();
      },
    });
    expect(reporter.pending).toBe(1);
    expect(reporter.isReporting(taskId)).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    // No jitter (random 0): half of each ceiling, from REPORT_BACKOFF's 250 ms doubling up to its 1,400 ms.
    expect(REPORT_BACKOFF).toEqual({ baseMs: 250, maxMs: 1_400, jitter: 'equal' });
    expect(gaps(attempts)).toEqual([125, 250, 500, 700, 700]);
    expect(logged('reporting the task result failed; retrying').map((line) => line.retryInMs)).toEqual([
      125, 250, 500, 700, 700,
    ]);
    expect(reporter.pending).toBe(0);
    expect(reporter.isReporting(taskId)).toBe(false);
    expect(settled).toHaveLength(1);
  });

  it('draws each wait up to its ceiling with jitter', async () => {
    const { attempts } = startReporter({
      random: () => 0.999,
      answer: async (attempt) => {
        if (attempt < 5) throw unavailable();
      },
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(gaps(attempts)).toEqual([250, 500, 1_000, 1_399, 1_399]);
  });

  it('waits the Retry-After the service asked for before reporting again', async () => {
    const { attempts } = startReporter({
      answer: async (attempt) => {
        if (attempt === 0) throw new RateLimitedError(target, 429, undefined, 7_000);
      },
    });
    await vi.advanceTimersByTimeAsync(6_999);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(2);
  });

  it('counts a 409 as acknowledged: no retry, nothing logged', async () => {
    const { attempts, reporter } = startReporter({
      answer: async () => {
        throw new ConflictError(target, 409, { status: 'failure' });
      },
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toHaveLength(1);
    expect(reporter.pending).toBe(0);
    expect(logLines).toEqual([]);
  });

  it.each([
    ['431', new ApiError('api', target, 431, { status: 'failure' })],
    ['403', new UnauthorizedError(target, 403, { status: 'failure' })],
  ])(
    'gives up at once on a result the service refuses with a permanent %s, and counts it',
    async (status, refusal) => {
      const metrics = new ConnectorMetrics();
      const { attempts, reporter } = startReporter({
        metrics,
        answer: async () => {
          throw refusal;
        },
      });
      await vi.advanceTimersByTimeAsync(60_000);
      expect(attempts).toHaveLength(1);
      expect(reporter.pending).toBe(0);
      expect(logLines).toEqual([
        expect.objectContaining({
          level: 50,
          msg: 'the service refused the task result; not retrying it',
          httpStatus: Number(status),
          status: 'success',
        }),
      ]);
      expect((await metrics.render()).body).toContain(
        'approval_connector_task_reports_failed_total{reason="refused"} 1',
      );
    },
  );

  it('gives up within REPORT_RETRY_MS of the first report while the service keeps failing', async () => {
    const metrics = new ConnectorMetrics();
    const { attempts, reporter } = startReporter({
      metrics,
      random: () => 0.5,
      answer: async () => {
        throw unavailable();
      },
    });
    await vi.advanceTimersByTimeAsync(2 * REPORT_RETRY_MS);
    expect(reporter.pending).toBe(0);
    const last = (attempts.at(-1) as number) - T0;
    expect(last).toBeLessThanOrEqual(REPORT_RETRY_MS);
    // The next wait, at its ceiling's three quarters (random 0.5), would have passed it.
    expect(last + 0.75 * REPORT_BACKOFF.maxMs).toBeGreaterThan(REPORT_RETRY_MS);
    expect(logged('reporting the task result failed; retrying')).toHaveLength(attempts.length - 1);
    expect(logLines.filter((line) => line.level === 50)).toEqual([
      expect.objectContaining({
        msg: 'reporting the task result kept failing; giving up until the service offers the task again',
        httpStatus: 503,
        attempts: attempts.length,
      }),
    ]);
    expect((await metrics.render()).body).toContain(
      'approval_connector_task_reports_failed_total{reason="exhausted"} 1',
    );
  });

  it('aborts the reports in flight at the deadline given, and counts each as cut short by the shutdown', async () => {
    const metrics = new ConnectorMetrics();
    const { reporter } = startReporter({
      metrics,
      answer: (_attempt, signal) =>
        new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
    });
    reporter.giveUpAfter(1_000);
    let settled = false;
    void reporter.settled().then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
    expect(logged('the task result was not reported by the shutdown deadline')).toHaveLength(1);
    expect((await metrics.render()).body).toContain(
      'approval_connector_task_reports_failed_total{reason="shutdown"} 1',
    );
  });

  it('leaves the reports alone when the deadline is cancelled', async () => {
    const { reporter, attempts } = startReporter({
      answer: async (attempt) => {
        if (attempt < 3) throw unavailable();
      },
    });
    reporter.giveUpAfter(100).cancel();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(attempts).toHaveLength(4);
    expect(logged('the task result was not reported by the shutdown deadline')).toEqual([]);
  });
});

describe("the poller's result reports", () => {
  /** When a poller tried to report its one task's result, which fails four times, under the idle settings given. */
  async function reportTimes(idleMinMs: number, idleMaxMs: number): Promise<number[]> {
    const task: Task = { id: 'T-7', type: 'approve', data: { approval: { id: 'PO-7' } } };
    const offers: (Task | null)[] = [task];
    const attempts: number[] = [];
    const client = {
      leaseTask: async () => {
        const next = offers.shift() ?? null;
        return next === null ? null : { valid: true, task: next };
      },
      reportTaskResult: async () => {
        attempts.push(Date.now());
        if (attempts.length <= 4) throw unavailable();
      },
    };
    const poller = new TaskPoller(
      {
        client: client as unknown as IntegrationClient,
        tasks: {
          approve: { input: z.object({ approval: z.object({ id: z.string() }) }), run: async () => {} },
        },
        keyRing: undefined,
        classifyFailure: undefined,
        state: { read: () => undefined, write: async () => {} },
        logger,
        metrics: undefined,
        random: () => 0,
      },
      {
        concurrency: 2,
        idleMinMs,
        idleMaxMs,
        recentResults: 100,
        recentResultTtlMs: 3_600_000,
        watchdogMs: 3_600_000,
        timeoutMs: 3_600_000,
      },
    );
    poller.start();
    await vi.advanceTimersByTimeAsync(30_000);
    const stopped = poller.stop(0, 0);
    await vi.advanceTimersByTimeAsync(10);
    await stopped;
    return gaps(attempts);
  }

  it("retry on the reporter's own backoff, whatever the idle poll's delay", async () => {
    const usual = await reportTimes(250, 1_400);
    expect(usual).toEqual([125, 250, 500, 700]);
    expect(await reportTimes(5, 20)).toEqual(usual);
    expect(await reportTimes(2_000, 10_000)).toEqual(usual);
  });
});
