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
  /** @default none: an option without a `Nature` approves when its text is one of {@link DECISION_TEXTS}' `approve` */
  approve?: readonly string[];
  /** @default none: an option without a `Nature` rejects when its text is one of {@link DECISION_TEXTS}' `reject` */
  reject?: readonly string[];
}

/**
 * What an option without a `Nature` stands for when no decision keys are set for that task type: its
 * `DecisionText`, trimmed and compared without regard to case, equal to one of these (English and German, the
 * texts of SAP's standard workflow decisions). A text that only contains one ("Approve with changes") is none.
 */
export const DECISION_TEXTS = {
  approve: [
    'approve',
    'approved',
    'accept',
    'accepted',
    'release',
    'released',
    'genehmigen',
    'genehmigt',
    'freigeben',
  ],
  reject: ['reject', 'rejected', 'decline', 'declined', 'deny', 'denied', 'ablehnen', 'abgelehnt'],
} as const satisfies Record<DecisionType, readonly string[]>;

/** How {@link toSourceApprovals} names what it produces. */
export interface ToSourceApprovalsOptions {
  /**
   * The decisions that approve and reject, among the options without a `Nature`.
   * @default none: an option's `Nature` says, else its text ({@link DECISION_TEXTS})
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
 * Every task gives its approvals, whatever its decision options: one none of whose options approves (or rejects)
 * still shows, with its options as SAP gives them, and an `approve` (`reject`) task for it ends in a `systemError`
 * asking to decide it in SAP ({@link chooseDecision}). `lastModified` is left out: the task collection has no time of last change (a
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
      `decide this one in SAP: no option maps to ${type} (it offers ${offered === '' ? 'no decision' : offered})`,
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
 * one; else, for each task type, by its `DecisionKey` among that type's `decisionKeys` when any are set, or by its
 * `DecisionText` among {@link DECISION_TEXTS} when none are; `undefined` when nothing says.
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
  const text = option.DecisionText?.trim().toLowerCase() ?? '';
  const byText = (type: DecisionType) =>
    (decisionKeys?.[type] ?? []).length === 0 && (DECISION_TEXTS[type] as readonly string[]).includes(text);
  if (byText('approve')) return 'approve';
  if (byText('reject')) return 'reject';
  return undefined;
}

/**
 * The task types none of a task's options stands for ({@link decisionTypeOf}): what cannot be decided from the
 * service, only in SAP.
 */
export function unmappedTypes(
  options: readonly DecisionOption[],
  decisionKeys?: DecisionKeys,
): DecisionType[] {
  const mapped = new Set(options.map((option) => decisionTypeOf(option, decisionKeys)));
  return (Object.keys(DECISION_NATURES) as DecisionType[]).filter((type) => !mapped.has(type));
}

function escapePart(part: string): string {
  return part.replaceAll('%', '%25').replaceAll('~', '%7E');
}
