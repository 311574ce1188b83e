/**
 * The task checks' bench: a stage with requests synced into the service, and a worker taking tasks whose pre-checks
 * and handlers the battery watches, and at whose start it can make the source fail.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { TaskResult } from '../api/index.js';
import type { Connector, PrecheckVerdict, TaskDeclaration } from '../connector/index.js';
import type { ConnectorOptions } from '../worker/index.js';
import { type CheckEnvironment, expectRun } from './check.js';
import type { RestoreSource, SourceFailure } from './driver.js';
import { QUICK_SHUTDOWN, type Stage, type StagedWorker } from './stage.js';

/** A failure the battery switches on while one task's pre-check, or its handler, runs, and off when it settles. */
export interface FailurePlan {
  failure: SourceFailure;
  /** `precheck`: while the pre-check runs; `action`: while the handler runs, after a pre-check that passed. */
  operation: 'precheck' | 'action';
  /** For `slow`: how long each call takes. */
  delayMs?: number;
}

/** What the battery saw of one call of a handler or a pre-check. */
export interface HandlerCall {
  kind: 'run' | 'precheck';
  type: string;
  taskId: string;
  /** The credentials the handler got, revealed. */
  credentials?: Record<string, string>;
  verdict?: PrecheckVerdict;
  settled: boolean;
}

/**
 * Replaces the connector's task declarations by ones that record each call of their pre-check and handler, and run
 * each inside `around`, which can make the source fail while it runs.
 */
function watchHandlers(
  connector: Connector<object>,
  calls: HandlerCall[],
  around: <T>(taskId: string, operation: FailurePlan['operation'], body: () => Promise<T>) => Promise<T>,
): Connector<object> {
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
          return await around(context.taskId, 'action', () => declared.run(input, context));
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
          call.verdict = await around(context.taskId, 'precheck', async () =>
            precheck.call(declared, input, context),
          );
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
export class TaskBench {
  readonly stage: Stage;
  readonly type: string;
  readonly calls: HandlerCall[] = [];
  readonly logs: string[] = [];
  /** The data of each task as Get task delivered it, by task id. */
  readonly delivered = new Map<string, unknown>();
  readonly #credentials = new Map<string, Record<string, string>>();
  /** The failure to switch on while a task's pre-check or handler runs, by task id. */
  readonly #plans = new Map<string, FailurePlan>();
  /** Every failure switched on and not yet restored (a handler that never settles keeps its own on). */
  readonly #restores = new Set<RestoreSource>();

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
    // A worker is a process: a connector instance of its own.
    const connector = watchHandlers(this.stage.newConnector(), this.calls, (taskId, operation, body) =>
      this.#around(taskId, operation, body),
    );
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

  /**
   * Makes the source fail as `plan` says while the task's pre-check or handler runs (switched on as it starts, and
   * off as it settles). Set right after {@link createTask}, before the worker can lease the task.
   */
  plan(taskId: string, plan: FailurePlan): void {
    this.#plans.set(taskId, plan);
  }

  async #around<T>(taskId: string, operation: FailurePlan['operation'], body: () => Promise<T>): Promise<T> {
    const plan = this.#plans.get(taskId);
    if (plan?.operation !== operation) return body();
    const scope = {
      operation,
      times: 'until-restored' as const,
      ...(plan.delayMs === undefined ? {} : { delayMs: plan.delayMs }),
    };
    const restore = await this.stage.driver.fail?.(plan.failure, scope);
    if (restore !== undefined) this.#restores.add(restore);
    try {
      return await body();
    } finally {
      if (restore !== undefined && this.#restores.delete(restore)) await restore();
    }
  }

  /** Restores the source from every failure still on: at the end of a check, whatever its handlers did. */
  async restoreAll(): Promise<void> {
    const restores = [...this.#restores];
    this.#restores.clear();
    for (const restore of restores) await restore();
  }

  /** The bench's task type as the connector declares it. */
  declaration(): TaskDeclaration | undefined {
    return this.stage.newConnector().tasks[this.type];
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

export async function bench(environment: CheckEnvironment, type: string | undefined): Promise<TaskBench> {
  return new TaskBench(await environment.stage(), type ?? '');
}

export const show = (result: TaskResult) =>
  result.status === 'success' ? 'success' : `${result.status} (${JSON.stringify(result.meta ?? {})})`;
