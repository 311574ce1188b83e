/**
 * What connector authors use in their own tests: the reference backend in-process, a tenant on it, the connector
 * running against it, and helpers to create tasks, await their results, read what was synced and inject faults.
 *
 * @example
 * ```ts
 * import { createTestHarness } from 'approval-connector-kit/testing';
 *
 * const harness = await createTestHarness();
 * const connector = await harness.start((options) => new MyConnector(options));
 * await connector.syncNow();
 * expect(harness.approvals()).toHaveLength(3);
 * const task = harness.createTask({ type: 'approve', approvalId: 'PO-1' });
 * expect(await harness.awaitResult(task.id)).toEqual({ status: 'success' });
 * await harness.close();
 * ```
 * @module
 */

// First, so that an unsupported Node.js gets a clear error before any dependency fails on it.
import '../node-guard.js';

import type { TaskResult } from '../api/index.js';
import {
  type ReferenceBackend,
  type ReferenceBackendOptions,
  ServiceError,
  startReferenceBackend,
  type Tenant,
} from '../backend/index.js';
import type { ClientOptions } from '../client/index.js';
import { type ConnectorOptions, MemoryKeyStore } from '../connector/index.js';
import { sleep } from '../internal/wait.js';
import { HarnessTimeoutError } from './errors.js';

export { HarnessTimeoutError } from './errors.js';

/** Options of {@link createTestHarness}. */
export interface TestHarnessOptions {
  /** Options of the in-process reference backend. */
  backend?: ReferenceBackendOptions;
}

/** What the harness needs of a connector: any subclass of `Connector` has it. */
export interface StartableConnector {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A task as the harness created it. */
export interface CreatedTask {
  id: string;
}

/** The reference backend, one tenant on it, and the connectors started against it. */
export class TestHarness {
  readonly backend: ReferenceBackend;
  /** The organization, system and tokens the connector runs as. */
  readonly tenant: Tenant;
  readonly #connectors: StartableConnector[] = [];

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
   * Connector options suited to tests: the tenant's service, a silent logger, keys in memory, no schedules (call
   * `syncNow()`), fast polling and a short shutdown. `overrides` are merged over them.
   */
  connectorOptions(overrides: Partial<ConnectorOptions> = {}): ConnectorOptions {
    return {
      service: this.serviceOptions(),
      logger: { level: 'silent' },
      keyStore: new MemoryKeyStore(),
      ...overrides,
      sync: { runOnStart: false, schedule: 3_600_000, reconcileSchedule: false, ...overrides.sync },
      poller: { idleMinMs: 5, idleMaxMs: 20, ...overrides.poller },
      shutdown: { graceMs: 2_000, forceMs: 1_000, ...overrides.shutdown },
    };
  }

  /** Builds a connector with {@link connectorOptions}, starts it, and stops it at {@link close}. */
  async start<C extends StartableConnector>(
    create: (options: ConnectorOptions) => C,
    overrides: Partial<ConnectorOptions> = {},
  ): Promise<C> {
    const connector = create(this.connectorOptions(overrides));
    this.#connectors.push(connector);
    await connector.start();
    return connector;
  }

  /** Creates a task for the tenant's connector, as an approver's action in the app would. */
  createTask(input: {
    type: string;
    approvalId: string;
    approveComments?: string;
    credentials?: Record<string, unknown>;
  }): CreatedTask {
    const task = this.backend.createTask({ systemId: this.tenant.system.id, ...input });
    return { id: task.id };
  }

  /**
   * Waits until the connector has reported the task's result, and returns it. Throws a {@link HarnessTimeoutError}
   * when none comes within `timeoutMs`, and the backend's not-found `ServiceError` for a task it does not hold.
   * @param timeoutMs how long to wait before failing, in milliseconds (default 10000)
   */
  async awaitResult(taskId: string, timeoutMs = 10_000): Promise<TaskResult> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const task = this.backend.getTask(taskId);
      if (task === undefined) throw ServiceError.notFound('tasks', taskId);
      if (task.result !== undefined) return task.result;
      if (Date.now() > deadline) {
        throw new HarnessTimeoutError(
          `Task ${taskId} has no result after ${timeoutMs} ms (status ${task.status})`,
          timeoutMs,
        );
      }
      await sleep(5);
    }
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

  /** Stops every connector the harness started, then the backend. */
  async close(): Promise<void> {
    await Promise.all(this.#connectors.map((connector) => connector.stop()));
    await this.backend.close();
  }
}

/** Starts a reference backend in-process with one tenant on it. Close it with `harness.close()`. */
export async function createTestHarness(options: TestHarnessOptions = {}): Promise<TestHarness> {
  const backend = await startReferenceBackend(options.backend);
  return new TestHarness(backend, backend.createTenant());
}
