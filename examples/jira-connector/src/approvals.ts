/**
 * From Jira Service Management's requests and approvals to the kit's `SourceApproval`: one service approval per
 * approver of each Jira approval, because the service routes an approval to one approver and Jira lets each
 * approver answer for themselves.
 *
 * - **id**: `<issue id>.<approval id>.<approver's account id>` ({@link sourceApprovalId}); the issue's id, not its
 *   key, because a key changes when the issue moves to another project.
 * - **approver**: the approver's Atlassian account id; the service maps it to its user through the system's user
 *   mappings ({@link approverMappingEntries} gives the kit's `syncUserMappings` the ones whose email Jira shows).
 * - **resolved**: once the approval has its final decision, or this approver has answered.
 * - **lastModified**: the later of the request's `updated` and the approval's `completedDate`. Every change of the
 *   request (an edit, an answer of any approver, a transition) moves `updated`, which the incremental search
 *   reads by; `completedDate` keeps the stamp moving forward even if a decision reached the approval without
 *   touching the issue.
 * - **schemaId**: one per request type, `jira-request-type-<request type id>`, so each request type can have its
 *   own UI template.
 * @module
 */
import type { SourceApproval } from 'approval-connector-kit';
import type { UserMappingEntry } from 'approval-connector-kit/worker';
import { JiraHttpError } from './errors.js';
import type { ChangedIssue, JiraClient } from './jira-client.js';
import type { JiraApproval, JiraCustomerRequest } from './schemas.js';

/** What a service approval's id stands for in Jira. */
export interface JiraApprovalRef {
  /** The issue's numeric id. */
  issueId: string;
  /** The approval's numeric id. */
  approvalId: string;
  /** The approver's Atlassian account id. */
  accountId: string;
}

/** Options of the mapping. */
export interface MappingOptions {
  /** The schema of a request's approvals. @default `jira-request-type-<requestTypeId>` */
  schemaIdOf?: (request: JiraCustomerRequest) => string;
}

/** Options of the reads. */
export interface ReadOptions extends MappingOptions {
  /** Stops the read: it rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Issues per search page. @default 100 */
  pageSize?: number;
  /**
   * Told each request's approvals as Jira answered them, before they are mapped: where the connector finds the
   * approvers' emails for the user mappings ({@link approverMappingEntries}), which `SourceApproval` does not carry.
   */
  onApprovals?: (approvals: readonly JiraApproval[]) => void;
}

/** The schema of the approvals of a request type, unless `schemaIdOf` says otherwise. */
export function requestTypeSchemaId(requestTypeId: string): string {
  return `jira-request-type-${requestTypeId}`;
}

/** The service approval's id of one approver of one Jira approval. */
export function sourceApprovalId({ issueId, approvalId, accountId }: JiraApprovalRef): string {
  return `${issueId}.${approvalId}.${accountId}`;
}

/** The Jira approval and approver a service approval's id names; `undefined` when it names none. */
export function parseSourceApprovalId(id: string): JiraApprovalRef | undefined {
  const match = /^(\d+)\.(\d+)\.(.+)$/.exec(id);
  if (match === null) return undefined;
  return { issueId: match[1]!, approvalId: match[2]!, accountId: match[3]! };
}

/**
 * Whether the approval still waits for this account's answer: it has no final decision yet, and the account is
 * one of its approvers and has not answered. The precheck of an action asks this of the approval it reads.
 */
export function isPendingFor(approval: JiraApproval, accountId: string): boolean {
  if (approval.finalDecision !== 'pending') return false;
  const own = approval.approvers.find(({ approver }) => approver.accountId === accountId);
  return own?.approverDecision === 'pending';
}

/** The service approvals of one request's approvals: one per approver. */
export function toSourceApprovals(
  issue: ChangedIssue,
  request: JiraCustomerRequest,
  approvals: readonly JiraApproval[],
  options: MappingOptions = {},
): SourceApproval[] {
  const schemaId = options.schemaIdOf?.(request) ?? requestTypeSchemaId(request.requestTypeId);
  const requestData = {
    issueKey: request.issueKey,
    summary: issue.summary,
    requestType: request.requestType?.name ?? null,
    reporter: request.reporter?.displayName ?? null,
    status: request.currentStatus?.status ?? null,
    createdAt:
      request.createdDate === undefined ? null : new Date(request.createdDate.epochMillis).toISOString(),
    link: request._links?.web ?? null,
    // The form's fields as the customer filled them in, in the form's order; the summary is shown above.
    fields: request.requestFieldValues
      .filter(({ fieldId }) => fieldId !== 'summary')
      .map(({ fieldId, label, value }) => ({ id: fieldId, label: label ?? fieldId, value: value ?? null })),
  };
  return approvals.flatMap((approval) => {
    const completed = approval.completedDate?.epochMillis ?? Number.NEGATIVE_INFINITY;
    const lastModified = new Date(Math.max(issue.updated.getTime(), completed));
    const approvalData = {
      id: approval.id,
      name: approval.name ?? null,
      finalDecision: approval.finalDecision,
      approvers: approval.approvers.map(({ approver, approverDecision }) => ({
        name: approver.displayName ?? approver.accountId,
        decision: approverDecision,
      })),
    };
    return approval.approvers.map(({ approver }) => ({
      id: sourceApprovalId({
        issueId: request.issueId,
        approvalId: approval.id,
        accountId: approver.accountId,
      }),
      schemaId,
      approver: approver.accountId,
      resolved: !isPendingFor(approval, approver.accountId),
      lastModified,
      // Who decides this one, by name: what the app shows where no user mapping names the account.
      data: {
        ...requestData,
        approverName: approver.displayName ?? approver.accountId,
        approval: approvalData,
      },
    }));
  });
}

/**
 * The approvers whose email Jira shows (it hides it by the user's privacy settings), as the kit's
 * `syncUserMappings` takes them: one entry per account.
 */
export function approverMappingEntries(approvals: Iterable<JiraApproval>): UserMappingEntry[] {
  const entries = new Map<string, UserMappingEntry>();
  for (const approval of approvals) {
    for (const { approver } of approval.approvers) {
      const email = approver.emailAddress?.trim();
      if (email) entries.set(approver.accountId, { systemUserId: approver.accountId, email });
    }
  }
  return [...entries.values()];
}

/**
 * The incremental read: the approvals of every request of `jql` updated at or after `since` (all of them when
 * `since` is undefined), request by request in the order of their `updated`. A request without approvals yields
 * nothing; one deleted while it is read is skipped (reconciliation, {@link lookupApprovals}, resolves its
 * approvals).
 */
export async function* changedApprovals(
  jira: JiraClient,
  jql: string,
  since: Date | undefined,
  options: ReadOptions = {},
): AsyncIterable<SourceApproval> {
  const { signal, pageSize } = options;
  for await (const issue of jira.changedIssues(jql, since, { signal, pageSize })) {
    yield* await approvalsOfIssue(jira, issue, options);
  }
}

/**
 * Reconciliation: the current records of these service approvals. Each request is read on its own
 * (`GET /rest/api/3/issue/{id}`, where it is stored, not through the search index): a `404` means it was deleted
 * or the sync account may no longer see it, and its approvals are left out, so the kit marks them resolved. So are
 * an approval or approver the request no longer has, and an id that is not of this connector. Any other failure
 * fails the lookup: a request that could not be read is never taken as deleted.
 *
 * A search (`id in (…)`) would read 50 at once, but Jira refuses the whole query (`400`) as soon as one id was
 * deleted or cannot be seen, and may answer fewer issues than asked for without saying which.
 */
export async function* lookupApprovals(
  jira: JiraClient,
  ids: readonly string[],
  options: ReadOptions = {},
): AsyncIterable<SourceApproval> {
  const wanted = new Set(ids);
  const issueIds = [...new Set(ids.flatMap((id) => parseSourceApprovalId(id)?.issueId ?? []))];
  for (const issueId of issueIds) {
    const issue = await jira.issue(issueId, { signal: options.signal });
    if (issue === undefined) continue;
    for (const approval of await approvalsOfIssue(jira, issue, options)) {
      if (wanted.has(approval.id)) yield approval;
    }
  }
}

async function approvalsOfIssue(
  jira: JiraClient,
  issue: ChangedIssue,
  options: ReadOptions,
): Promise<SourceApproval[]> {
  const signal = options.signal;
  try {
    const approvals: JiraApproval[] = [];
    for await (const approval of jira.listApprovals(issue.id, { signal })) approvals.push(approval);
    if (approvals.length === 0) return [];
    const request = await jira.getRequest(issue.id, { signal });
    options.onApprovals?.(approvals);
    return toSourceApprovals(issue, request, approvals, options);
  } catch (error) {
    if (error instanceof JiraHttpError && error.status === 404) return [];
    throw error;
  }
}
