/**
 * The Jira Service Management connector: copies the approvals of the requests a JQL query selects into the Approval
 * Service, one per approver, and answers them in Jira as the approver (`approve`, `decline`).
 *
 * - **Sync**: incremental, on the requests' `updated` (`changedApprovals`), not in `(lastModified, id)` order, with
 *   reconciliation (`lookupApprovals`) so that an approval of a deleted request is resolved. After each sync run
 *   that read to its end, the approvers whose email Jira shows are mapped to the service's users, when the
 *   connector was given a management client.
 * - **Push**: Jira's webhook deliveries (`jira:issue_created`, `…_updated`, `…_deleted`), verified by their
 *   signature, name the approvals of their issue, which the kit reads again through `lookup` (`deliveries.ts`).
 *   The connector registers its admin webhook itself when told to (`webhook: 'register'`, `webhook-lifecycle.ts`).
 * - **Tasks**: each runs with the approver's own Jira credentials, sealed in the task (`authRequired`). The
 *   precheck checks that the credentials are the approver's and that the approval still waits for their answer;
 *   the action posts the decision, then the approver's comment, if any, as a comment on the request. Failures are left to the kit's failure mapping, which classifies Jira's
 *   answers as they are (see the README).
 * - **UI templates**: one per configured request type.
 *
 * The default export builds it from the worker's environment (see `environment.ts`).
 * @module
 */
import {
  AuthenticationError,
  Connector,
  type ConnectorFactory,
  type Credentials,
  type IncrementalSource,
  incremental,
  type Logger,
  type PrecheckVerdict,
  type PushDelivery,
  push,
  type SourceApproval,
  task,
} from 'approval-connector-kit';
import { ManagementClient, type UiTemplateWrite } from 'approval-connector-kit/client';
import { syncUserMappings, type UserMappingEntry } from 'approval-connector-kit/worker';
import { z } from 'zod';
import {
  approverMappingEntries,
  changedApprovals,
  isPendingFor,
  type JiraApprovalRef,
  lookupApprovals,
  parseSourceApprovalId,
  requestTypeSchemaId,
} from './approvals.js';
import {
  approvalIdsOfEvent,
  jiraDeliveryId,
  KnownApprovals,
  parseIssueEvent,
  verifyJiraDelivery,
} from './deliveries.js';
import { checkRequestTypeId, readEnvironment } from './environment.js';
import { JiraHttpError, orThrow } from './errors.js';
import { checkEmail, JiraClient, type JiraCredentials, type JiraDecision } from './jira-client.js';
import { checkedJql } from './jql.js';
import type { JiraApproval } from './schemas.js';
import { adminWebhookLifecycle } from './webhook-lifecycle.js';

/** Options of {@link JiraConnector}. */
export interface JiraConnectorOptions {
  /** Jira, signed in as the sync account: it searches the JQL and reads every request it finds. */
  jira: JiraClient;
  /** The requests to sync, such as `project = ITSM`, without `ORDER BY`. */
  jql: string;
  /**
   * The ids of the request types to publish a UI template for (`jira-request-type-<id>`).
   * @default []
   */
  requestTypes?: readonly string[];
  /**
   * Where to keep the approvers' user mappings: a Management API client (a management token of the
   * organization) and the system's id. Without it, no mapping is written: map the approvers by hand.
   * @default none
   */
  userMappings?: { management: ManagementClient; systemId: string };
  /**
   * Who keeps the Jira webhook that pushes changes: `register`, the connector, as an admin webhook the sync account
   * registers (it must be a Jira administrator), for the worker's push address (`push.publicUrl`, which the worker
   * then requires); `manual`, not the connector: an administrator registers it by hand in Jira's settings, with the
   * worker's push address, the events `jira:issue_created`, `jira:issue_updated`, `jira:issue_deleted`, the JQL and
   * the worker's push secret, or no one does and the schedule alone brings changes. Either way the deliveries that
   * come are verified with the worker's push secret.
   * @default 'manual'
   */
  webhook?: 'register' | 'manual';
}

/** A task's approval, as the task types read it: the Jira approval and approver its id names. */
export interface DecisionTarget extends JiraApprovalRef {
  /** The request's key, for messages; the issue id when the task's approval does not carry it. */
  issueKey: string;
  /** The approver's comment (`approveComments`), trimmed; `undefined` when none was given. */
  comment: string | undefined;
}

/**
 * What both task types need of the task's data: the approval's id (`<issue id>.<approval id>.<account id>`), its
 * `data.issueKey` when there, and the approver's `approveComments`. Jira's answer to an approval takes no comment:
 * the comment goes on the request (`POST …/request/{issueIdOrKey}/comment`).
 */
export const DecisionInput = z
  .object({
    approval: z.object({
      id: z.string(),
      data: z.object({ issueKey: z.string().optional() }).optional(),
    }),
    approveComments: z.string().nullish(),
  })
  .transform(({ approval, approveComments }, context): DecisionTarget => {
    const ref = parseSourceApprovalId(approval.id);
    if (ref === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['approval', 'id'],
        message: 'is not the id of a Jira approval: <issue id>.<approval id>.<account id>',
        input: approval.id,
      });
      return z.NEVER;
    }
    const comment = approveComments?.trim() || undefined;
    return { ...ref, issueKey: approval.data?.issueKey ?? ref.issueId, comment };
  });

/** The approver's answer each task type gives, as Jira records it on the approval. */
const ANSWER = { approve: 'approved', decline: 'declined' } as const;

/** Copies Jira Service Management approvals into the Approval Service and answers them in Jira. */
export class JiraConnector extends Connector {
  override readonly authRequired = true;
  override readonly uiTemplates: readonly UiTemplateWrite[];

  // Jira's own words for the two answers.
  readonly tasks = {
    approve: this.#decisionTask('approve'),
    decline: this.#decisionTask('decline'),
  };

  readonly source: IncrementalSource;

  readonly #jira: JiraClient;
  readonly #jql: string;
  readonly #userMappings: JiraConnectorOptions['userMappings'];
  /** Approvers mapped (or found mapped) by this process, with the email they were mapped by. */
  readonly #mapped = new Map<string, string>();
  /** The approvals read of each request lately: what a webhook's event about it names besides Jira's list. */
  readonly #known = new KnownApprovals();

  constructor(options: JiraConnectorOptions) {
    super();
    const { jira, jql, requestTypes = [], userMappings, webhook = 'manual' } = options;
    if (!(jira instanceof JiraClient)) throw new TypeError('jira must be a JiraClient');
    if (webhook !== 'register' && webhook !== 'manual') {
      throw new TypeError(`webhook must be "register" or "manual", got ${JSON.stringify(webhook)}`);
    }
    this.#jira = jira;
    this.#jql = checkedJql(jql);
    this.uiTemplates = requestTypes.map((id) =>
      requestTypeTemplate(orThrow('requestTypes', checkRequestTypeId(id))),
    );
    this.#userMappings = userMappings;
    // Records of one request share its `updated`, and a `completedDate` may lift one: not in (lastModified, id)
    // order.
    this.source = incremental({
      ordered: false,
      changes: ({ since }, { signal, logger }) => this.#changes(since, signal, logger),
      lookup: (ids, { signal }) => this.#lookup(ids, signal),
      push: push({
        verify: (delivery, { secret }) => verifyJiraDelivery(delivery, secret),
        approvalIds: (delivery, { signal, logger }) => this.#approvalIds(delivery, signal, logger),
        deliveryId: jiraDeliveryId,
        ...(webhook === 'register' ? { webhook: adminWebhookLifecycle(jira, this.#jql) } : {}),
      }),
    });
  }

  #decisionTask(decision: JiraDecision) {
    return task({
      input: DecisionInput,
      precheck: async (target, { credentials, signal }) => {
        const asApprover = this.#jira.withCredentials(approverCredentials(credentials));
        // Jira records an answer for whoever signs in: credentials of another approver would answer for them.
        const account = await asApprover.myself({ signal });
        if (account.accountId !== target.accountId) {
          return {
            status: 'authenticationError',
            meta: {
              code: 'not_the_approver',
              message: `These Jira credentials are not those of the approver of ${target.issueKey}'s approval`,
            },
          };
        }
        const approval = await asApprover.getApproval(target.issueId, target.approvalId, { signal });
        return decisionVerdict(approval, target, decision);
      },
      run: async (target, { credentials, signal, logger }) => {
        const asApprover = this.#jira.withCredentials(approverCredentials(credentials));
        let answered: JiraApproval;
        try {
          answered = await asApprover.answerApproval(target.issueId, target.approvalId, decision, { signal });
        } catch (error) {
          // 409: the approval no longer waits for this answer. When it is this very answer that landed (a task
          // delivered again after its answer reached Jira), the task did what it was for.
          if (!(error instanceof JiraHttpError) || error.status !== 409) throw error;
          const now = await asApprover.getApproval(target.issueId, target.approvalId, { signal });
          const verdict = decisionVerdict(now, target, decision);
          if (verdict !== true && verdict.status === 'success') return { meta: verdict.meta };
          throw error;
        }
        const meta: Record<string, unknown> = { finalDecision: answered.finalDecision };
        if (target.comment !== undefined)
          meta.comment = await postComment(asApprover, target, signal, logger);
        return { meta };
      },
    });
  }

  async *#changes(
    since: Date | undefined,
    signal: AbortSignal,
    logger: Logger,
  ): AsyncIterable<SourceApproval> {
    const approvers = new Map<string, UserMappingEntry>();
    const onApprovals = (approvals: readonly JiraApproval[]) => {
      for (const entry of approverMappingEntries(approvals)) approvers.set(entry.systemUserId, entry);
    };
    for await (const approval of changedApprovals(this.#jira, this.#jql, since, { signal, onApprovals })) {
      this.#known.read([approval]);
      yield approval;
    }
    // Only once the read came to its end: a run the kit interrupts does not get here.
    await this.#mapUsers([...approvers.values()], signal, logger);
  }

  /** The current records of these approvals (`lookupApprovals`); those Jira no longer has are forgotten. */
  async *#lookup(ids: readonly string[], signal: AbortSignal): AsyncIterable<SourceApproval> {
    const found = new Set<string>();
    for await (const approval of lookupApprovals(this.#jira, ids, { signal })) {
      found.add(approval.id);
      this.#known.read([approval]);
      yield approval;
    }
    this.#known.gone(ids.filter((id) => !found.has(id)));
  }

  /**
   * The approvals a verified webhook delivery concerns (see `deliveries.ts`). A body that is not an issue event's
   * throws: the kit counts the delivery malformed and drops it. When Jira cannot be asked for the issue's
   * approvals, those read of it before are named, and the next sync run brings the change.
   */
  async #approvalIds(delivery: PushDelivery, signal: AbortSignal, logger: Logger): Promise<string[]> {
    const event = parseIssueEvent(delivery.body);
    if (event === undefined) return [];
    try {
      return await approvalIdsOfEvent(event, this.#jira, this.#known, { signal });
    } catch (error) {
      if (signal.aborted) throw error;
      logger.warn(
        { err: error, issueKey: event.issueKey, webhookEvent: event.webhookEvent },
        "the approvals of a webhook's request could not be read from Jira; the next sync run brings the change",
      );
      return this.#known.of(event.issueId);
    }
  }

  /**
   * Maps the approvers to the service's users by email (the kit's `syncUserMappings`), except those this process
   * has mapped by the same email already. A failure is logged, not thrown: the approvals are synced all the same,
   * and the next run tries again.
   */
  async #mapUsers(entries: readonly UserMappingEntry[], signal: AbortSignal, logger: Logger): Promise<void> {
    if (this.#userMappings === undefined) return;
    const fresh = entries.filter(({ systemUserId, email }) => this.#mapped.get(systemUserId) !== email);
    if (fresh.length === 0) return;
    const { management, systemId } = this.#userMappings;
    try {
      const report = await syncUserMappings(management, systemId, fresh, { signal, maxListed: fresh.length });
      const unmapped = new Set([...report.unknownEmails, ...report.failures.map(({ email }) => email)]);
      for (const { systemUserId, email } of fresh) {
        if (!unmapped.has(email)) this.#mapped.set(systemUserId, email);
      }
      const { mapped, unchanged, unknown, failed } = report;
      logger.info({ mapped, unchanged, unknown, failed }, 'user mappings synced');
      if (unknown > 0 || failed > 0) {
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

/**
 * Posts the approver's comment on the request, once the answer landed. A comment Jira refuses does not undo the
 * answer, nor fail the task (it would be delivered again, and its answer is in Jira): it is logged, and the
 * task's `meta.comment` says `not_posted`.
 */
async function postComment(
  jira: JiraClient,
  target: DecisionTarget,
  signal: AbortSignal,
  logger: Logger,
): Promise<'posted' | 'not_posted'> {
  try {
    await jira.addComment(target.issueId, target.comment!, { signal });
    return 'posted';
  } catch (error) {
    if (signal.aborted) throw error;
    logger.warn({ err: error, issueKey: target.issueKey }, "the approver's comment was not posted in Jira");
    return 'not_posted';
  }
}

/**
 * The approver's Jira credentials from the task: `email` and `apiToken`, or `username` and `password` as a
 * sign-in form gives them (Jira's basic auth takes the email as the user name and an API token as the password).
 * @throws {AuthenticationError} when either is missing: the approver has to give them again.
 */
export function approverCredentials(credentials: Credentials | undefined): JiraCredentials {
  const field = (...names: string[]) =>
    names
      .map((name) =>
        credentials !== undefined && Object.hasOwn(credentials, name) ? credentials[name] : undefined,
      )
      .map((secret) => secret?.reveal().trim())
      .find((value) => value !== undefined && value !== '');
  const email = field('email', 'username');
  const apiToken = field('apiToken', 'password');
  if (email === undefined || apiToken === undefined || !checkEmail(email).ok) {
    throw new AuthenticationError(
      "The approver's Jira credentials need the Atlassian account's email (email or username) and an API token " +
        '(apiToken or password)',
    );
  }
  return { email, apiToken };
}

/**
 * The precheck's verdict on the approval as Jira holds it now: `true` while it waits for this approver's answer.
 * Otherwise the decision is not sent again: a `success` when the approver already gave this very answer (a
 * previous delivery of the task, or the approver in Jira itself), a `systemError` (`already_decided`) when the
 * approval was decided otherwise, and a `systemError` (`not_an_approver`) when the account is no longer its approver.
 */
export function decisionVerdict(
  approval: JiraApproval,
  target: DecisionTarget,
  decision: JiraDecision,
): PrecheckVerdict {
  if (isPendingFor(approval, target.accountId)) return true;
  const name = approval.name === undefined ? 'the approval' : `"${approval.name}"`;
  const own = approval.approvers.find(({ approver }) => approver.accountId === target.accountId);
  if (own === undefined) {
    return {
      status: 'systemError',
      meta: {
        code: 'not_an_approver',
        message: `${target.issueKey}: this account is no longer an approver of ${name}`,
      },
    };
  }
  if (own.approverDecision === ANSWER[decision]) {
    return {
      status: 'success',
      meta: {
        code: 'already_answered',
        message: `${target.issueKey}: ${name} was already ${own.approverDecision} by this approver in Jira`,
      },
    };
  }
  const message =
    own.approverDecision === 'pending'
      ? `${target.issueKey}: ${name} was already ${approval.finalDecision} in Jira`
      : `${target.issueKey}: this approver already ${own.approverDecision} ${name} in Jira`;
  return { status: 'systemError', meta: { code: 'already_decided', message } };
}

/**
 * The UI template of a request type's approvals: the request's summary, its type, key and reporter, the
 * approval's name, then the form's fields, the approvers' answers and the link to the request. Every request type
 * gets this one to start with; give one its own here, by its id.
 */
export function requestTypeTemplate(requestTypeId: string): UiTemplateWrite {
  return {
    type: 'card',
    schemaId: requestTypeSchemaId(requestTypeId),
    template: {
      title: '{{summary}}',
      subtitle: '{{requestType}} {{issueKey}}, raised by {{reporter}}',
      description: '{{approval.name}}',
      fields: [
        { label: 'Status', path: 'status' },
        { label: 'Raised', path: 'createdAt' },
        { label: 'Form', path: 'fields' },
        { label: 'Approvers', path: 'approval.approvers' },
        { label: 'In Jira', path: 'link' },
      ],
    },
  };
}

/**
 * Builds the connector from the worker's environment: `JIRA_BASE_URL`, `JIRA_EMAIL`, `JIRA_API_TOKEN`,
 * `JIRA_JQL`, and optionally `JIRA_REQUEST_TYPES`, `JIRA_WEBHOOK` and the user mappings' `APPROVAL_MANAGEMENT_TOKEN`
 * and `APPROVAL_SYSTEM_ID`. A missing or invalid one is a `ValidationError` naming each (the worker's exit code 2).
 */
const build: ConnectorFactory = ({ env }) => {
  const settings = readEnvironment(env);
  const { baseUrl, email, apiToken, jql, requestTypes, userMappings, webhook } = settings;
  return new JiraConnector({
    jira: new JiraClient({ baseUrl, email, apiToken }),
    jql,
    requestTypes,
    webhook,
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
