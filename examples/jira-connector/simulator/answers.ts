/**
 * The bodies of the simulated Jira's answers, field for field as Atlassian documents them (see
 * `../test/fixtures/README.md` for the pages). Date-times are written in the site's default user time zone, as the
 * platform API's "Timestamps" section says of `updated` and `created`.
 * @module
 */
import { type Account, type Approval, type Issue, SERVICE_DESK_ID, type SiteState } from './state.js';
import { dateDto, jiraDateTime } from './time.js';

/** The fields a search can return for an issue. */
export const SEARCHABLE_FIELDS = ['summary', 'updated', 'created', 'status'] as const;

const EXPANDS = [
  'participant',
  'status',
  'sla',
  'requestType',
  'serviceDesk',
  'attachment',
  'action',
  'comment',
];

/** `GET /rest/api/3/myself` (the User bean). */
export function myselfBody(base: string, account: Account) {
  return {
    self: `${base}/rest/api/3/user?accountId=${account.accountId}`,
    accountId: account.accountId,
    accountType: 'atlassian',
    emailAddress: account.email,
    avatarUrls: avatarUrls(account),
    displayName: account.displayName,
    active: true,
    timeZone: account.timeZone,
    locale: 'en_US',
    groups: { size: 0, items: [] },
    applicationRoles: { size: 0, items: [] },
    expand: 'groups,applicationRoles',
  };
}

/** One issue of a search page (IssueBean), with the fields asked for. */
export function searchIssueBody(base: string, issue: Issue, fields: readonly string[], timeZone: string) {
  if (fields.length === 0) return { id: String(issue.id) };
  const values: Record<string, unknown> = {};
  for (const field of fields) {
    if (field === 'summary') values.summary = issue.summary;
    else if (field === 'updated') values.updated = jiraDateTime(issue.updatedAt, timeZone);
    else if (field === 'created') values.created = jiraDateTime(issue.createdAt, timeZone);
    else if (field === 'status')
      values.status = { name: issue.status, statusCategory: { key: issue.statusCategory } };
  }
  return {
    expand: '',
    id: String(issue.id),
    key: issue.key,
    self: `${base}/rest/api/3/issue/${issue.id}`,
    fields: values,
  };
}

/** `GET /rest/servicedeskapi/request/{issueIdOrKey}` (CustomerRequestDTO). */
export function customerRequestBody(
  base: string,
  state: SiteState,
  issue: Issue,
  expandRequestType: boolean,
) {
  const type = state.requestTypes.find(({ id }) => id === issue.requestTypeId)!;
  const reporter = state.account(issue.reporterId)!;
  return {
    _expands: EXPANDS,
    issueId: String(issue.id),
    issueKey: issue.key,
    requestTypeId: type.id,
    ...(expandRequestType
      ? {
          requestType: {
            _expands: ['field'],
            id: type.id,
            _links: {
              self: `${base}/rest/servicedeskapi/servicedesk/${SERVICE_DESK_ID}/requesttype/${type.id}`,
            },
            name: type.name,
            description: type.description,
            helpText: '',
            issueTypeId: type.issueTypeId,
            serviceDeskId: SERVICE_DESK_ID,
            groupIds: ['1'],
          },
        }
      : {}),
    serviceDeskId: SERVICE_DESK_ID,
    createdDate: dateDto(issue.createdAt, state.timeZone),
    reporter: userBody(base, reporter),
    requestFieldValues: [
      { fieldId: 'summary', label: 'Summary', value: issue.summary },
      ...issue.fields.map(({ fieldId, label, value }) => ({ fieldId, label, value })),
    ],
    currentStatus: {
      status: issue.status,
      statusCategory: issue.statusCategory,
      statusDate: dateDto(issue.statusAt, state.timeZone),
    },
    _links: {
      jiraRest: `${base}/rest/api/2/issue/${issue.id}`,
      web: `${base}/servicedesk/customer/portal/${SERVICE_DESK_ID}/${issue.key}`,
      self: `${base}/rest/servicedeskapi/request/${issue.id}`,
    },
  };
}

/** An approval (ApprovalDTO) as `reader` sees it. */
export function approvalBody(
  base: string,
  state: SiteState,
  issue: Issue,
  approval: Approval,
  reader: Account,
) {
  return {
    id: String(approval.id),
    name: approval.name,
    finalDecision: approval.finalDecision,
    canAnswerApproval: state.isPendingFor(approval, reader.accountId),
    approvers: approval.approvers.map(({ accountId, decision }) => ({
      approver: userBody(base, state.account(accountId)!),
      approverDecision: decision,
    })),
    createdDate: dateDto(approval.createdAt, state.timeZone),
    ...(approval.completedAt === undefined
      ? {}
      : { completedDate: dateDto(approval.completedAt, state.timeZone) }),
    _links: { self: `${base}/rest/servicedeskapi/request/${issue.id}/approval/${approval.id}` },
  };
}

/** A comment on a request (CommentDTO), as its author sees it. */
export function commentBody(
  base: string,
  state: SiteState,
  issue: Issue,
  comment: { id: string; body: string; public: boolean },
  author: Account,
) {
  return {
    _expands: ['attachment', 'renderedBody'],
    id: comment.id,
    body: comment.body,
    public: comment.public,
    author: userBody(base, author),
    created: dateDto(issue.updatedAt, state.timeZone),
    _links: { self: `${base}/rest/servicedeskapi/request/${issue.id}/comment/${comment.id}` },
  };
}

/** A page of a Service Management collection (PagedDTO). */
export function pageBody<T>(
  base: string,
  path: string,
  values: readonly T[],
  start: number,
  limit: number,
  total: number,
) {
  const last = start + values.length >= total;
  const link = (at: number) => `${base}${path}?start=${at}&limit=${limit}`;
  return {
    _expands: [],
    size: values.length,
    start,
    limit,
    isLastPage: last,
    _links: {
      self: link(start),
      base: `${base}/rest/servicedeskapi`,
      context: '',
      ...(last ? {} : { next: link(start + limit) }),
      ...(start > 0 ? { prev: link(Math.max(0, start - limit)) } : {}),
    },
    values,
  };
}

/** Service Management's ErrorResponse. */
export function serviceDeskError(message: string, i18nKey: string) {
  return { errorMessage: message, i18nErrorMessage: { i18nKey, parameters: [] } };
}

/** The platform's ErrorCollection. */
export function platformError(message: string) {
  return { errorMessages: [message], errors: {} };
}

/** Service Management's UserDTO; the email is null when the user hides it. */
function userBody(base: string, account: Account) {
  const self = `${base}/rest/api/2/user?accountId=${account.accountId}`;
  return {
    accountId: account.accountId,
    emailAddress: account.emailVisible ? account.email : null,
    displayName: account.displayName,
    active: true,
    timeZone: account.timeZone,
    _links: { jiraRest: self, avatarUrls: avatarUrls(account), self },
  };
}

function avatarUrls(account: Account) {
  const initials = account.displayName
    .split(' ')
    .map((word) => word[0])
    .join('');
  const url = (size: number) =>
    `https://avatar-management--avatars.server-location.prod.public.atl-paas.net/initials/${initials}-5.png?size=${size}&s=${size}`;
  return { '48x48': url(48), '24x24': url(24), '16x16': url(16), '32x32': url(32) };
}

/** A user as a webhook names them (UserDetails): the email only when the user shows it. */
export function userDetailsBody(base: string, account: Account) {
  return {
    self: `${base}/rest/api/3/user?accountId=${account.accountId}`,
    accountId: account.accountId,
    accountType: 'atlassian',
    ...(account.emailVisible ? { emailAddress: account.email } : {}),
    avatarUrls: avatarUrls(account),
    displayName: account.displayName,
    active: true,
    timeZone: account.timeZone,
  };
}

/** The issue a webhook delivers (IssueBean): its key fields, its project, type, status and reporter. */
export function webhookIssueBody(base: string, state: SiteState, issue: Issue) {
  const type = state.requestTypes.find(({ id }) => id === issue.requestTypeId)!;
  const bean = searchIssueBody(base, issue, SEARCHABLE_FIELDS, state.timeZone);
  const reporter = state.account(issue.reporterId);
  return {
    ...bean,
    fields: {
      ...bean.fields,
      project: { self: `${base}/rest/api/3/project/${issue.projectKey}`, key: issue.projectKey },
      issuetype: { self: `${base}/rest/api/3/issuetype/${type.issueTypeId}`, id: type.issueTypeId },
      ...(reporter === undefined ? {} : { reporter: userDetailsBody(base, reporter) }),
    },
  };
}
