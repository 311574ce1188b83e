import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { sealCredentials, type Task, type TaskResult } from '../../../src/api/index.js';
import type { LeasedTask } from '../../../src/client/index.js';
import type { PrecheckVerdict, TaskContext, TaskOutcome } from '../../../src/connector/index.js';
import { createLogger, KeyRing, MemoryKeyStore } from '../../../src/worker/index.js';
import { runTask, showsSourceState, type TaskRunInputs } from '../../../src/worker/tasks/run-task.js';

type Input = { approval: { id: string } };
type Handler = (input: Input, context: TaskContext<object>) => Promise<TaskOutcome>;
type Precheck = (input: Input, context: TaskContext<object>) => Promise<PrecheckVerdict>;

const task: Task = {
  id: '00000000-0000-4000-8000-000000000001',
  type: 'approve',
  data: { approval: { id: 'PO-1' } },
};
const leased = (of: Task = task): LeasedTask => ({ valid: true, task: of });

let logLines: Record<string, unknown>[] = [];
const messages = () => logLines.map((line) => line.msg);

/** runTask's inputs: one task type, `approve`, with `run` as its handler; a handler's signal of its own. */
function inputs(run: Handler, more: Partial<TaskRunInputs> & { precheck?: Precheck } = {}) {
  const { precheck: check, ...rest } = more;
  return {
    tasks: {
      approve: {
        input: z.object({ approval: z.object({ id: z.string() }) }),
        ...(check ? { precheck: check } : {}),
        run,
      },
    },
    keyRing: undefined,
    classifyFailure: undefined,
    state: { read: () => undefined, write: async () => {} },
    logger: createLogger({
      level: 'info',
      destination: { write: (line) => void logLines.push(JSON.parse(line)) },
    }),
    timeoutMs: 3_600_000,
    handler: new AbortController(),
    interrupted: new AbortController().signal,
    ...rest,
  } satisfies TaskRunInputs;
}

/** A handler's work that only its signal's abort ends, rejected with the reason. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );

beforeEach(() => {
  vi.useFakeTimers();
  logLines = [];
});
afterEach(() => {
  vi.useRealTimers();
});

describe('runTask', () => {
  it("runs the type's handler with the validated input and one context, and gives its meta and time taken", async () => {
    const contexts: TaskContext<object>[] = [];
    const running = runTask(
      leased(),
      inputs(async (input, context) => {
        contexts.push(context);
        await new Promise((resolve) => setTimeout(resolve, 1_234));
        return { meta: { decided: input.approval.id } };
      }),
    );
    await vi.advanceTimersByTimeAsync(1_234);
    expect(await running).toEqual({
      result: { status: 'success', meta: { decided: 'PO-1' } },
      tookMs: 1_234,
      byPrecheck: false,
    });
    expect(contexts).toEqual([
      expect.objectContaining({ taskId: task.id, type: 'approve', idempotencyKey: task.id, task }),
    ]);
    expect(messages()).toEqual([]);
  });

  it('gives the result a precheck returns, without running the handler; runs it when the precheck passes', async () => {
    const verdict: TaskResult = {
      status: 'systemError',
      meta: { code: 'already_decided', message: 'PO-1 was decided in the source' },
    };
    const handled: string[] = [];
    const run: Handler = async ({ approval }) => void handled.push(approval.id);
    const checkedBy = (answer: PrecheckVerdict) => async () => answer;
    expect(await runTask(leased(), inputs(run, { precheck: checkedBy(verdict) }))).toMatchObject({
      result: verdict,
      byPrecheck: true,
    });
    expect(handled).toEqual([]);
    expect(await runTask(leased(), inputs(run, { precheck: checkedBy(true) }))).toMatchObject({
      result: { status: 'success' },
      byPrecheck: false,
    });
    expect(handled).toEqual(['PO-1']);
  });

  it.each([
    [
      'a task it cannot read',
      {
        valid: false,
        id: 'T-1',
        type: undefined,
        issues: [{ path: ['type'], message: 'Expected string', code: 'invalid_type' }],
      },
      'Invalid data for task type "(unreadable)": type: Expected string',
    ],
    [
      'a task of a type it has no handler for',
      leased({ ...task, type: 'reject' }),
      'Invalid data for task type "reject": type: no handler for task type "reject"',
    ],
    [
      "a task whose data fails its type's schema",
      leased({ ...task, data: { approval: { id: 42 } } } as unknown as Task),
      'Invalid data for task type "approve": approval.id: Invalid input: expected string, received number',
    ],
  ] as [string, LeasedTask, string][])(
    'answers internalError task_data_invalid for %s, without running the handler',
    async (_, offered, message) => {
      const handled: string[] = [];
      const run = await runTask(
        offered,
        inputs(async ({ approval }) => void handled.push(approval.id)),
      );
      expect(run?.result).toEqual({ status: 'internalError', meta: { code: 'task_data_invalid', message } });
      expect(handled).toEqual([]);
      expect(messages()).toEqual(['task failed']);
    },
  );

  it("consults the connector's own classification before the kit's", async () => {
    const failing = async () => {
      throw new Error('the source is in maintenance');
    };
    expect((await runTask(leased(), inputs(failing)))?.result.status).toBe('internalError');
    const own = inputs(failing, { classifyFailure: () => 'serviceUnavailable' });
    expect((await runTask(leased(), own))?.result.status).toBe('serviceUnavailable');
  });

  describe('credentials', () => {
    async function sealedTask(credentials: Record<string, string> | undefined) {
      const keyRing = await KeyRing.load(new MemoryKeyStore());
      const sealed = credentials && sealCredentials(credentials, keyRing.current.publicKey);
      return {
        keyRing,
        offered: leased({ ...task, data: { ...task.data, ...(sealed ? { credentials: sealed } : {}) } }),
      };
    }

    it('opens them for the handler, and scrubs them from the result and from its log lines', async () => {
      const { keyRing, offered } = await sealedTask({ password: 'hunter2' });
      const run = await runTask(
        offered,
        inputs(
          async (_, { credentials, logger }) => {
            const password = credentials?.password?.reveal();
            logger.warn(`the source said: bad password ${password}`);
            return { meta: { echo: `password ${password}` } };
          },
          { keyRing },
        ),
      );
      expect(JSON.stringify(run?.result)).not.toContain('hunter2');
      expect(run?.result.status).toBe('success');
      expect(JSON.stringify(logLines)).not.toContain('hunter2');
      expect(messages()).toEqual([expect.stringContaining('the source said: bad password')]);
    });

    it('answers internalError credentials_unreadable for a task that carries none', async () => {
      const { keyRing, offered } = await sealedTask(undefined);
      const handled: string[] = [];
      const run = await runTask(
        offered,
        inputs(async ({ approval }) => void handled.push(approval.id), { keyRing }),
      );
      expect(run?.result).toMatchObject({
        status: 'internalError',
        meta: { code: 'credentials_unreadable' },
      });
      expect(handled).toEqual([]);
    });
  });

  describe('deadline', () => {
    it('aborts the handler signal with a TaskDeadlineError at timeoutMs, and answers serviceUnavailable', async () => {
      const handler = new AbortController();
      const running = runTask(
        leased(),
        inputs(async (_, { signal }) => untilAborted(signal), { timeoutMs: 5_000, handler }),
      );
      await vi.advanceTimersByTimeAsync(4_999);
      expect(handler.signal.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(handler.signal.reason).toMatchObject({ code: 'task_deadline', timeoutMs: 5_000 });
      expect((await running)?.result).toEqual({
        status: 'serviceUnavailable',
        meta: { code: 'TimeoutError', message: 'The task took longer than its deadline of 5000 ms' },
      });
      // The handler honoured its deadline: its failure is not also logged as a late result.
      expect(messages()).toEqual(['task passed its deadline; aborting its signal', 'task failed']);
    });

    it('gives a result that comes after the deadline, logged as late', async () => {
      const running = runTask(
        leased(),
        inputs(async () => void (await new Promise((resolve) => setTimeout(resolve, 7_000))), {
          timeoutMs: 5_000,
        }),
      );
      await vi.advanceTimersByTimeAsync(7_000);
      expect(await running).toEqual({ result: { status: 'success' }, tookMs: 7_000, byPrecheck: false });
      expect(messages()).toEqual([
        'task passed its deadline; aborting its signal',
        'task finished after its deadline; reporting it late',
      ]);
      expect(logLines[1]).toMatchObject({ status: 'success', timeoutMs: 5_000 });
    });

    it('disarms the deadline once the task ends', async () => {
      const handler = new AbortController();
      await runTask(
        leased(),
        inputs(async () => {}, { timeoutMs: 5_000, handler }),
      );
      await vi.advanceTimersByTimeAsync(10_000);
      expect(handler.signal.aborted).toBe(false);
      expect(messages()).toEqual([]);
    });
  });

  it('gives nothing, to be handed back, for a task whose handler fails once shutdown interrupted it', async () => {
    const handler = new AbortController();
    const shutdown = new AbortController();
    const running = runTask(
      leased(),
      inputs(async (_, { signal }) => untilAborted(signal), { handler, interrupted: shutdown.signal }),
    );
    const reason = new Error('stopping');
    shutdown.abort(reason);
    handler.abort(reason);
    expect(await running).toBeUndefined();
    expect(messages()).toEqual(['task interrupted by shutdown; handed back to the service']);
  });
});

describe('showsSourceState', () => {
  it('holds for a success, a pre-check verdict and a refusal of the source, and for nothing else', () => {
    const status = (value: TaskResult['status'], byPrecheck = false) =>
      showsSourceState({ result: { status: value }, byPrecheck });
    expect(status('success')).toBe(true);
    expect(status('systemError')).toBe(true);
    expect(status('serviceUnavailable', true)).toBe(true);
    expect(status('serviceUnavailable')).toBe(false);
    expect(status('authenticationError')).toBe(false);
    expect(status('internalError')).toBe(false);
  });
});
