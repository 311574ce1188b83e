/**
 * What connector authors use in their own tests: the reference backend in-process, a tenant on it, the connector
 * running against it, and helpers to create tasks, await their results, read what was synced and inject faults.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { createTestHarness } from 'approval-connector-kit/testing';
 * import { expect } from 'vitest';
 *
 * const harness = await createTestHarness();
 * const worker = await harness.start(new MyConnector(source));
 * await worker.syncNow();
 * expect(harness.approvals()).toHaveLength(3);
 * const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
 * expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
 * await harness.close();
 * ```
 * @module
 */

// First, so that an unsupported Node.js gets a clear error before any dependency fails on it.
import '../node-guard.js';

import { request } from 'undici';
import type { z } from 'zod';
import type { TaskResult } from '../api/index.js';
import {
  type ReferenceBackend,
  type ReferenceBackendOptions,
  ServiceError,
  startReferenceBackend,
  type Tenant,
} from '../backend/index.js';
import type { ClientOptions } from '../client/index.js';
import type { Connector } from '../connector/index.js';
import { sleep } from '../internal/wait.js';
import { type ConnectorOptions, ConnectorWorker, MemoryKeyStore } from '../worker/index.js';
import { HarnessTimeoutError } from './errors.js';

export { HarnessTimeoutError } from './errors.js';

/** Options of {@link createTestHarness}. */
export interface TestHarnessOptions {
  /** Options of the in-process reference backend. */
  backend?: ReferenceBackendOptions;
}

/** The task types a connector declares. */
export type TaskTypeOf<C extends Connector<object>> = keyof C['tasks'] & string;

/** The task data a task type's input schema takes in (before parsing), as the connector declares it. */
export type TaskInputOf<C extends Connector<object>, Type extends TaskTypeOf<C>> = z.input<
  C['tasks'][Type]['input']
>;

/**
 * A task to create, as an approver's action in the app would: one of the connector's task types, on one approval.
 * `approveComments` is required when that type's input schema requires it.
 */
export type NewTaskFor<C extends Connector<object>, Type extends TaskTypeOf<C>> = {
  /** One of the connector's task types. */
  type: Type;
  /** An approval of the tenant's system. */
  approvalId: string;
  /** The approver's credentials in plain form, sealed to the connector's key when it has `authRequired`. */
  credentials?: Record<string, unknown>;
} & (TaskInputOf<C, Type> extends { approveComments: unknown }
  ? {
      /** The approver's comment, which this task type requires. */
      approveComments: string;
    }
  : {
      /** The approver's comment. @default '' */
      approveComments?: string;
    });

/** A task as the harness created it. */
export interface CreatedTask<Type extends string = string> {
  id: string;
  type: Type;
}

/** The reference backend, one tenant on it, and the workers started against it. */
export class TestHarness {
  readonly backend: ReferenceBackend;
  /** The organization, system and tokens the connector runs as. */
  readonly tenant: Tenant;
  readonly #workers: ConnectorWorker<Connector<object>>[] = [];

  constructor(backend: ReferenceBackend, tenant: Tenant) {
    this.backend = backend;
    this.tenant = tenant;
  }

  /** The faults of the backend: `harness.faults.inject({path: '/v2/rawapprovals', fault: {type: 'status', status: 503}})`. */
  get faults(): ReferenceBackend['faults'] {
    return this.backend.faults;
  }

  /** Client options for the tenant's system: fast retries, no waiting in tests. */
  serviceOptions(overrides: Partial<ClientOptions> = {}): ClientOptions {
    return {
      baseUrl: this.backend.url,
      token: this.tenant.connectorToken,
      retry: { retries: 2, baseDelayMs: 1 },
      ...overrides,
    };
  }

  /**
   * Connector options suited to tests: the tenant's service, a silent logger, keys in memory, no schedules and no
   * sync after tasks (call `syncNow()`; `sync: { afterTaskMs: 0 }` turns that one on), fast polling, a short
   * shutdown, and the push ingress (of a connector with a push path) on a free port. `overrides` are merged over
   * them.
   */
  connectorOptions(overrides: Partial<ConnectorOptions> = {}): ConnectorOptions {
    return {
      service: this.serviceOptions(),
      logger: { level: 'silent' },
      keyStore: new MemoryKeyStore(),
      ...overrides,
      sync: {
        runOnStart: false,
        schedule: 3_600_000,
        reconcileSchedule: false,
        afterTaskMs: false,
        ...overrides.sync,
      },
      poller: { idleMinMs: 5, idleMaxMs: 20, ...overrides.poller },
      shutdown: { graceMs: 2_000, forceMs: 1_000, ...overrides.shutdown },
      push: overrides.push === false ? false : { port: 0, ...overrides.push },
    };
  }

  /**
   * Builds a worker for the connector with {@link connectorOptions} (`overrides` merged over them), starts it, and
   * stops it at {@link close}.
   */
  async start<C extends Connector<object>>(
    connector: C,
    overrides: Partial<ConnectorOptions> = {},
  ): Promise<ConnectorWorker<C>> {
    const worker = new ConnectorWorker(connector, this.connectorOptions(overrides));
    this.#workers.push(worker);
    await worker.start();
    return worker;
  }

  /**
   * Creates a task for the worker's connector, as an approver's action in the app would. `type` is one of the
   * connector's task types, and `approveComments` is required when that type's input schema requires it: both
   * are checked when the test compiles.
   */
  createTask<C extends Connector<object>, Type extends TaskTypeOf<C>>(
    _worker: ConnectorWorker<C>,
    input: NewTaskFor<C, Type>,
  ): CreatedTask<Type> {
    const task = this.backend.createTask({ systemId: this.tenant.system.id, ...input });
    return { id: task.id, type: input.type };
  }

  /**
   * Waits until the worker has reported the result of a task {@link createTask} created, and returns it. Throws a
   * {@link HarnessTimeoutError} when none comes within `timeoutMs`, and the backend's not-found `ServiceError` for a
   * task it does not hold.
   * @param timeoutMs how long to wait before failing, in milliseconds (default 10000)
   */
  async awaitResult(task: CreatedTask, timeoutMs = 10_000): Promise<TaskResult> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const held = this.backend.getTask(task.id);
      if (held === undefined) throw ServiceError.notFound('tasks', task.id);
      if (held.result !== undefined) return held.result;
      if (performance.now() > deadline) {
        throw new HarnessTimeoutError(
          `Task ${task.id} has no result after ${timeoutMs} ms (status ${held.status})`,
          timeoutMs,
        );
      }
      await sleep(5);
    }
  }

  /**
   * Delivers an event to the worker's push ingress over HTTP, as the source would (`body` an object is sent as
   * JSON), and waits until the worker has looked up and pushed what it names, or dropped it. Resolves with the
   * status the ingress answered: 202 taken, 200 a duplicate, 401 refused. Throws when the worker has no push path.
   */
  async deliver<C extends Connector<object>>(
    worker: ConnectorWorker<C>,
    delivery: { body: string | Buffer | object; headers?: Record<string, string> },
  ): Promise<number> {
    const url = worker.pushHealth?.url;
    if (url === undefined)
      throw new Error('The worker has no push ingress: its connector declares no push path');
    const json = typeof delivery.body === 'object' && !Buffer.isBuffer(delivery.body);
    const { statusCode, body } = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...delivery.headers },
      body: json ? JSON.stringify(delivery.body) : (delivery.body as string | Buffer),
    });
    await body.dump();
    await worker.pushSettled();
    return statusCode;
  }

  /** The task as the backend holds it: status, deliveries, result. */
  task(taskId: string): ReturnType<ReferenceBackend['getTask']> {
    return this.backend.getTask(taskId);
  }

  /** Every approval the tenant's system holds, as synced. */
  approvals(): ReturnType<ReferenceBackend['listApprovals']> {
    return this.backend.listApprovals(this.tenant.system.id);
  }

  /** The connector state the service holds for the tenant's system. */
  state(): ReturnType<ReferenceBackend['getState']> {
    return this.backend.getState(this.tenant.system.id);
  }

  /** Stops every worker the harness started, then the backend. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.stop()));
    await this.backend.close();
  }
}

/** Starts a reference backend in-process with one tenant on it. Close it with `harness.close()`. */
export async function createTestHarness(options: TestHarnessOptions = {}): Promise<TestHarness> {
  const backend = await startReferenceBackend(options.backend);
  return new TestHarness(backend, backend.createTenant());
}
