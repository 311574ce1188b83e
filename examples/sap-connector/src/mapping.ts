/**
 * From SAP's tasks to the kit's approvals, and from the kit's task types back to SAP's decisions.
 * @module
 */
import type { SourceApproval } from 'approval-connector-kit';
import { SapDecisionUnavailableError } from './errors.js';
import type { DecisionOption, OpenTask, TaskRef } from './model.js';

/** The kit's task types, and the `Nature` of the decision option each one takes. */
export const DECISION_NATURES = { approve: 'POSITIVE', reject: 'NEGATIVE' } as const;
export type DecisionType = keyof typeof DECISION_NATURES;

/**
 * Which decisions are an approve and a reject where SAP does not say: the `DecisionKey`s of the options whose
 * `Nature` is empty. SAP documents `Nature` as a hint, left empty where the workflow step's customizing does not
 * maintain it; an option that has one is read by it, whatever these say.
 */
export interface DecisionKeys {
  /** @default none */
  approve?: readonly string[];
  /** @default none */
  reject?: readonly string[];
}

/** How {@link toSourceApprovals} names what it produces. */
export interface ToSourceApprovalsOptions {
  /**
   * The decisions that approve and reject, among the options without a `Nature`.
   * @default none: only an option's `Nature` says
   */
  decisionKeys?: DecisionKeys;
  /**
   * The approvals' schema (which UI template shows them).
   * @default 'sap-task'
   */
  schemaId?: string;
  /**
   * SAP users never made approvers, such as the technical user the connector reads with when it is an agent of
   * the tasks itself. Compared without regard to case, as SAP user names are.
   * @default none
   */
  ignoreUsers?: readonly string[];
}

/**
 * The approvals of one open task: one for each user who can decide it. That is the user who reserved it (status
 * RESERVED or IN_PROGRESS with a `Processor`), else each of its potential owners; whoever decides first decides for
 * all, and the task then leaves the inbox, so the kit marks all of them resolved.
 *
 * A task that offers neither an approving nor a rejecting decision ({@link isDecisionTask}) gives no approval:
 * the connector counts and logs it. `lastModified` is left out: the task collection has no time of last change (a
 * snapshot sync compares contents instead).
 */
export function toSourceApprovals(open: OpenTask, options: ToSourceApprovalsOptions = {}): SourceApproval[] {
  const { task, decisionOptions } = open;
  const decisions = decisionOptions.map((option) => ({
    key: option.DecisionKey,
    text: option.DecisionText ?? option.DecisionKey,
    type: decisionTypeOf(option, options.decisionKeys),
    commentMandatory: option.CommentMandatory,
  }));
  if (!isDecisionTask(decisionOptions, options.decisionKeys)) return [];
  const ignored = new Set((options.ignoreUsers ?? []).map((user) => user.toUpperCase()));
  const reserved = task.Status !== 'READY' && task.Processor !== undefined;
  const candidates = reserved
    ? [task.Processor as string]
    : task.PotentialOwners.results.map((user) => user.UniqueName);
  const approvers = [...new Set(candidates)].filter((user) => !ignored.has(user.toUpperCase()));
  const ref = { origin: task.SAP__Origin, instanceId: task.InstanceID };
  const data = {
    title: task.TaskTitle ?? task.TaskDefinitionName ?? task.InstanceID,
    taskName: task.TaskDefinitionName ?? null,
    taskDefinitionId: task.TaskDefinitionID ?? null,
    priority: task.Priority ?? null,
    status: task.Status,
    createdBy: task.CreatedByName ?? task.CreatedBy ?? null,
    createdOn: task.CreatedOn?.toISOString() ?? null,
    dueOn: task.CompletionDeadLine?.toISOString() ?? null,
    attributes: Object.fromEntries(
      task.CustomAttributeData.results.map((attribute) => [attribute.Name, attribute.Value]),
    ),
    decisions,
    sap: { origin: ref.origin, instanceId: ref.instanceId },
  };
  return approvers.map((approver) => ({
    id: approvalId(ref, approver),
    schemaId: options.schemaId ?? 'sap-task',
    approver,
    resolved: false,
    data,
  }));
}

/**
 * The approval id of a task for one approver: origin, instance id and user, each with `%` and `~` percent-encoded,
 * joined by `~` (for example `LOCAL_TGW~000001750567~AMILLER`). {@link parseApprovalId} reads it back.
 */
export function approvalId(ref: TaskRef, approver: string): string {
  return [ref.origin, ref.instanceId, approver].map(escapePart).join('~');
}

/** The task and approver an approval id names; throws a `TypeError` for an id {@link approvalId} did not make. */
export function parseApprovalId(id: string): { ref: TaskRef; approver: string } {
  const parts = typeof id === 'string' ? id.split('~') : [];
  if (parts.length !== 3 || parts.some((part) => part === '' || /%(?!25|7E)/i.test(part))) {
    throw new TypeError(
      `Expected an approval id such as LOCAL_TGW~000001750567~AMILLER, got ${JSON.stringify(id)}`,
    );
  }
  const [origin, instanceId, approver] = parts.map((part) =>
    part.replace(/%(25|7E)/gi, (encoded) => (encoded === '%25' ? '%' : '~')),
  ) as [string, string, string];
  return { ref: { origin, instanceId }, approver };
}

/**
 * The decision option a task type takes: the first option of `approve`'s or `reject`'s nature. Throws a
 * {@link SapDecisionUnavailableError}, sending nothing, when the task offers none, or when the option needs a
 * comment and `comments` is blank.
 */
export function chooseDecision(
  options: readonly DecisionOption[],
  type: DecisionType,
  comments: string,
  decisionKeys?: DecisionKeys,
): DecisionOption {
  const option = options.find((candidate) => decisionTypeOf(candidate, decisionKeys) === type);
  if (option === undefined) {
    const offered = options.map((candidate) => candidate.DecisionText ?? candidate.DecisionKey).join(', ');
    throw new SapDecisionUnavailableError(
      `This SAP task cannot be ${type === 'approve' ? 'approved' : 'rejected'} from here; it offers: ${offered || 'no decision'}`,
      'not_offered',
    );
  }
  if (option.CommentMandatory && comments.trim() === '') {
    throw new SapDecisionUnavailableError(
      `SAP requires a comment for the decision "${option.DecisionText ?? option.DecisionKey}"; add one and try again`,
      'comment_required',
    );
  }
  return option;
}

/**
 * The task type a decision option stands for: by its `Nature` (`POSITIVE` approve, `NEGATIVE` reject) when SAP gives
 * one, else by its `DecisionKey` among `decisionKeys`; `undefined` when neither says.
 */
export function decisionTypeOf(
  option: DecisionOption,
  decisionKeys?: DecisionKeys,
): DecisionType | undefined {
  const nature = option.Nature?.toUpperCase();
  if (nature === DECISION_NATURES.approve) return 'approve';
  if (nature === DECISION_NATURES.reject) return 'reject';
  if (nature !== undefined) return undefined;
  if (decisionKeys?.approve?.includes(option.DecisionKey)) return 'approve';
  if (decisionKeys?.reject?.includes(option.DecisionKey)) return 'reject';
  return undefined;
}

/** Whether a task offers an approving or a rejecting decision ({@link decisionTypeOf}), so that it is synced. */
export function isDecisionTask(options: readonly DecisionOption[], decisionKeys?: DecisionKeys): boolean {
  return options.some((option) => decisionTypeOf(option, decisionKeys) !== undefined);
}

function escapePart(part: string): string {
  return part.replaceAll('%', '%25').replaceAll('~', '%7E');
}
