import { z } from 'zod';
import {
  APPROVALS_PAGE_SIZE,
  type Approval,
  type ApprovalFields,
  type ApprovalWrite,
  type ConnectorRegistration,
  type ConnectorState,
  endpoints,
  isSuccessStatus,
  isTask,
  successEnvelope,
  Task,
  type TaskResult,
  type UiTemplate,
  type UiTemplateWrite,
} from '../api/index.js';
import { toIssues, type ValidationIssue } from '../errors.js';
import { PagingStalledError } from './errors.js';
import type { ClientOptions, RequestOptions } from './options.js';
import { registerSerializedApprovalsSender } from './serialized-approvals.js';
import { Transport } from './transport.js';

/** Filters of Get approvals (endpoint 10). */
export interface ApprovalsQuery {
  /** Only approvals modified after this instant (sent as `lastModified[gt]`). */
  modifiedAfter?: string | Date;
  /** Only resolved (`true`) or only waiting (`false`) approvals. */
  resolved?: boolean;
  /**
   * `full` includes each approval's `data`; `shallow` leaves it out.
   * @default 'full'
   */
  view?: 'full' | 'shallow';
}

/**
 * What {@link IntegrationClient.leaseTask} leased: a task as the contract says, or one that breaks the contract but
 * whose `id` can be read, so that a result can still be reported for it.
 */
export type LeasedTask =
  | { readonly valid: true; readonly task: Task }
  | {
      readonly valid: false;
      /** The task's id, as Update task result takes it. */
      readonly id: string;
      /** The task's type, when it is a string. */
      readonly type: string | undefined;
      /** Every way the task breaks the contract, with paths from the task (`data.approval`). */
      readonly issues: readonly ValidationIssue[];
    };

// Get task with only what a result can be reported by required: the rest of the task is checked afterwards, so that
// a task with a readable id is never lost to a failed validation.
const leaseTaskEndpoint = {
  ...endpoints.getTask,
  response: successEnvelope(
    'task',
    z.looseObject({ id: endpoints.reportTaskResult.params.shape.taskId }).nullable().optional(),
  ),
  // The answer of nearly every lease: a task as the contract says, or none.
  accepts: (body: unknown) => {
    if (!isSuccessStatus(body)) return false;
    const { data } = body as { data?: unknown };
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
    const { task } = data as { task?: unknown };
    return task === undefined || task === null || isTask(task);
  },
};

/**
 * Client of the Connector Integration API (v2), endpoints 8 to 18, authenticated with a connector token of one
 * system.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { IntegrationClient } from 'approval-connector-kit/client';
 *
 * const client = new IntegrationClient({ baseUrl, token: connectorToken });
 * await client.registerConnector({ taskTypes: ['approve', 'reject'], authRequired: false });
 * const task = await client.getTask(); // null when none waits
 * if (task) await client.reportTaskResult(task.id, { status: 'success' });
 * ```
 */
export class IntegrationClient {
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    this.#transport = new Transport(options);
    const transport = this.#transport;
    registerSerializedApprovalsSender(this, async (body, requestOptions) => {
      await transport.send(
        endpoints.putApprovals,
        transport.prepareSerialized(endpoints.putApprovals, body),
        requestOptions,
        { allowEmpty: true },
      );
    });
  }

  /** Endpoint 8: one approval. A missing one is a {@link NotFoundError}. */
  async getApproval(approvalId: string, options?: RequestOptions): Promise<Approval> {
    const answer = await this.#transport.call(endpoints.getApproval, { params: { approvalId } }, options);
    return answer.data.approval;
  }

  /**
   * Endpoint 9: creates or updates one approval. It replaces the stored one only when its `lastModified` is later;
   * without `lastModified`, unconditionally.
   */
  async putApproval(approvalId: string, approval: ApprovalFields, options?: RequestOptions): Promise<void> {
    await this.#transport.callOptional(
      endpoints.putApproval,
      { params: { approvalId }, body: { approval } },
      options,
    );
  }

  /** Endpoint 10: at most 50 approvals, filtered. */
  async getApprovals(query: ApprovalsQuery = {}, options?: RequestOptions): Promise<Approval[]> {
    const answer = await this.#transport.call(
      endpoints.getApprovals,
      { query: { 'lastModified[gt]': query.modifiedAfter, resolved: query.resolved, view: query.view } },
      options,
    );
    return answer.data.approvals;
  }

  /**
   * Every approval matching `query` modified after `query.modifiedAfter` (or ever), oldest change first. Pages
   * forward with `lastModified[gt]` set to the newest `lastModified` of each page, which the service's tie rule makes
   * safe (see `docs/api-contract.md`, "Get approvals").
   */
  async *iterateApprovals(
    query: ApprovalsQuery = {},
    options?: RequestOptions,
  ): AsyncIterableIterator<Approval> {
    // Without `[gt]` the service answers the newest 50, which cannot be paged; the epoch starts a forward walk.
    let after = new Date(query.modifiedAfter ?? 0).getTime();
    for (;;) {
      const page = await this.getApprovals({ ...query, modifiedAfter: new Date(after) }, options);
      page.sort(byChange);
      yield* page;
      if (page.length < APPROVALS_PAGE_SIZE) return;
      const newest = Date.parse(page.at(-1)?.lastModified ?? '');
      if (!(newest > after)) throw new PagingStalledError('Get approvals');
      after = newest;
    }
  }

  /** Endpoint 11: creates or updates approvals, each by the lastModified rule. The service applies all or none. */
  async putApprovals(approvals: readonly ApprovalWrite[], options?: RequestOptions): Promise<void> {
    await this.#transport.callOptional(endpoints.putApprovals, { body: { approvals } }, options);
  }

  /**
   * Endpoint 12: registers what the connector can do. `publicKey` and `publicKeyExpiredAt` are required when
   * `authRequired` is true.
   */
  async registerConnector(registration: ConnectorRegistration, options?: RequestOptions): Promise<void> {
    await this.#transport.callOptional(endpoints.registerConnector, { body: registration }, options);
  }

  /**
   * Endpoint 13: leases the next task, or `null` when none waits (whichever way the service says so). A task that
   * breaks the contract is an {@link InvalidResponseError}; a worker that must answer every task it leases uses
   * {@link leaseTask}.
   */
  async getTask(options?: RequestOptions): Promise<Task | null> {
    const answer = await this.#transport.callIfPresent(endpoints.getTask, {}, options);
    return answer?.data.task ?? null;
  }

  /**
   * Endpoint 13 for a worker that answers every task it leases: like {@link getTask}, but a task that breaks the
   * contract while its `id` can be read resolves to `{valid: false, id, type, issues}` instead of throwing, so that
   * a result can still be reported for it (the service would otherwise offer it again forever). An answer without a
   * usable `id` is an {@link InvalidResponseError}, as with `getTask`.
   */
  async leaseTask(options?: RequestOptions): Promise<LeasedTask | null> {
    const answer = await this.#transport.callIfPresent(leaseTaskEndpoint, {}, options);
    const leased = answer?.data.task;
    if (leased === undefined || leased === null) return null;
    if (isTask(leased)) return { valid: true, task: leased };
    const task = Task.safeParse(leased);
    if (task.success) return { valid: true, task: task.data };
    const { id, type } = leased;
    return {
      valid: false,
      id,
      type: typeof type === 'string' ? type : undefined,
      issues: toIssues(task.error),
    };
  }

  /** Endpoint 14: reports the result of a task. */
  async reportTaskResult(taskId: string, taskResult: TaskResult, options?: RequestOptions): Promise<void> {
    await this.#transport.callOptional(
      endpoints.reportTaskResult,
      { params: { taskId }, body: { taskResult } },
      options,
    );
  }

  /** Endpoint 15: the connector's stored state, or `null` when the service has none yet. */
  async getState(options?: RequestOptions): Promise<ConnectorState | null> {
    const answer = await this.#transport.callIfPresent(endpoints.getState, {}, options);
    return answer?.data.state ?? null;
  }

  /** Endpoint 16: replaces the connector's stored state. */
  async putState(state: Record<string, unknown>, options?: RequestOptions): Promise<void> {
    await this.#transport.callOptional(endpoints.putState, { body: { state } }, options);
  }

  /** Endpoint 17: the UI templates the service holds, each with `uiTemplate` keyed by schema id. */
  async getUiTemplates(options?: RequestOptions): Promise<UiTemplate[]> {
    const answer = await this.#transport.call(endpoints.getUiTemplates, {}, options);
    return answer.data.uiTemplates;
  }

  /** Endpoint 18: adds or updates UI templates. Sent as published: `GET /v2/connector/uitemplates` with a body. */
  async putUiTemplates(uiTemplates: readonly UiTemplateWrite[], options?: RequestOptions): Promise<void> {
    await this.#transport.callOptional(endpoints.putUiTemplates, { body: { uiTemplates } }, options);
  }

  /** Lets requests in flight finish, then closes the connection pool. Idempotent. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** Aborts requests in flight and closes the connection pool. Idempotent. */
  destroy(): Promise<void> {
    return this.#transport.destroy();
  }
}

function byChange(a: Approval, b: Approval): number {
  return Date.parse(a.lastModified) - Date.parse(b.lastModified) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
