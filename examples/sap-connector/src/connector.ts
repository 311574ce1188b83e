/**
 * The SAP My Inbox connector: copies the open decision tasks of SAP's task-processing service into the Approval
 * Service, one approval per user who can decide each, and carries the approvers' decisions back with their own SAP
 * credentials. The default export builds it from the worker's environment.
 *
 * @example
 * ```ts
 * const connector = new SapInboxConnector({
 *   client: new SapInboxClient({ serviceUrl: 'https://sap.example.com/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/' }),
 *   technicalUser: { username: 'APPROVAL_SYNC', password: new Secret(process.env.SAP_PASSWORD ?? '') },
 * });
 * ```
 * @module
 */
import {
  AuthenticationError,
  Connector,
  type ConnectorFactory,
  type Credentials,
  InvalidConnectorError,
  type PrecheckVerdict,
  Secret,
  type SourceApproval,
  type SourceContext,
  snapshot,
  type TaskContext,
  task,
  ValidationError,
  type ValidationIssue,
  type WorkerContext,
  type WorkerRole,
} from 'approval-connector-kit';
import { z } from 'zod';
import { SapInboxClient, sapClient, serviceRoot } from './client.js';
import { SapDecisionUnavailableError } from './errors.js';
import {
  chooseDecision,
  type DecisionKeys,
  type DecisionType,
  parseApprovalId,
  toSourceApprovals,
  unmappedTypes,
} from './mapping.js';
import { OPEN_STATUSES, type SapCredentials, type TaskRef } from './model.js';

/** The schema of every approval the connector syncs, and so of its UI templates. */
export const SCHEMA_ID = 'sap-task';

/** What {@link SapInboxConnector} works with. */
export interface SapInboxConnectorOptions {
  /** The client of SAP's task-processing service. */
  client: SapInboxClient;
  /**
   * The SAP user the sync reads the inbox with: a substitute of every approver, so that it sees all their tasks.
   * Never an approver itself. A worker that only carries out tasks (role `tasks`) needs none.
   * @default none: the connector carries out tasks, and a sync fails with an `InvalidConnectorError`
   */
  technicalUser?: { username: string; password: Secret };
  /**
   * Only tasks of these task definitions (`TaskDefinitionID`, for example `TS20000166`) are synced. Mind that one
   * task definition can serve many workflow steps: SAP's generic decision task, `TS00008267`, serves them all.
   * @default every task definition
   */
  taskDefinitionIds?: readonly string[];
  /**
   * The `DecisionKey`s that approve and reject among decision options without a `Nature` (SAP leaves it empty where
   * the customizing does not maintain it). A task none of whose options approves (or rejects) is synced all the
   * same, its `approve` (`reject`) tasks end in a `systemError` asking to decide it in SAP, and it is counted and
   * logged at each sync.
   * @default none: an option's `Nature` says, else its text (`DECISION_TEXTS` of `mapping.ts`)
   */
  decisionKeys?: DecisionKeys;
}

// Both task types take the approval and the approver's comment; whether SAP needs the comment is the decision
// option's to say (`CommentMandatory`), so a missing one is not refused here but answered by `chooseDecision`.
const DecisionInput = z
  .object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() })
  .transform(({ approval, approveComments }, context) => {
    try {
      return { ref: parseApprovalId(approval.id).ref, comments: approveComments ?? '' };
    } catch (error) {
      context.addIssue({ code: 'custom', path: ['approval', 'id'], message: (error as Error).message });
      return z.NEVER;
    }
  });

/** Copies SAP's open decision tasks into the Approval Service and carries the approvers' decisions back. */
export class SapInboxConnector extends Connector {
  readonly tasks = {
    approve: this.#decision('approve'),
    reject: this.#decision('reject'),
  };
  // The task collection has no time of last change: each run reads every open task, and the kit marks resolved
  // every approval whose task is no longer there (decided, by anyone, or withdrawn).
  readonly source = snapshot({ snapshot: (context) => this.#openApprovals(context) });
  // SAP answers a task only for its agents, and records who decided: each decision runs as the approver.
  override readonly authRequired = true;
  // One schema for every task definition: the fields each definition adds are in `attributes`, shown as they come.
  override readonly uiTemplates = [
    {
      type: 'card',
      schemaId: SCHEMA_ID,
      template: { title: '{{title}}', subtitle: '{{taskName}}', fields: ['priority', 'dueOn'] },
    },
    {
      type: 'detail',
      schemaId: SCHEMA_ID,
      template: {
        title: '{{title}}',
        subtitle: '{{taskName}}, requested by {{createdBy}}',
        fields: [
          { label: 'Priority', path: 'priority' },
          { label: 'Created', path: 'createdOn' },
          { label: 'Due', path: 'dueOn' },
          { label: 'Details', path: 'attributes' },
          { label: 'Decisions', path: 'decisions' },
        ],
      },
    },
  ];

  readonly #client: SapInboxClient;
  readonly #technicalUser: { username: string; password: Secret } | undefined;
  readonly #taskDefinitionIds: readonly string[] | undefined;
  readonly #decisionKeys: DecisionKeys | undefined;

  constructor(options: SapInboxConnectorOptions) {
    super();
    this.#client = options.client;
    this.#technicalUser = options.technicalUser;
    this.#taskDefinitionIds = options.taskDefinitionIds;
    this.#decisionKeys = options.decisionKeys;
  }

  // Nothing SAP was sent: the task offers no such decision, or the comment SAP requires is missing. The approver
  // can act on the message; the kit's table would make it an internalError, as for any error without a status.
  override classifyFailure(error: unknown): 'systemError' | undefined {
    return error instanceof SapDecisionUnavailableError ? 'systemError' : undefined;
  }

  #decision(type: DecisionType) {
    return task({
      input: DecisionInput,
      precheck: ({ ref }, context) => this.#stillOpen(ref, context),
      run: async ({ ref, comments }, { credentials, signal }) => {
        const call = { credentials: approverOf(credentials), signal };
        const offered = await this.#client.decisionOptions(ref, call);
        const option = chooseDecision(offered, type, comments, this.#decisionKeys);
        await this.#client.decide(ref, { decisionKey: option.DecisionKey, comments }, call);
      },
    });
  }

  // A task decided since the approval was synced (in SAP, or by an earlier delivery of this task) is not sent again.
  async #stillOpen(ref: TaskRef, { credentials, signal }: TaskContext): Promise<PrecheckVerdict> {
    const task = await this.#client.task(ref, { credentials: approverOf(credentials), signal });
    if ((OPEN_STATUSES as readonly string[]).includes(task.Status)) return true;
    // Out of the inbox for another reason (FOR_RESUBMISSION, say), it may come back: not decided, but not now either.
    const meta =
      task.Status === 'COMPLETED'
        ? { code: 'already_decided', message: `The SAP task ${ref.instanceId} was decided already` }
        : {
            code: 'not_open',
            message: `The SAP task ${ref.instanceId} does not wait for a decision now: its status is ${task.Status}`,
          };
    return { status: 'systemError', meta };
  }

  async *#openApprovals({ signal, logger }: SourceContext): AsyncIterable<SourceApproval> {
    const user = this.#technicalUser;
    if (user === undefined) {
      throw new InvalidConnectorError(
        'SapInboxConnector was built without a technical user: it carries out tasks, but cannot sync',
      );
    }
    const read = this.#client.openTasks({
      credentials: { username: user.username, password: user.password.reveal() },
      signal,
      ...(this.#taskDefinitionIds === undefined ? {} : { taskDefinitionIds: this.#taskDefinitionIds }),
    });
    // Tasks some task type cannot decide (no option maps to it), by task definition: synced, and said so.
    const unmapped = new Map<string, number>();
    for await (const open of read) {
      if (unmappedTypes(open.decisionOptions, this.#decisionKeys).length > 0) {
        const definition = open.task.TaskDefinitionID ?? '(none)';
        unmapped.set(definition, (unmapped.get(definition) ?? 0) + 1);
      }
      yield* toSourceApprovals(open, {
        schemaId: SCHEMA_ID,
        ignoreUsers: [user.username],
        ...(this.#decisionKeys === undefined ? {} : { decisionKeys: this.#decisionKeys }),
      });
    }
    if (unmapped.size > 0) {
      const count = [...unmapped.values()].reduce((sum, n) => sum + n, 0);
      logger.warn(
        { unmappedTasks: count, byTaskDefinition: Object.fromEntries(unmapped) },
        'SAP tasks synced that can only be decided in SAP: none of their decision options maps to approve, or ' +
          'none to reject (no Nature, no key in SAP_APPROVE_DECISION_KEYS or SAP_REJECT_DECISION_KEYS, and no ' +
          'text the README lists)',
      );
    }
  }
}

/**
 * The approver's SAP user and password from the task's credentials, revealed for the calls of this task only.
 * Missing or unusable ones are the approver's to fix: an authentication error.
 */
function approverOf(credentials: Credentials | undefined): SapCredentials {
  const username = credentials?.username?.reveal() ?? '';
  const password = credentials?.password?.reveal() ?? '';
  if (username === '' || password === '') {
    throw new AuthenticationError('The task carries no SAP user name and password; sign in to SAP again');
  }
  // Basic authentication cannot carry a user name with a colon, and SAP user names have none. The name itself is
  // not quoted: it is one of the task's credentials.
  if (username.includes(':')) {
    throw new AuthenticationError(
      'The SAP user name in the task has a colon, which no SAP user name has; sign in to SAP again',
    );
  }
  return { username, password };
}

/**
 * Builds the connector from a worker's environment (the README's configuration): the service root, the SAP client,
 * the technical user (which a worker of role `tasks` does without), the task definitions to sync, and the decision
 * keys that approve and reject where SAP gives no `Nature`. Every variable
 * that is missing or wrong is named in one `ValidationError`; the password's value never is.
 */
export function fromEnvironment(env: WorkerContext['env'], role: WorkerRole = 'all'): SapInboxConnector {
  const issues: ValidationIssue[] = [];
  const read = <T>(name: string, required: boolean, parse: (value: string) => T): T | undefined => {
    const value = env[name];
    // An empty variable counts as unset, as the worker's own do.
    if (value === undefined || value === '') {
      if (required)
        issues.push({ path: [name], code: 'invalid_type', message: `Expected \`${name}\` to be set` });
      return undefined;
    }
    try {
      return parse(value);
    } catch (error) {
      issues.push({ path: [name], code: 'custom', message: (error as Error).message });
      return undefined;
    }
  };
  const syncs = role !== 'tasks';
  const serviceUrl = read('SAP_SERVICE_URL', true, (value) => serviceRoot(value, 'SAP_SERVICE_URL'));
  const client = read('SAP_CLIENT', false, (value) => sapClient(value, 'SAP_CLIENT'));
  const username = read('SAP_USER', syncs, (value) => {
    // Basic authentication cannot carry a user name with a colon.
    if (value.includes(':'))
      throw new TypeError(`Expected \`SAP_USER\` to be an SAP user name, got \`${value}\``);
    return value;
  });
  const password = read('SAP_PASSWORD', syncs, (value) => new Secret(value));
  const taskDefinitionIds = read('SAP_TASK_DEFINITIONS', false, (value) => {
    const ids = value.split(',').map((id) => id.trim());
    if (ids.includes('')) {
      throw new TypeError(
        `Expected \`SAP_TASK_DEFINITIONS\` to be task definition ids separated by commas, such as TS00008267,TS20000166, got \`${value}\``,
      );
    }
    return ids;
  });
  const decisionKeysOf = (name: string) => (value: string) => {
    const keys = value.split(',').map((key) => key.trim());
    if (keys.includes('')) {
      throw new TypeError(
        `Expected \`${name}\` to be decision keys separated by commas, such as 0001,0003, got \`${value}\``,
      );
    }
    return keys;
  };
  const approveKeys = read('SAP_APPROVE_DECISION_KEYS', false, decisionKeysOf('SAP_APPROVE_DECISION_KEYS'));
  const rejectKeys = read('SAP_REJECT_DECISION_KEYS', false, decisionKeysOf('SAP_REJECT_DECISION_KEYS'));
  const both = approveKeys?.filter((key) => rejectKeys?.includes(key)) ?? [];
  if (both.length > 0) {
    issues.push({
      path: ['SAP_REJECT_DECISION_KEYS'],
      code: 'custom',
      message: `Expected no decision key both to approve and to reject, got ${both.join(', ')} in both`,
    });
  }
  if (issues.length > 0 || serviceUrl === undefined) throw new ValidationError('SAP settings', issues);
  const decisionKeys =
    approveKeys === undefined && rejectKeys === undefined
      ? undefined
      : {
          ...(approveKeys === undefined ? {} : { approve: approveKeys }),
          ...(rejectKeys === undefined ? {} : { reject: rejectKeys }),
        };
  return new SapInboxConnector({
    client: new SapInboxClient({ serviceUrl, ...(client === undefined ? {} : { sapClient: client }) }),
    ...(username === undefined || password === undefined ? {} : { technicalUser: { username, password } }),
    ...(taskDefinitionIds === undefined ? {} : { taskDefinitionIds }),
    ...(decisionKeys === undefined ? {} : { decisionKeys }),
  });
}

// How `src/main.ts` (`runWorker`) and `connector run` build the worker's connector.
const build: ConnectorFactory = ({ env, role }) => fromEnvironment(env, role);
export default build;
