/**
 * The parts of Jira's answers the client reads, as Atlassian documents them. Unknown fields are kept (Jira adds
 * fields over time); a field the connector relies on that is missing or of another type makes the answer invalid.
 *
 * - Jira Cloud platform REST API v3: `GET /rest/api/3/myself`, `GET /rest/api/3/search/jql`,
 *   `GET /rest/api/3/issue/{issueIdOrKey}`
 *   (https://developer.atlassian.com/cloud/jira/platform/rest/v3/).
 * - Jira Service Management Cloud REST API: `/rest/servicedeskapi/request/{issueIdOrKey}` and its `approval`
 *   resources (https://developer.atlassian.com/cloud/jira/service-desk/rest/api-group-request/).
 * @module
 */
import { z } from 'zod';

/** `GET /rest/api/3/myself`: the account the client signs in as. */
export const JiraMyself = z.looseObject({
  accountId: z.string(),
  displayName: z.string().optional(),
  emailAddress: z.string().nullish(),
  /** The account's time zone, in which Jira reads the date-times of a JQL query. */
  timeZone: z.string().nullish(),
});
export type JiraMyself = z.infer<typeof JiraMyself>;

/** One issue (IssueBean) of a search page or of `GET /rest/api/3/issue/{issueIdOrKey}`; `fields` holds the fields asked for. */
export const JiraIssue = z.looseObject({
  id: z.string(),
  key: z.string(),
  fields: z.record(z.string(), z.unknown()).default({}),
});
export type JiraIssue = z.infer<typeof JiraIssue>;

/** `GET /rest/api/3/search/jql` (SearchAndReconcileResults). */
export const JiraSearchPage = z.looseObject({
  issues: z.array(JiraIssue).default([]),
  /** Absent (or null) on the last page. */
  nextPageToken: z.string().nullish(),
  isLast: z.boolean().optional(),
});
export type JiraSearchPage = z.infer<typeof JiraSearchPage>;

/** Service Management's DateDTO. `epochMillis` is read; the other forms are for people. */
export const JiraDate = z.looseObject({
  epochMillis: z.number().int(),
  iso8601: z.string().optional(),
  jira: z.string().optional(),
  friendly: z.string().optional(),
});
export type JiraDate = z.infer<typeof JiraDate>;

/** Service Management's UserDTO. `emailAddress` may be absent or null, by the user's privacy settings. */
export const JiraUser = z.looseObject({
  accountId: z.string(),
  displayName: z.string().optional(),
  emailAddress: z.string().nullish(),
  active: z.boolean().optional(),
  timeZone: z.string().nullish(),
});
export type JiraUser = z.infer<typeof JiraUser>;

export const ApprovalDecision = z.enum(['approved', 'declined', 'pending']);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/** Service Management's ApprovalDTO. */
export const JiraApproval = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  /** The outcome, from every approver's answer and the approval's condition. */
  finalDecision: ApprovalDecision,
  /** Whether the account that asked may answer it now. */
  canAnswerApproval: z.boolean().optional(),
  approvers: z.array(z.looseObject({ approver: JiraUser, approverDecision: ApprovalDecision })).default([]),
  createdDate: JiraDate.optional(),
  /** Set once the approval has its final decision. */
  completedDate: JiraDate.nullish(),
});
export type JiraApproval = z.infer<typeof JiraApproval>;

/** `GET /rest/servicedeskapi/request/{issueIdOrKey}/approval` (PagedDTOApprovalDTO). */
export const JiraApprovalPage = z.looseObject({
  values: z.array(JiraApproval).default([]),
  isLastPage: z.boolean(),
  start: z.number().int().optional(),
  size: z.number().int().optional(),
  limit: z.number().int().optional(),
});
export type JiraApprovalPage = z.infer<typeof JiraApprovalPage>;

/** `GET /rest/servicedeskapi/request/{issueIdOrKey}?expand=requestType` (CustomerRequestDTO). */
export const JiraCustomerRequest = z.looseObject({
  issueId: z.string(),
  issueKey: z.string(),
  requestTypeId: z.string(),
  serviceDeskId: z.string(),
  /** Present when asked for with `expand=requestType`. */
  requestType: z.looseObject({ id: z.string(), name: z.string() }).optional(),
  createdDate: JiraDate.optional(),
  reporter: JiraUser.optional(),
  /** The request's fields as the customer sees them: field id, the form's label, and the value. */
  requestFieldValues: z
    .array(z.looseObject({ fieldId: z.string(), label: z.string().optional(), value: z.unknown() }))
    .default([]),
  currentStatus: z.looseObject({ status: z.string(), statusCategory: z.string().optional() }).optional(),
  _links: z.looseObject({ web: z.string().optional() }).optional(),
});
export type JiraCustomerRequest = z.infer<typeof JiraCustomerRequest>;

/** `POST /rest/servicedeskapi/request/{issueIdOrKey}/comment` (CommentDTO). */
export const JiraComment = z.looseObject({
  id: z.string(),
  body: z.string().optional(),
  public: z.boolean().optional(),
});
export type JiraComment = z.infer<typeof JiraComment>;

/** The platform's ErrorCollection and Service Management's ErrorResponse, as far as the client reads them. */
export const JiraErrorBody = z.looseObject({
  errorMessages: z.array(z.unknown()).optional(),
  errors: z.record(z.string(), z.unknown()).optional(),
  errorMessage: z.unknown().optional(),
});
