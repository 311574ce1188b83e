import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { TaskResultStatus } from '../../src/api/index.js';
import {
  Connector,
  incremental,
  ServiceUnavailableError,
  SystemError,
  type TaskContext,
  task,
} from '../../src/connector/index.js';
import type { CreatedTask, TestHarness } from '../../src/testing/index.js';
import {
  type ConnectorOptions,
  type ConnectorWorker,
  MemoryKeyStore,
  runConnector,
} from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, type MemorySource, taskInputs } from './support/memory-source.js';
import { RewritingProxy } from './support/rewriting-proxy.js';

let harness: TestHarness;
let source: MemorySource;

beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1', 'PO-2', 'locked'] })));

async function startSynced(
  overrides: Partial<ConnectorOptions> = {},
): Promise<ConnectorWorker<MemoryConnector>> {
  const worker = await harness.start(new MemoryConnector(source), overrides);
  await worker.syncNow();
  return worker;
}

let proxy: RewritingProxy;

/** Puts a RewritingProxy in front of the backend, as `proxy`, for each test of the describe that calls it. */
function proxyAroundEachTest(): void {
  beforeEach(async () => {
    proxy = await RewritingProxy.start(harness.backend.url);
  });
  afterEach(async () => {
    await proxy.close();
  });
}

/** Holds every Get task at the proxy until `released`, counting those it holds. */
function holdGetTasks(released: Promise<void>): { count: number } {
  const held = { count: 0 };
  proxy.hold = ({ method, path }) => {
    if (method !== 'GET' || path !== '/v2/connector/tasks') return;
    held.count += 1;
    return released;
  };
  return held;
}

/** Expects the task to end in internalError with `code`, its handler never run. */
async function expectRefused(
  task: CreatedTask,
  worker: { connector: { actions: unknown[] } },
  code: string,
): Promise<void> {
  expect(await harness.awaitResult(task)).toMatchObject({ status: 'internalError', meta: { code } });
  expect(worker.connector.actions).toEqual([]);
}

describe('running tasks', () => {
  it('runs a task once with its typed input and idempotency key, and reports success', async () => {
    const worker = await startSynced();
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1', approveComments: 'fine' });
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    expect(worker.connector.actions).toEqual([{ type: 'approve', approvalId: 'PO-1', key: task.id }]);
    expect(harness.task(task.id)).toMatchObject({ status: 'completed', deliveries: 1 });
  });

  it.each([
    ['the kit’s AuthenticationError', undefined, 'locked', 'authenticationError', 'authentication'],
    [
      'the kit’s ServiceUnavailableError',
      new ServiceUnavailableError('SAP is down'),
      'PO-1',
      'serviceUnavailable',
      'service_unavailable',
    ],
    ['the kit’s SystemError', new SystemError('PO locked by another user'), 'PO-1', 'systemError', 'system'],
    [
      'a source 401',
      Object.assign(new Error('Unauthorized'), { status: 401 }),
      'PO-1',
      'authenticationError',
      'HTTP_401',
    ],
    [
      'a source 503',
      Object.assign(new Error('busy'), { statusCode: 503 }),
      'PO-1',
      'serviceUnavailable',
      'HTTP_503',
    ],
    [
      'a source 429',
      { response: { status: 429 }, message: 'slow down' },
      'PO-1',
      'serviceUnavailable',
      'HTTP_429',
    ],
    [
      'a source 404',
      Object.assign(new Error('no such issue'), { status: 404 }),
      'PO-1',
      'systemError',
      'HTTP_404',
    ],
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'PO-1',
      'serviceUnavailable',
      'ECONNREFUSED',
    ],
    ['anything else', new TypeError('undefined is not a function'), 'PO-1', 'internalError', 'TypeError'],
  ])('maps %s to %s', async (_, error, approvalId, status, code) => {
    const worker = await startSynced();
    worker.connector.failWith = error;
    const task = harness.createTask(worker, { type: 'approve', approvalId });
    const result = await harness.awaitResult(task);
    expect(result).toMatchObject({ status, meta: { code } });
    expect(JSON.stringify(result.meta)).not.toMatch(/at .*\.ts:\d+/); // no stack
  });

  it('reports internalError without running the handler when the task data fails its schema', async () => {
    const worker = await startSynced();
    // `reject` requires comments, and empty ones (the service's default) fail its schema.
    const task = harness.createTask(worker, { type: 'reject', approvalId: 'PO-1', approveComments: '' });
    await expectRefused(task, worker, 'task_data_invalid');
  });
});

describe('what a task declaration gets', () => {
  /** Records what its pre-check and its handler were given; its pre-check refuses PO-1. */
  class Checked extends Connector {
    readonly given: { step: string; input: unknown; context: TaskContext }[] = [];
    readonly source = incremental({ changes: (window) => this.system.changes(window) });
    readonly tasks = {
      approve: task({
        input: z.object({
          approval: z.object({ id: z.string() }),
          approveComments: z.string().transform((comments) => comments.toUpperCase()),
        }),
        precheck: async (input, context) => {
          this.given.push({ step: 'precheck', input, context });
          if (input.approval.id !== 'PO-1') return true;
          return {
            status: 'systemError',
            meta: { code: 'already_decided', message: 'decided in the source' },
          };
        },
        run: async (input, context) => {
          this.given.push({ step: 'run', input, context });
        },
      }),
    };

    constructor(readonly system: MemorySource) {
      super();
    }
  }

  it('gives precheck the validated input, not the raw task, and the same context as its handler', async () => {
    const worker = await harness.start(new Checked(source));
    await worker.syncNow();
    const refused = harness.createTask(worker, {
      type: 'approve',
      approvalId: 'PO-1',
      approveComments: 'late',
    });
    expect(await harness.awaitResult(refused)).toEqual({
      status: 'systemError',
      meta: { code: 'already_decided', message: 'decided in the source' },
    });
    const passed = harness.createTask(worker, {
      type: 'approve',
      approvalId: 'PO-2',
      approveComments: 'fine',
    });
    expect(await harness.awaitResult(passed)).toEqual({ status: 'success' });

    const { given } = worker.connector;
    expect(given.map(({ step, input }) => ({ step, input }))).toEqual([
      // The schema's output: the approval stripped to what it declares, the comments transformed.
      { step: 'precheck', input: { approval: { id: 'PO-1' }, approveComments: 'LATE' } },
      { step: 'precheck', input: { approval: { id: 'PO-2' }, approveComments: 'FINE' } },
      { step: 'run', input: { approval: { id: 'PO-2' }, approveComments: 'FINE' } },
    ]);
    expect(given[0]?.context).toMatchObject({
      taskId: refused.id,
      type: 'approve',
      idempotencyKey: refused.id,
    });
    expect(given[2]?.context).toBe(given[1]?.context);
  });

  it("classifies a handler's failure by the connector's classifyFailure first, then by the kit's table", async () => {
    class Classifying extends MemoryConnector {
      override classifyFailure(error: unknown): TaskResultStatus | undefined {
        return error instanceof RangeError ? 'systemError' : undefined;
      }
    }
    const worker = await harness.start(new Classifying(source));
    await worker.syncNow();
    worker.connector.failWith = new RangeError('quantity too large');
    const own = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    expect(await harness.awaitResult(own)).toEqual({
      status: 'systemError',
      meta: { code: 'RangeError', message: 'quantity too large' },
    });
    worker.connector.failWith = Object.assign(new Error('Unauthorized'), { status: 401 });
    const kits = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
    expect(await harness.awaitResult(kits)).toMatchObject({
      status: 'authenticationError',
      meta: { code: 'HTTP_401' },
    });
  });
});

describe('lease depth, over HTTP', () => {
  proxyAroundEachTest();

  it('sends a Get task for each free slot at once, leases no more tasks than it has slots, and runs them together', async () => {
    const ids = ['PO-1', 'PO-2', 'PO-3', 'PO-4', 'PO-5'];
    for (const id of ids) source.put(id, '2026-05-01T10:00:00.000Z');
    const released = Promise.withResolvers<void>();
    const held = holdGetTasks(released.promise);
    const gate = Promise.withResolvers<void>();
    const worker = await startSynced({
      service: harness.serviceOptions({ baseUrl: proxy.url }),
      poller: { concurrency: 4 },
    });
    worker.connector.gate = gate.promise;
    // Held at the proxy until all four are there: a poller sending one at a time never gets past this.
    await vi.waitFor(() => expect(held.count).toBe(4), { timeout: 10_000 });

    const tasks = ids.map((approvalId) => harness.createTask(worker, { type: 'approve', approvalId }));
    released.resolve();
    // The four requests lease four tasks, whose handlers now all wait at the gate; the fifth task waits for a slot.
    await vi.waitFor(
      () => expect(tasks.filter((task) => harness.task(task.id)?.deliveries === 1)).toHaveLength(4),
      { timeout: 10_000 },
    );
    expect(held.count).toBe(4);
    expect(tasks.filter((task) => harness.task(task.id)?.deliveries === 0)).toHaveLength(1);

    gate.resolve();
    for (const task of tasks) expect(await harness.awaitResult(task, 10_000)).toEqual({ status: 'success' });
    expect(worker.connector.actions.map((action) => action.approvalId).sort()).toEqual(ids);
    await worker.stop();
  });
});

describe('the connection pool, over HTTP', () => {
  proxyAroundEachTest();

  it.each([20, 40])(
    'has a connection for each of %i tasks at once, so that the pool does not hold the poller back',
    async (concurrency) => {
      const released = Promise.withResolvers<void>();
      const held = holdGetTasks(released.promise);
      const worker = await harness.start(new MemoryConnector(source), {
        service: harness.serviceOptions({ baseUrl: proxy.url }),
        sync: { enabled: false },
        poller: { concurrency },
      });
      // A Get task for every slot reaches the service at once: a pool of 16 connections let only 16 through.
      await vi.waitFor(() => expect(held.count).toBe(concurrency), { timeout: 10_000 });
      released.resolve();
      await worker.stop();
    },
  );
});

describe('tasks that break the contract', () => {
  proxyAroundEachTest();
  const isGetTask = ({ method, path }: { method: string; path: string }) =>
    method === 'GET' && path === '/v2/connector/tasks';

  it('answers internalError task_data_invalid to a task whose data fails the answer schema, instead of never answering it', async () => {
    proxy.rewrite = (request, body) => {
      const task = (body as { data?: { task?: { data: { approval: unknown } } | null } }).data?.task;
      if (isGetTask(request) && task) task.data.approval = 42;
      return body;
    };
    const worker = await startSynced({ service: harness.serviceOptions({ baseUrl: proxy.url }) });
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    expect(await harness.awaitResult(task, 5_000)).toEqual({
      status: 'internalError',
      meta: { code: 'task_data_invalid', message: expect.stringMatching(/"approve": data\.approval: /) },
    });
    expect(harness.task(task.id)).toMatchObject({ status: 'completed', deliveries: 1 });
    expect(worker.connector.actions).toEqual([]);
    await worker.stop();
  });

  it('logs an answer with no usable task id and backs off, without stopping, then answers the next task', async () => {
    let broken = true;
    proxy.rewrite = (request, body) =>
      broken && isGetTask(request)
        ? { status: 'success', data: { task: { type: 'approve', data: { approval: { id: 'PO-1' } } } } }
        : body;
    const lines: { msg: string; retryInMs?: number; err?: { code?: string } }[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    const worker = await startSynced({
      service: harness.serviceOptions({ baseUrl: proxy.url }),
      logger: { level: 'warn', destination },
      // One slot, so one request at a time from the start: each failure is one line.
      poller: { concurrency: 1, idleMinMs: 5, idleMaxMs: 1_000 },
      random: () => 0,
    });
    await vi.waitFor(() => expect(lines.length).toBeGreaterThanOrEqual(4));
    // Each wait is half its ceiling with no jitter: the ceiling doubles from idleMinMs after each failed poll.
    expect(lines.slice(0, 4)).toEqual(
      [3, 5, 10, 20].map((retryInMs) =>
        expect.objectContaining({
          msg: 'polling for tasks failed; retrying',
          retryInMs,
          err: expect.objectContaining({ code: 'invalid_response' }),
        }),
      ),
    );
    const pollErrors = /^approval_connector_poll_errors_total (\d+)$/m.exec(
      (await worker.metrics.render()).body,
    );
    expect(Number(pollErrors?.[1])).toBeGreaterThanOrEqual(4);
    expect(worker.lifecycle).toBe('running');

    broken = false;
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    await worker.stop();
  });
});

describe('never running an action twice', () => {
  it('does not run a task delivered twice while it runs', async () => {
    const worker = await startSynced({ poller: { concurrency: 4 } });
    const gate = Promise.withResolvers<void>();
    worker.connector.gate = gate.promise;
    harness.faults.inject({ method: 'GET', path: '/v2/connector/tasks', fault: { type: 'duplicateTask' } });
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await vi.waitFor(() => expect(harness.task(task.id)?.deliveries).toBeGreaterThanOrEqual(2));
    gate.resolve();
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    expect(worker.connector.actions).toHaveLength(1);
  });

  it('does not run a task again when its lease runs out while it runs', async () => {
    const worker = await startSynced();
    const gate = Promise.withResolvers<void>();
    worker.connector.gate = gate.promise;
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
    await worker.connector.atGate;
    harness.backend.expireLeases({ taskId: task.id });
    await vi.waitFor(() => expect(harness.task(task.id)?.deliveries).toBe(2));
    gate.resolve();
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    expect(worker.connector.actions).toHaveLength(1);
  });

  it('reports again, without running again, when the answer to its result report is lost', async () => {
    const worker = await startSynced({ service: harness.serviceOptions({ retry: { retries: 0 } }) });
    harness.faults.inject({
      method: 'PATCH',
      path: '/v2/connector/tasks/:taskId',
      fault: { type: 'dropAnswer' },
    });
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    // The retried report meets 409 (already completed), which counts as acknowledged.
    await vi.waitFor(() => expect(harness.faults.list()).toEqual([]));
    expect(worker.connector.actions).toHaveLength(1);
  });
});

describe('credentials and keys', () => {
  class CredentialConnector extends MemoryConnector {
    override readonly authRequired = true;
  }

  it('opens a task sealed to the previous key after rotation, and one sealed to the new key', async () => {
    const keyStore = new MemoryKeyStore();
    const day = 86_400_000;
    let now = Date.now();
    const clock = () => now;
    const first = await harness.start(new CredentialConnector(source), {
      keyStore,
      now: clock,
      poller: { enabled: false },
    });
    await first.syncNow();
    const oldKey = harness.backend.getConnector(harness.tenant.system.id).publicKey;
    const sealedToOld = harness.createTask(first, {
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { username: 'ada', password: 'old-key-secret' },
    });
    await first.stop();

    // 24 days later, past the rotation margin: a new worker rotates and registers a new key.
    now += 24 * day;
    const second = await harness.start(new CredentialConnector(source), {
      keyStore,
      now: clock,
    });
    const newKey = harness.backend.getConnector(harness.tenant.system.id).publicKey;
    expect(newKey).not.toBe(oldKey);
    const sealedToNew = harness.createTask(second, {
      type: 'approve',
      approvalId: 'PO-2',
      credentials: { username: 'ada', password: 'new-key-secret' },
    });

    expect(await harness.awaitResult(sealedToOld)).toEqual({ status: 'success' });
    expect(await harness.awaitResult(sealedToNew)).toEqual({ status: 'success' });
    expect(second.connector.actions.map((action) => action.approvalId).sort()).toEqual(['PO-1', 'PO-2']);
  });

  it('registers a new public key with the service when the running connector rotates its key', async () => {
    // A key replaced a second after it is made: the running connector, not a restart, must rotate it.
    const worker = await harness.start(new CredentialConnector(source), {
      keys: { keyLifetimeMs: 3_000, rotationMarginMs: 2_000 },
    });
    await worker.syncNow();
    const registration = () => harness.backend.getConnector(harness.tenant.system.id);
    const first = registration().publicKey;
    await vi.waitFor(() => expect(registration().publicKey).not.toBe(first), { timeout: 5_000 });
    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { username: 'ada', password: 'sealed-to-a-rotated-key' },
    });
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    expect(worker.connector.actions).toHaveLength(1);
  });

  it('reports internalError when credentials cannot be opened', async () => {
    const keyStore = new MemoryKeyStore();
    const worker = await harness.start(new CredentialConnector(source), {
      keyStore,
      poller: { enabled: false },
    });
    await worker.syncNow();
    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { password: 'x' },
    });
    await worker.stop();
    // Another worker with a key store that lost the key (a fresh one) cannot open it.
    const other = await harness.start(new CredentialConnector(source), {
      keyStore: new MemoryKeyStore(),
    });
    await expectRefused(task, other, 'credentials_unreadable');
  });
});

describe('shutdown', () => {
  // A handler that never finishes by itself: only the abort after the grace time ends it, with a failure.
  class Stuck extends MemoryConnector {
    override readonly tasks = {
      reject: task({ input: taskInputs.reject, run: async () => {} }),
      approve: task({
        input: taskInputs.approve,
        run: (_input, { signal }) =>
          new Promise<void>((_, reject) =>
            signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
          ),
      }),
    };
  }

  it('on SIGTERM stops polling, lets a running task finish and report, and exits 0', async () => {
    const worker = await startSynced();
    const gate = Promise.withResolvers<void>();
    worker.connector.gate = gate.promise;
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await worker.connector.atGate;

    const signals = new EventEmitter();
    const exit = runConnector(worker, { signals: signals as never });
    signals.emit('SIGTERM', 'SIGTERM');
    await vi.waitFor(() => expect(worker.lifecycle).toBe('stopping'));
    expect(worker.ready).toBe(false);
    const waiting = harness.createTask(worker, { type: 'approve', approvalId: 'PO-2' });
    gate.resolve();
    expect(await exit).toBe(0);
    expect(worker.lifecycle).toBe('stopped');
    expect(harness.task(task.id)).toMatchObject({ status: 'completed', result: { status: 'success' } });
    // Polling had stopped: the task created during shutdown was never taken.
    expect(harness.task(waiting.id)).toMatchObject({ status: 'waiting', deliveries: 0 });
  });

  it('hands back a task still running after the grace time, so the service offers it again', async () => {
    const worker = await harness.start(new Stuck(source), { shutdown: { graceMs: 20, forceMs: 1_000 } });
    await worker.syncNow();
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await vi.waitFor(() => expect(harness.task(task.id)?.status).toBe('leased'));
    await worker.stop();
    expect(worker.lifecycle).toBe('stopped');
    expect(harness.task(task.id)?.result).toBeUndefined();
    harness.backend.expireLeases({ taskId: task.id });
    expect(harness.task(task.id)?.status).toBe('waiting');
  });
});

describe('logs', () => {
  // A handler that logs the approver's password it was given, three ways.
  class LoggingConnector extends MemoryConnector {
    override readonly authRequired = true;
    override readonly tasks = {
      reject: task({ input: taskInputs.reject, run: async () => {} }),
      approve: task({
        input: taskInputs.approve,
        run: async (_input, context) => {
          const revealed = context.credentials?.password?.reveal();
          context.logger.error({ err: new Error(`SAP refused the password ${revealed}`) }, 'login failed');
          context.logger.warn(`retrying with ${revealed}`);
          context.logger.info({ sent: JSON.stringify({ user: 'ada', password: revealed }) }, 'sent');
        },
      }),
    };
  }

  it('carry none of the secrets used: tokens, passwords, decrypted credentials', async () => {
    let logged = '';
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    class Leaky extends MemoryConnector {
      override readonly authRequired = true;
    }
    const worker = await harness.start(new Leaky(source), {
      logger: { level: 'trace', destination },
      keyStore: new MemoryKeyStore(),
    });
    await worker.syncNow();
    worker.connector.failWith = Object.assign(new Error('login failed for password hunter2-credential'), {
      status: 401,
    });
    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { username: 'ada', password: 'hunter2-credential' },
    });
    const result = await harness.awaitResult(task);
    expect(result.status).toBe('authenticationError');
    expect(JSON.stringify(result)).not.toContain('hunter2-credential');
    await worker.stop();
    expect(logged.length).toBeGreaterThan(0);
    expect(logged).toContain('task failed');
    expect(logged).not.toContain('hunter2-credential');
    expect(logged).not.toContain(harness.tenant.connectorToken);
  });

  it("does not write the approver's password that a handler's log line quotes", async () => {
    const password = 'pw-Ada-0021';
    let logged = '';
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    const worker = await harness.start(new LoggingConnector(source), {
      logger: { level: 'info', destination },
    });
    await worker.syncNow();
    const task = harness.createTask(worker, {
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { username: 'ada', password },
    });
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    await worker.stop();
    const lines = logged
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'login failed',
        err: expect.objectContaining({ message: 'SAP refused the password [redacted]' }),
      }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'retrying with [redacted]' }));
    expect(logged).not.toContain(password);
  });
});
