/**
 * A task poller started against a client of the test's, the task type `approve` its only one, with fake timers: what
 * the poller's tests share.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import { z } from 'zod';
import type { Task, TaskResult } from '../../../../src/api/index.js';
import type { IntegrationClient, LeasedTask } from '../../../../src/client/index.js';
import type { PrecheckVerdict, TaskContext } from '../../../../src/connector/index.js';
import { type ConnectorMetrics, createLogger } from '../../../../src/worker/index.js';
import { type PollerSettings, TaskPoller } from '../../../../src/worker/tasks/index.js';

const schemas = { approve: z.object({ approval: z.object({ id: z.string() }) }) };

export function deferred<T = void>() {
  let resolve: (value: T) => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<T>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** A handler's work that only its signal's abort ends, rejected with the reason, which `told` hears first. */
export const untilAborted = (signal: AbortSignal, told: (reason: unknown) => void) =>
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

export const taskNumbered = (n: number): Task => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  type: 'approve',
  data: { approval: { id: `PO-${n}` } },
});

type GetTask = (options: { signal?: AbortSignal }) => Promise<Task | null>;
type Report = (taskId: string, result: TaskResult) => Promise<void>;

export interface Setup {
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

export const target = { method: 'PATCH', path: '/v2/connector/tasks/x' };
let pollers: TaskPoller[] = [];
/** The lines the pollers logged in the current test, parsed. */
export const logLines: ({ level: number; msg: string } & Record<string, unknown>)[] = [];

export function startPoller(setup: Setup) {
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

export const T0 = Date.UTC(2026, 4, 1, 10);
/** The time between each two of `times`. */
export const gaps = (times: number[]) => times.slice(1).map((time, index) => time - (times[index] as number));
export const warnings = () => logLines.filter((line) => line.level >= 40).map((line) => line.msg);

/** Runs each test of the file on fake timers from T0, and stops the pollers it started after it. */
export function usePollers(): void {
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
    logLines.length = 0;
  });
  afterEach(async () => {
    const stopping = Promise.all(pollers.map((poller) => poller.stop(0, 0)));
    await vi.advanceTimersByTimeAsync(10);
    await stopping;
    pollers = [];
    vi.useRealTimers();
  });
}
