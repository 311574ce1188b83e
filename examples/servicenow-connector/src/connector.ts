/**
 * The ServiceNow connector: copies the approval records of `sysapproval_approver` (change requests, requested items,
 * and the other tables configured) into the Approval Service, one approval per approver record, and sets the
 * approver record's state as the approver (`approve`, `reject`), with the approver's comment.
 *
 * - **Sync**: incremental, on `sys_updated_on` of the approval records and of the records they approve
 *   (`changedApprovals`), with reconciliation (`lookupApprovals`): an approval whose record was deleted, or that the
 *   integration user may no longer read, is resolved. After each sync run that read to its end, the approvers are
 *   mapped to the service's users by their `sys_user` email, when the connector was given a management client.
 * - **Tasks**: each runs with the approver's own ServiceNow credentials, sealed in the task (`authRequired`). The
 *   precheck confirms that the credentials are the approver's and that the record still waits for them.
 * - **UI templates**: a card and a detail per approved table.
 * - **Push**: the callouts of the README's business rules (an approval record inserted, updated or deleted; an
 *   approved record updated), verified by their signature, name the approvals they concern, which the kit reads
 *   again through `lookup` (`push.ts`). An administrator sets the rules up, once: the connector registers nothing.
 *
 * The default export builds it from the worker's environment (see `environment.ts`).
 * @module
 */
import {
  AuthenticationError,
  Connector,
  type ConnectorFactory,
  type Credentials,
  incremental,
  type Logger,
  type PrecheckVerdict,
  type PushDelivery,
  push,
  type SourceApproval,
  type TaskContext,
  task,
} from 'approval-connector-kit';
import { ManagementClient, type UiTemplateWrite } from 'approval-connector-kit/client';
import { syncUserMappings, type UserMappingEntry } from 'approval-connector-kit/worker';
import { z } from 'zod';
import {
  APPROVALS_TABLE,
  approvalIdsOfRecord,
  changedApprovals,
  lookupApprovals,
  type ReadOptions,
  readUsers,
} from './approvals.js';
import { checkPassword, checkUsername } from './checks.js';
import { ServiceNowClient } from './client.js';
import { DEFAULT_TABLES, readEnvironment } from './environment.js';
import { ServiceNowArgumentError, ServiceNowDecisionError, ServiceNowHttpError } from './errors.js';
import { tableTemplates, WAITING_STATE } from './mapping.js';
import {
  APPROVER_FIELDS,
  ApproverRecord,
  type ServiceNowCredentials,
  SYS_ID,
  USER_FIELDS,
  UserRecord,
} from './model.js';
import { deliveryIdOf, parseDelivery, verifyDelivery } from './push.js';

/** Options of {@link ServiceNowConnector}. */
export interface ServiceNowConnectorOptions {
  /** The instance, signed in as the integration user: it reads the approvals and the records they approve. */
  client: ServiceNowClient;
  /**
   * The approved tables whose approvals are synced (`source_table` of the approval records), each with its UI
   * templates.
   * @default ['change_request', 'sc_req_item']
   */
  tables?: readonly string[];
  /**
   * Records per page of the Table API (`sysparm_limit`).
   * @default 100
   */
  pageSize?: number;
  /**
   * Where to keep the approvers' user mappings: a Management API client (a management token of the organization)
   * and the system's id. Without it, no mapping is written: map the approvers by hand.
   * @default none
   */
  userMappings?: { management: ManagementClient; systemId: string };
}

/** What both task types read of the task: the approval (its id, an approval record's sys_id) and the comment. */
export const DecisionInput = z
  .object({ approval: z.object({ id: z.string() }), approveComments: z.string().nullish() })
  .transform(({ approval, approveComments }, context) => {
    if (!SYS_ID.test(approval.id)) {
      context.addIssue({
        code: 'custom',
        path: ['approval', 'id'],
        message: 'is not the sys_id of an approval record (32 hexadecimal digits)',
        input: approval.id,
      });
      return z.NEVER;
    }
    return { sysId: approval.id, comment: approveComments?.trim() || undefined };
  });
export type DecisionTarget = z.output<typeof DecisionInput>;

/** The approval state each task type sets. */
const DECIDED = { approve: 'approved', reject: 'rejected' } as const;
type Decision = keyof typeof DECIDED;

/** Copies ServiceNow's approvals into the Approval Service and decides them in ServiceNow as their approvers. */
export class ServiceNowConnector extends Connector {
  // ServiceNow records who decided (`sys_updated_by`, the approval's history), and its ACLs let an approver decide
  // their own approvals: each decision runs as the approver.
  override readonly authRequired = true;
  override readonly uiTemplates: readonly UiTemplateWrite[];

  // ServiceNow's own words for the two decisions.
  readonly tasks = {
    approve: this.#decisionTask('approve'),
    reject: this.#decisionTask('reject'),
  };

  // Two tables are read, each in its own order: not in (lastModified, id) order as a whole.
  readonly source = incremental({
    ordered: false,
    changes: ({ since }, { signal, logger }) => this.#changes(since, signal, logger),
    lookup: (ids, { signal }) => lookupApprovals(this.#client, ids, { ...this.#reads, signal }),
    push: push({
      verify: (delivery, { secret }) => verifyDelivery(delivery, secret),
      approvalIds: (delivery, { signal, logger }) => this.#approvalIds(delivery, signal, logger),
      deliveryId: deliveryIdOf,
    }),
  });

  readonly #client: ServiceNowClient;
  readonly #reads: Omit<ReadOptions, 'signal'>;
  readonly #userMappings: ServiceNowConnectorOptions['userMappings'];
  /** Approvers mapped (or found mapped) by this process, with the email they were mapped by. */
  readonly #mapped = new Map<string, string>();

  constructor(options: ServiceNowConnectorOptions) {
    super();
    const { client, tables = DEFAULT_TABLES, pageSize = 100, userMappings } = options;
    if (!(client instanceof ServiceNowClient))
      throw new ServiceNowArgumentError('client must be a ServiceNowClient');
    if (tables.length === 0 || !tables.every((table) => /^[a-z][a-z0-9_]{0,79}$/.test(table))) {
      throw new ServiceNowArgumentError(
        `tables must be table names such as change_request, got ${JSON.stringify(tables)}`,
      );
    }
    if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > 10_000) {
      throw new ServiceNowArgumentError(
        `pageSize must be a whole number from 1 to 10000, got ${String(pageSize)}`,
      );
    }
    this.#client = client;
    this.#reads = { tables: [...new Set(tables)], pageSize };
    this.uiTemplates = this.#reads.tables.flatMap(tableTemplates);
    this.#userMappings = userMappings;
  }

  // Nothing landed: the approval stopped waiting while the decision was on its way. The approver can act on the
  // message; the kit's table would make an error without a status an internalError.
  override classifyFailure(error: unknown): 'systemError' | undefined {
    return error instanceof ServiceNowDecisionError ? 'systemError' : undefined;
  }

  #decisionTask(decision: Decision) {
    return task({
      input: DecisionInput,
      precheck: (target, context) => this.#precheck(target, decision, context),
      run: async (target, { credentials, signal }) => {
        const asApprover = this.#client.withCredentials(approverCredentials(credentials));
        const changes = {
          state: DECIDED[decision],
          ...(target.comment === undefined ? {} : { comments: target.comment }),
        };
        let decided: ApproverRecord;
        try {
          decided = await asApprover.update(
            APPROVALS_TABLE,
            target.sysId,
            changes,
            APPROVER_FIELDS,
            ApproverRecord,
            {
              signal,
            },
          );
        } catch (error) {
          // A 403 is an ACL, or a business rule that refused the update: the approval, cancelled meanwhile, say.
          if (!(error instanceof ServiceNowHttpError) || error.status !== 403) throw error;
          const now = await asApprover.get(APPROVALS_TABLE, target.sysId, APPROVER_FIELDS, ApproverRecord, {
            signal,
          });
          if (now === undefined || now.state.value === WAITING_STATE) throw error;
          throw new ServiceNowDecisionError('no_longer_requested', noLongerRequested(now), { cause: error });
        }
        if (decided.state.value !== DECIDED[decision]) {
          throw new ServiceNowDecisionError(
            'decision_not_applied',
            `ServiceNow kept the approval ${decided.state.display || decided.state.value} rather than ${DECIDED[decision]}; nothing else was changed`,
          );
        }
        return { meta: { state: decided.state.value } };
      },
    });
  }

  /**
   * Confirms, as the approver, that the credentials are the approver's (ServiceNow lets an administrator decide any
   * approval, which would then be recorded as theirs) and that the record still waits for them. A decision that no
   * longer applies is not sent: `success` when the record holds this very decision already (an earlier delivery of
   * the task), otherwise a `systemError` that says the state.
   */
  async #precheck(
    target: DecisionTarget,
    decision: Decision,
    context: TaskContext,
  ): Promise<PrecheckVerdict> {
    const { credentials, signal } = context;
    const signIn = approverCredentials(credentials);
    const asApprover = this.#client.withCredentials(signIn);
    const [me] = (
      await asApprover.page(
        { table: 'sys_user', query: `user_name=${signIn.username}`, fields: USER_FIELDS, limit: 1 },
        UserRecord,
        { signal },
      )
    ).records;
    const approval = await asApprover.get(APPROVALS_TABLE, target.sysId, APPROVER_FIELDS, ApproverRecord, {
      signal,
    });
    if (approval === undefined) {
      return {
        status: 'systemError',
        meta: {
          code: 'not_found',
          message: `The approval record ${target.sysId} is gone from ServiceNow, or ${signIn.username} may not read it`,
        },
      };
    }
    if (me === undefined || me.sys_id.value !== approval.approver.value) {
      return {
        status: 'authenticationError',
        meta: {
          code: 'not_the_approver',
          message: `These ServiceNow credentials are not those of ${approval.approver.display || 'the approver'}`,
        },
      };
    }
    if (approval.state.value === WAITING_STATE) return true;
    if (approval.state.value === DECIDED[decision]) {
      return {
        status: 'success',
        meta: {
          code: 'already_answered',
          message: `The approval is ${approval.state.display} in ServiceNow already`,
        },
      };
    }
    return {
      status: 'systemError',
      meta: { code: 'no_longer_requested', message: noLongerRequested(approval) },
    };
  }

  async *#changes(
    since: Date | undefined,
    signal: AbortSignal,
    logger: Logger,
  ): AsyncIterable<SourceApproval> {
    const approvers = new Set<string>();
    yield* changedApprovals(this.#client, since, {
      ...this.#reads,
      signal,
      onApproval: (approval) => approvers.add(approval.approver.value),
    });
    // Only once the read came to its end: a run the kit interrupts does not get here.
    await this.#mapUsers([...approvers], signal, logger);
  }

  /**
   * The approvals a verified delivery concerns: the approval record it names, or the approval records of the
   * approved record it names (read now, as the integration user); none for a record of a table not synced. A body
   * that is not the rules' throws: the kit counts the delivery malformed. When the instance cannot be asked, the
   * delivery names nothing, and the next sync run brings the change (counted missed).
   */
  async #approvalIds(delivery: PushDelivery, signal: AbortSignal, logger: Logger): Promise<string[]> {
    const { table, sys_id: sysId, operation } = parseDelivery(delivery);
    if (table === APPROVALS_TABLE) return [sysId];
    try {
      return await approvalIdsOfRecord(this.#client, table, sysId, { ...this.#reads, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      logger.warn(
        { err: error, table, sysId, operation },
        'the approvals of a pushed record could not be read from ServiceNow; the next sync run brings the change',
      );
      return [];
    }
  }

  /**
   * Maps the approvers to the service's users by their `sys_user` email (the kit's `syncUserMappings`), except those
   * this process has mapped by the same email already. A failure is logged, not thrown: the approvals are synced
   * all the same, and the next run tries again.
   */
  async #mapUsers(approvers: readonly string[], signal: AbortSignal, logger: Logger): Promise<void> {
    if (this.#userMappings === undefined || approvers.length === 0) return;
    const { management, systemId } = this.#userMappings;
    try {
      const users = await readUsers(this.#client, approvers, { ...this.#reads, signal });
      const entries: UserMappingEntry[] = users
        .map((user) => ({ systemUserId: user.sys_id.value, email: user.email.value.trim() }))
        .filter(({ systemUserId, email }) => email !== '' && this.#mapped.get(systemUserId) !== email);
      if (entries.length === 0) return;
      const report = await syncUserMappings(management, systemId, entries, {
        signal,
        maxListed: entries.length,
      });
      const unmapped = new Set([...report.unknownEmails, ...report.failures.map(({ email }) => email)]);
      for (const { systemUserId, email } of entries)
        if (!unmapped.has(email)) this.#mapped.set(systemUserId, email);
      const { mapped, unchanged, unknown, failed } = report;
      logger.info({ mapped, unchanged, unknown, failed }, 'user mappings synced');
      if (unmapped.size > 0) {
        logger.warn(
          { unknownEmails: report.unknownEmails, failures: report.failures },
          'some approvers have no user in the organization, or their mapping was refused',
        );
      }
    } catch (error) {
      if (signal.aborted) throw error;
      logger.warn({ err: error }, 'user mappings not synced; the next sync run tries again');
    }
  }
}

/** What a precheck or a run says of an approval that no longer waits: its state, and that nothing was sent. */
function noLongerRequested(approval: ApproverRecord): string {
  const what = approval.document_id.display || approval.sysapproval.display || 'the record';
  return `The approval of ${what} is ${approval.state.display || approval.state.value} in ServiceNow: it no longer waits for a decision`;
}

/**
 * The approver's ServiceNow user name and password from the task's credentials (`username` and `password`, as a
 * sign-in form gives them), revealed for this task's calls only.
 * @throws {AuthenticationError} when either is missing or unusable: the approver has to give them again.
 */
export function approverCredentials(credentials: Credentials | undefined): ServiceNowCredentials {
  const field = (name: string) =>
    credentials !== undefined && Object.hasOwn(credentials, name) ? credentials[name]?.reveal() : undefined;
  const username = field('username')?.trim();
  const password = field('password');
  if (!checkUsername(username).ok || !checkPassword(password).ok) {
    throw new AuthenticationError(
      'The task carries no usable ServiceNow user name and password; sign in to ServiceNow again',
    );
  }
  return { username: username!, password: password! };
}

/**
 * Builds the connector from the worker's environment: `SERVICENOW_INSTANCE_URL`, `SERVICENOW_USER`,
 * `SERVICENOW_PASSWORD`, and optionally `SERVICENOW_TABLES` and the user mappings' `APPROVAL_MANAGEMENT_TOKEN` and
 * `APPROVAL_SYSTEM_ID`. A missing or invalid one is a `ValidationError` naming each (the worker's exit code 2).
 */
const build: ConnectorFactory = ({ env }) => {
  const { instanceUrl, integrationUser, tables, userMappings } = readEnvironment(env);
  return new ServiceNowConnector({
    client: new ServiceNowClient({ instanceUrl, ...integrationUser }),
    tables,
    ...(userMappings === undefined
      ? {}
      : {
          userMappings: {
            management: new ManagementClient({
              baseUrl: userMappings.serviceUrl,
              token: userMappings.managementToken,
            }),
            systemId: userMappings.systemId,
          },
        }),
  });
};
export default build;
