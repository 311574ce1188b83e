/**
 * Jira's webhook deliveries, as the connector's push path reads them: whether one is genuine, its id, and the
 * approvals it concerns. The kit takes these as hints: it reads the approvals named again through the connector's
 * `lookup()` and pushes what Jira says now, so a delivery that is late, repeated or out of order changes nothing
 * wrong.
 *
 * - **Genuine**: Jira signs the deliveries of an admin webhook created with a secret, `X-Hub-Signature:
 *   sha256=<HMAC-SHA256 of the body, in hex>` (Atlassian's webhooks page, "Secure admin webhooks"). The signature
 *   is checked over the raw body before anything parses it, in constant time, with the kit's `verifyHmacSignature`.
 *   An unsigned delivery is refused: this connector takes no delivery it cannot verify.
 * - **Its id**: `X-Atlassian-Webhook-Identifier`, the same on every retry of a delivery, which is what the kit
 *   dedupes by.
 * - **The approvals**: `jira:issue_created`, `jira:issue_updated` and `jira:issue_deleted` name an issue, never its
 *   approvals (Atlassian documents no approvals in the payload). So for a created or updated issue, its approvals
 *   are listed (`GET /rest/servicedeskapi/request/{issueId}/approval`, as the sync account), each approver of each
 *   one an approval in the service. The approvals this process read of the issue before are named too, so that an
 *   approver the request no longer has is looked up, found gone, and resolved. A deleted issue can no longer be
 *   read: its approvals are those read before, and without any (a worker started since), the next reconciliation
 *   resolves them.
 * @module
 */
import {
  type PushDelivery,
  type Secret,
  type SourceApproval,
  verifyHmacSignature,
} from 'approval-connector-kit';
import { z } from 'zod';
import { parseSourceApprovalId, sourceApprovalId } from './approvals.js';
import { JiraError, JiraHttpError } from './errors.js';
import type { JiraClient } from './jira-client.js';
import { ISSUE_EVENTS, type IssueEvent } from './webhooks.js';

/** A delivery's body that is not what Jira documents for an issue event: the kit counts it and drops it. */
export class JiraDeliveryError extends JiraError {
  constructor(problem: string) {
    super('jira_invalid_delivery', `The webhook delivery ${problem}`);
  }
}

/** Whether a delivery carries Jira's signature of its body under `secret`; without a secret, none is genuine. */
export function verifyJiraDelivery(delivery: PushDelivery, secret: Secret | undefined): boolean {
  if (secret === undefined) return false;
  return verifyHmacSignature({
    secret,
    body: delivery.body,
    signature: delivery.headers['x-hub-signature'],
    prefix: 'sha256=',
  });
}

/** `X-Atlassian-Webhook-Identifier`: the delivery's id, the same on each of its retries. */
export function jiraDeliveryId(delivery: PushDelivery): string | undefined {
  const identifier = delivery.headers['x-atlassian-webhook-identifier']?.trim();
  return identifier === undefined || identifier === '' ? undefined : identifier;
}

/** An issue event as a delivery tells it. */
export interface JiraIssueEvent {
  webhookEvent: IssueEvent;
  /** The issue's numeric id. */
  issueId: string;
  issueKey: string;
}

const IssueEventBody = z.looseObject({
  webhookEvent: z.string(),
  issue: z.looseObject({ id: z.string().regex(/^\d+$/), key: z.string() }).optional(),
});

/**
 * The issue event a delivery's body tells; `undefined` for an event of another kind (a comment's, a sprint's),
 * which concerns no approval by itself.
 * @throws {JiraDeliveryError} when the body is not JSON, or an issue event without its issue's id and key.
 */
export function parseIssueEvent(body: Buffer): JiraIssueEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new JiraDeliveryError('is not JSON');
  }
  const parsed = IssueEventBody.safeParse(json);
  if (!parsed.success) throw new JiraDeliveryError('has no webhookEvent');
  const { webhookEvent, issue } = parsed.data;
  if (!(ISSUE_EVENTS as readonly string[]).includes(webhookEvent)) return undefined;
  if (issue === undefined) throw new JiraDeliveryError(`is a ${webhookEvent} without the issue's id and key`);
  return { webhookEvent: webhookEvent as IssueEvent, issueId: issue.id, issueKey: issue.key };
}

/**
 * The service approvals this process read of each issue lately, by issue id: what a deleted issue's event names,
 * and what an updated one's names besides what Jira lists now. Bounded: the issues least recently read go first.
 */
export class KnownApprovals {
  readonly #byIssue = new Map<string, Set<string>>();
  readonly #maxIssues: number;

  /** @param maxIssues how many issues it keeps the approvals of */
  constructor(maxIssues = 10_000) {
    this.#maxIssues = maxIssues;
  }

  /** The ids of the approvals of `issueId` read lately. */
  of(issueId: string): string[] {
    return [...(this.#byIssue.get(issueId) ?? [])];
  }

  /** Records approvals read from Jira. */
  read(approvals: Iterable<Pick<SourceApproval, 'id'>>): void {
    for (const { id } of approvals) {
      const issueId = parseSourceApprovalId(id)?.issueId;
      if (issueId === undefined) continue;
      const ids = this.#byIssue.get(issueId) ?? new Set();
      ids.add(id);
      this.#byIssue.delete(issueId);
      this.#byIssue.set(issueId, ids);
    }
    for (const issueId of this.#byIssue.keys()) {
      if (this.#byIssue.size <= this.#maxIssues) break;
      this.#byIssue.delete(issueId);
    }
  }

  /** Forgets approvals Jira no longer has: asked for in a lookup, and not found. */
  gone(ids: Iterable<string>): void {
    for (const id of ids) {
      const issueId = parseSourceApprovalId(id)?.issueId;
      const known = issueId === undefined ? undefined : this.#byIssue.get(issueId);
      known?.delete(id);
      if (known?.size === 0) this.#byIssue.delete(issueId!);
    }
  }
}

/**
 * The service approvals an issue event concerns: for a created or updated issue, each approver of each approval
 * Jira lists for it now, and those read of it before; for a deleted issue (or one Jira answers `404` for), those
 * read before.
 */
export async function approvalIdsOfEvent(
  event: JiraIssueEvent,
  jira: JiraClient,
  known: KnownApprovals,
  options: { signal?: AbortSignal } = {},
): Promise<string[]> {
  const ids = new Set(known.of(event.issueId));
  if (event.webhookEvent === 'jira:issue_deleted') return [...ids];
  try {
    for await (const approval of jira.listApprovals(event.issueId, { signal: options.signal })) {
      for (const { approver } of approval.approvers) {
        ids.add(
          sourceApprovalId({
            issueId: event.issueId,
            approvalId: approval.id,
            accountId: approver.accountId,
          }),
        );
      }
    }
  } catch (error) {
    // Deleted since, or no longer visible to the sync account: the approvals read before are what it names.
    if (!(error instanceof JiraHttpError && error.status === 404)) throw error;
  }
  return [...ids];
}
