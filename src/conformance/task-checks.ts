/**
 * The task checks, run for every declared task type: a task created as an approver's action would be, carried out
 * by a worker whose handlers the battery watches, with the source failing as the driver can make it fail.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { TaskResult, TaskResultStatus } from '../api/index.js';
import { IntegrationClient } from '../client/index.js';
import type { Connector, PrecheckVerdict, TaskDeclaration } from '../connector/index.js';
import { HarnessTimeoutError } from '../testing/index.js';
import type { ConnectorOptions } from '../worker/index.js';
import { type Check, type CheckEnvironment, expectRun, requires } from './check.js';
import type { SourceFailure } from './driver.js';
import { ConformanceFailure } from './report.js';
import { QUICK_SHUTDOWN, type Stage, type StagedWorker } from './stage.js';

/** The status the failure table (docs/failure-mapping.md) documents for a handler failing each way. */
export const FAILURE_STATUS: Readonly<Record<SourceFailure, TaskResultStatus>> = {
  unavailable: 'serviceUnavailable',
  rateLimited: 'serviceUnavailable',
  unreachable: 'serviceUnavailable',
  unauthorized: 'authenticationError',
  forbidden: 'authenticationError',
  refused: 'systemError',
  hang: 'serviceUnavailable',
};

/** How long after a task's deadline its handler may take to give up, in milliseconds. */
const SETTLE_BOUND_MS = 2_000;

/** What the battery saw of one call of a handler or a pre-check. */
interface HandlerCall {
  kind: 'run' | 'precheck';
  type: string;
  taskId: string;
  /** The credentials the handler got, revealed. */
  credentials?: Record<string, string>;
  verdict?: PrecheckVerdict;
  settled: boolean;
}

/** Replaces the connector's task declarations by ones that record each call of their pre-check and handler. */
function watchHandlers(connector: Connector<object>, calls: HandlerCall[]): Connector<object> {
  const watched: Record<string, TaskDeclaration> = {};
  for (const [type, declared] of Object.entries(connector.tasks)) {
    const declaration: TaskDeclaration = {
      input: declared.input,
      run: async (input, context) => {
        const call: HandlerCall = { kind: 'run', type, taskId: context.taskId, settled: false };
        if (context.credentials !== undefined) {
          call.credentials = Object.fromEntries(
            Object.entries(context.credentials).map(([key, secret]) => [key, secret.reveal()]),
          );
        }
        calls.push(call);
        try {
          return await declared.run(input, context);
        } finally {
          call.settled = true;
        }
      },
    };
    const { precheck } = declared;
    if (precheck !== undefined) {
      declaration.precheck = async (input, context) => {
        const call: HandlerCall = { kind: 'precheck', type, taskId: context.taskId, settled: false };
        calls.push(call);
        try {
          call.verdict = await precheck.call(declared, input, context);
          return call.verdict;
        } finally {
          call.settled = true;
        }
      };
    }
    watched[type] = declaration;
  }
  Object.defineProperty(connector, 'tasks', { value: watched, configurable: true, writable: true });
  return connector;
}

/** A stage with requests synced into the service, and a worker taking tasks whose handlers are watched. */
class TaskBench {
  readonly stage: Stage;
  readonly type: string;
  readonly calls: HandlerCall[] = [];
  readonly logs: string[] = [];
  /** The data of each task as Get task delivered it, by task id. */
  readonly delivered = new Map<string, unknown>();
  readonly #credentials = new Map<string, Record<string, string>>();

  constructor(stage: Stage, type: string) {
    this.stage = stage;
    this.type = type;
  }

  /** Creates `count` requests and syncs them into the service. */
  async requests(environment: CheckEnvironment, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index += 1) ids.push(await this.stage.create(environment.title()));
    await expectRun(this.stage.syncRun(), 'the sync run that brings the requests into the service');
    return ids;
  }

  /** Starts a worker taking tasks, its handlers watched and its log lines kept. */
  async worker(
    options: Partial<ConnectorOptions> = {},
    crashOn?: (path: string, method: string) => boolean,
  ): Promise<StagedWorker> {
    const connector = watchHandlers(this.stage.subject.connector(this.stage.driver), this.calls);
    return this.stage.start({
      connector,
      options: {
        poller: { enabled: true, ...options.poller },
        ...(crashOn === undefined ? {} : { shutdown: QUICK_SHUTDOWN }),
        logger: { level: 'trace', destination: { write: (line: string) => void this.logs.push(line) } },
        ...options,
      },
      listener: {
        request: (request, wire) => {
          if (crashOn?.(request.path, request.method)) wire.cut();
        },
        response: (request, _status, body) => {
          const task = (body as { data?: { task?: { id?: unknown; data?: unknown } } } | undefined)?.data
            ?.task;
          if (request.method === 'GET' && typeof task?.id === 'string')
            this.delivered.set(task.id, task.data);
        },
      },
    });
  }

  /** The credentials a task for this approver carries, when the connector has `authRequired`. */
  credentials(approver: string): Record<string, string> {
    let credentials = this.#credentials.get(approver);
    if (credentials === undefined) {
      credentials = this.stage.driver.credentials?.(approver) ?? {
        username: 'conformance-user',
        password: `pw-${randomBytes(12).toString('hex')}`,
      };
      this.#credentials.set(approver, credentials);
    }
    return credentials;
  }

  /** Creates a task of the bench's type on an approval, as an approver's action would. */
  createTask(approvalId: string, approveComments = 'Approved in a conformance check'): string {
    const { harness } = this.stage;
    const approval = harness.approvals().find((held) => held.id === approvalId);
    const auth = harness.backend.getConnector(harness.tenant.system.id).authRequired;
    return harness.backend.createTask({
      systemId: harness.tenant.system.id,
      type: this.type,
      approvalId,
      approveComments,
      ...(auth ? { credentials: this.credentials(approval?.approver ?? '') } : {}),
    }).id;
  }

  result(taskId: string, timeoutMs?: number): Promise<TaskResult> {
    return this.stage.harness.awaitResult({ id: taskId, type: this.type }, timeoutMs);
  }

  runsOf(taskId: string): HandlerCall[] {
    return this.calls.filter((call) => call.kind === 'run' && call.taskId === taskId);
  }

  /** The source's record of a request now, for a before-and-after comparison. */
  async record(id: string): Promise<unknown> {
    return (await this.stage.driver.holds()).find((held) => held.id === id);
  }

  async actions(id: string): Promise<number | undefined> {
    return this.stage.driver.actions?.(id);
  }
}

async function bench(environment: CheckEnvironment, type: string | undefined): Promise<TaskBench> {
  return new TaskBench(await environment.stage(), type ?? '');
}

const show = (result: TaskResult) =>
  result.status === 'success' ? 'success' : `${result.status} (${JSON.stringify(result.meta ?? {})})`;

export const taskChecks: Check[] = [
  {
    name: 'tasks.success',
    title: 'a task on an open request runs its handler once and succeeds',
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 1);
      const before = await tasks.actions(id);
      await tasks.worker();
      const taskId = tasks.createTask(id);
      const result = await tasks.result(taskId);
      if (result.status !== 'success') {
        throw new ConformanceFailure('success', show(result));
      }
      const runs = tasks.runsOf(taskId).length;
      if (runs !== 1) throw new ConformanceFailure('the handler to run once', `it ran ${runs} times`);
      const after = await tasks.actions(id);
      if (before !== undefined && after !== before + 1) {
        throw new ConformanceFailure(
          'the source to record one action',
          `it recorded ${(after ?? 0) - before}`,
        );
      }
    },
  },
  {
    name: 'tasks.invalid-data',
    title:
      "data that breaks the task type's schema ends internalError with task_data_invalid; the handler never runs",
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 1);
      // A bare approval: no data the connector would have pushed.
      const bare = `conformance-bare-${Math.floor(environment.random() * 1e9).toString(36)}`;
      const client = new IntegrationClient(tasks.stage.harness.serviceOptions());
      const approver = tasks.stage.approvers[0] ?? 'conformance-approver';
      await client
        .putApprovals([
          {
            id: bare,
            schemaId: 'conformance-bare',
            approver,
            resolved: false,
            lastModified: new Date(),
            data: {},
          },
        ])
        .finally(() => client.close());
      await tasks.worker();
      const declared = tasks.stage.subject.connector(tasks.stage.driver).tasks[type ?? ''];
      for (const [approvalId, comments] of [
        [id, ''],
        [bare, ''],
        [bare, 'x'.repeat(70_000)],
      ] as const) {
        const taskId = tasks.createTask(approvalId, comments);
        const result = await tasks.result(taskId);
        const data = tasks.delivered.get(taskId);
        if (declared === undefined || data === undefined || declared.input.safeParse(data).success) continue;
        if (result.status !== 'internalError' || result.meta?.code !== 'task_data_invalid') {
          throw new ConformanceFailure('internalError with meta.code task_data_invalid', show(result));
        }
        if (tasks.runsOf(taskId).length > 0) {
          throw new ConformanceFailure('the handler never to run on invalid data', 'it ran');
        }
        return;
      }
      requires(false, "no task data the service can send breaks this task type's schema");
    },
  },
  {
    name: 'tasks.failures',
    title: 'each failure the driver can provoke lands in the status the failure table documents',
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const failures = (tasks.stage.driver.failures ?? []).filter((failure) => failure !== 'hang');
      requires(
        tasks.stage.driver.fail !== undefined && failures.length > 0,
        'the driver provokes no failures (fail() and failures)',
      );
      const ids = await tasks.requests(environment, failures.length);
      await tasks.worker();
      const wrong: string[] = [];
      for (const [index, failure] of failures.entries()) {
        const restore = await tasks.stage.driver.fail?.(failure);
        try {
          const result = await tasks.result(tasks.createTask(ids[index] ?? ''));
          if (result.status !== FAILURE_STATUS[failure]) {
            wrong.push(`${failure}: expected ${FAILURE_STATUS[failure]}, got ${show(result)}`);
          }
        } finally {
          await restore?.();
        }
      }
      if (wrong.length > 0) {
        throw new ConformanceFailure('each failure in its documented status', wrong.join('; '));
      }
    },
  },
  {
    name: 'tasks.precheck',
    title:
      "a task on a request the source has resolved since does not act on it, and a pre-check's verdict is reported",
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 1);
      await tasks.stage.driver.resolve(id);
      const [record, actions] = [await tasks.record(id), await tasks.actions(id)];
      await tasks.worker();
      const taskId = tasks.createTask(id);
      const result = await tasks.result(taskId);
      const verdict = tasks.calls.find((call) => call.kind === 'precheck' && call.taskId === taskId)?.verdict;
      if (verdict !== undefined && verdict !== true) {
        if (!isDeepStrictEqual(result, verdict)) {
          throw new ConformanceFailure(`the pre-check's verdict ${show(verdict)} reported`, show(result));
        }
        if (tasks.runsOf(taskId).length > 0) {
          throw new ConformanceFailure('the handler not to run after a verdict', 'it ran');
        }
      }
      const acted =
        actions !== undefined
          ? (await tasks.actions(id)) !== actions
          : !isDeepStrictEqual(await tasks.record(id), record);
      // A pre-check may find the very decision the task asks for already taken (an earlier delivery, or the
      // approver in the source itself) and end the task `success` without acting: its verdict, reported above.
      const decidedByPrecheck = verdict !== undefined && verdict !== true;
      if (acted || (result.status === 'success' && !decidedByPrecheck)) {
        throw new ConformanceFailure(
          "no action on a request already resolved in the source, and a result other than success (unless a pre-check's verdict)",
          `${acted ? 'the source was acted on' : 'the source was left alone'}, and the task ended ${show(result)}`,
        );
      }
    },
  },
  {
    name: 'tasks.idempotent',
    title: 'a task delivered again after a crash does not act twice in the source (idempotencyKey)',
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      requires(
        tasks.stage.driver.actions !== undefined,
        'the driver has no actions(): it cannot count actions',
      );
      const [id = ''] = await tasks.requests(environment, 1);
      const before = (await tasks.actions(id)) ?? 0;
      // The first worker carries the task out and dies before its result reaches the service.
      const first = await tasks.worker(
        {},
        (path, method) => path.startsWith('/v2/connector/tasks/') && method !== 'GET',
      );
      const taskId = tasks.createTask(id);
      await first.wire.crashed;
      await tasks.stage.stop(first);
      await first.wire.idle();
      tasks.stage.harness.backend.expireLeases({ taskId });
      await tasks.worker();
      const result = await tasks.result(taskId);
      const runs = tasks.runsOf(taskId).length;
      const actions = ((await tasks.actions(id)) ?? 0) - before;
      if (actions !== 1) {
        throw new ConformanceFailure(
          'one action in the source for a task delivered twice',
          `${actions} actions (the handler ran ${runs} times; the task ended ${show(result)})`,
        );
      }
    },
  },
  {
    name: 'tasks.credentials',
    title: 'sealed credentials reach the handler, and appear in no log line, state or result',
    perTaskType: true,
    async run(environment, type) {
      requires(environment.declared.authRequired, 'the connector has no authRequired');
      const tasks = await bench(environment, type);
      const [id = ''] = await tasks.requests(environment, 2);
      await tasks.worker();
      const taskId = tasks.createTask(id);
      const result = await tasks.result(taskId);
      const approver = tasks.stage.harness.approvals().find((held) => held.id === id)?.approver ?? '';
      const credentials = tasks.credentials(approver);
      const run = tasks.runsOf(taskId)[0];
      const checked = tasks.calls.find((call) => call.taskId === taskId);
      if (checked === undefined) {
        throw new ConformanceFailure(
          'the pre-check or the handler to run',
          `neither ran; the task ended ${show(result)}`,
        );
      }
      if (run !== undefined && !isDeepStrictEqual(run.credentials, credentials)) {
        throw new ConformanceFailure(
          `the handler to get the credentials with the fields ${Object.keys(credentials).join(', ')}`,
          `it got ${run.credentials === undefined ? 'none' : `the fields ${Object.keys(run.credentials).join(', ')}, not all matching`}`,
        );
      }
      // A failing task, too: an error message is where a secret most often slips out.
      const restore = tasks.stage.driver.failures?.includes('unauthorized')
        ? await tasks.stage.driver.fail?.('unauthorized')
        : undefined;
      const failing = tasks.createTask([...tasks.stage.created][1] ?? id);
      const failed = await tasks.result(failing);
      await restore?.();
      const places = {
        'a log line': tasks.logs.join('\n'),
        'the connector state': JSON.stringify(tasks.stage.harness.state().state),
        'a task result': JSON.stringify([result, failed]),
      };
      for (const [place, text] of Object.entries(places)) {
        for (const [field, value] of Object.entries(credentials)) {
          if (value.length >= 4 && text.includes(value)) {
            throw new ConformanceFailure(
              `no credential value in ${place}`,
              `the value of "${field}" is in ${place}`,
            );
          }
        }
      }
    },
  },
  {
    name: 'tasks.deadline',
    title: "a handler whose source hangs ends serviceUnavailable at the task's deadline, and stops waiting",
    perTaskType: true,
    async run(environment, type) {
      const tasks = await bench(environment, type);
      requires(
        tasks.stage.driver.fail !== undefined && tasks.stage.driver.failures?.includes('hang'),
        "the driver cannot make the source hang (failures: ['hang'])",
      );
      const [id = ''] = await tasks.requests(environment, 1);
      const timeoutMs = 300;
      // A handler still waiting when the worker stops is the bug this check reports: the stop need not wait for it.
      await tasks.worker({ poller: { timeoutMs }, shutdown: QUICK_SHUTDOWN });
      const restore = await tasks.stage.driver.fail?.('hang');
      try {
        const taskId = tasks.createTask(id);
        const result = await tasks.result(taskId, timeoutMs + SETTLE_BOUND_MS).catch((error: unknown) => {
          if (!(error instanceof HarnessTimeoutError)) throw error;
          throw new ConformanceFailure(
            'serviceUnavailable with meta.code TimeoutError at the deadline',
            `no result ${SETTLE_BOUND_MS / 1000} s after the deadline: the handler is still waiting on the source; pass context.signal to its calls`,
          );
        });
        if (result.status !== 'serviceUnavailable' || result.meta?.code !== 'TimeoutError') {
          throw new ConformanceFailure('serviceUnavailable with meta.code TimeoutError', show(result));
        }
        // A handler that passes the signal on settles as it is aborted, before its result is reported; the bound is
        // only there so that a loaded machine is not taken for a handler that hangs.
        const calls = tasks.calls.filter((call) => call.taskId === taskId);
        for (let waited = 0; waited < SETTLE_BOUND_MS && calls.some((call) => !call.settled); waited += 50) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        if (calls.some((call) => !call.settled)) {
          throw new ConformanceFailure(
            "the handler to give up once the task's signal aborted",
            `it was still waiting ${SETTLE_BOUND_MS / 1000} s after the deadline: pass context.signal to the source's calls`,
          );
        }
      } finally {
        await restore?.();
      }
    },
  },
];
