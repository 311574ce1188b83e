import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  approverMappingEntries,
  changedApprovals,
  isPendingFor,
  lookupApprovals,
  parseSourceApprovalId,
  sourceApprovalId,
  toSourceApprovals,
} from '../src/approvals.js';
import { type ChangedIssue, JiraClient } from '../src/jira-client.js';
import { JiraApproval, JiraApprovalPage, JiraCustomerRequest } from '../src/schemas.js';
import { fixture, fixtureText } from './fixtures.js';
import { BASE, MockJira } from './mock-jira.js';

const FRED = 'qm:a713c8ea-1075-4e30-9d96-891a7d181739:5ad6d3581db05e2a66fa80b';
const request = JiraCustomerRequest.parse(fixture('customer-request.json'));
const documented = [
  ...JiraApprovalPage.parse(fixture('request-approvals-page-1.json')).values,
  ...JiraApprovalPage.parse(fixture('request-approvals-page-2.json')).values,
];
const issue: ChangedIssue = {
  id: '107001',
  key: 'HELPDESK-1',
  summary: 'Request JSD help via REST',
  updated: new Date('2016-10-01T00:00:00Z'),
};

/** An approval of two approvers, Fred and Ada, with their answers. */
function twoApprovers(
  fred: 'approved' | 'pending',
  ada: 'approved' | 'pending',
  final: 'approved' | 'pending',
) {
  const approval = JiraApproval.parse(fixture('approval-pending.json'));
  const ada_ = {
    ...approval.approvers[0]!.approver,
    accountId: 'ada-1',
    emailAddress: null,
    displayName: 'Ada',
  };
  return {
    ...approval,
    finalDecision: final,
    approvers: [
      { approver: approval.approvers[0]!.approver, approverDecision: fred },
      { approver: ada_, approverDecision: ada },
    ],
  };
}

describe('toSourceApprovals', () => {
  it("makes one service approval per approver of each approval, keyed by the issue's id", () => {
    const approvals = toSourceApprovals(issue, request, documented);

    expect(
      approvals.map(({ id, approver, resolved, schemaId }) => ({ id, approver, resolved, schemaId })),
    ).toEqual([
      { id: `107001.1.${FRED}`, approver: FRED, resolved: true, schemaId: 'jira-request-type-25' },
      { id: `107001.2.${FRED}`, approver: FRED, resolved: true, schemaId: 'jira-request-type-25' },
      { id: `107001.3.${FRED}`, approver: FRED, resolved: false, schemaId: 'jira-request-type-25' },
    ]);
  });

  it('resolves an approver who has answered while the approval still waits for the others', () => {
    const [fred, ada] = toSourceApprovals(issue, request, [twoApprovers('approved', 'pending', 'pending')]);

    expect(fred).toMatchObject({ approver: FRED, resolved: true });
    expect(ada).toMatchObject({ approver: 'ada-1', resolved: false });
  });

  it("stamps lastModified with the later of the request's updated and the approval's completedDate", () => {
    const [completedEarlier, completedLater, pending] = toSourceApprovals(issue, request, documented);

    // Approval 1 completed 2016-09-29, before the request's update on 2016-10-01; approval 2 on 2016-10-06, after.
    expect(completedEarlier!.lastModified).toEqual(new Date('2016-10-01T00:00:00Z'));
    expect(completedLater!.lastModified).toEqual(new Date(1475739000000));
    expect(pending!.lastModified).toEqual(new Date('2016-10-01T00:00:00Z'));
  });

  it("puts the request's summary, type, reporter, status, link and form fields in data", () => {
    const [first] = toSourceApprovals(issue, request, documented);

    expect(first!.data).toEqual({
      issueKey: 'HELPDESK-1',
      summary: 'Request JSD help via REST',
      requestType: 'Get IT Help',
      reporter: 'Fred F. User',
      status: 'Waiting for Support',
      createdAt: '2015-10-08T07:42:00.000Z',
      link: 'https://your-domain.atlassian.net/servicedesk/customer/portal/10/HELPDESK-1',
      fields: [
        { id: 'description', label: 'Why do you need this?', value: 'I need a new *mouse* for my Mac' },
      ],
      approverName: 'Fred F. User',
      approval: {
        id: '1',
        name: 'Please approve this request',
        finalDecision: 'approved',
        approvers: [{ name: 'Fred F. User', decision: 'approved' }],
      },
    });
    expect(JSON.parse(JSON.stringify(first!.data))).toEqual(first!.data);
  });

  it('takes the schema from schemaIdOf when given', () => {
    const [first] = toSourceApprovals(issue, request, documented, {
      schemaIdOf: (r) => `it-${r.serviceDeskId}`,
    });

    expect(first!.schemaId).toBe('it-10');
  });

  it('makes nothing of an approval without approvers', () => {
    expect(toSourceApprovals(issue, request, [{ ...documented[0]!, approvers: [] }])).toEqual([]);
  });
});

describe('isPendingFor: the precheck', () => {
  it.each([
    ['the approval waits for this approver', twoApprovers('pending', 'pending', 'pending'), FRED, true],
    ['this approver has answered', twoApprovers('approved', 'pending', 'pending'), FRED, false],
    ['the approval has its final decision', twoApprovers('pending', 'approved', 'approved'), FRED, false],
    ['the account is not an approver', twoApprovers('pending', 'pending', 'pending'), 'someone-else', false],
  ])('%s: %s', (_, approval, accountId, pending) => {
    expect(isPendingFor(approval, accountId)).toBe(pending);
  });
});

describe('service approval ids', () => {
  it('round-trips, account ids with colons and dashes included', () => {
    const ref = {
      issueId: '10007',
      approvalId: '42',
      accountId: '712020:2ba1a5a9-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
    };

    expect(parseSourceApprovalId(sourceApprovalId(ref))).toEqual(ref);
  });

  it.each(['ITSM-7.42.abc', '10007.x.abc', '10007.42.', '10007', ''])('names no approval: %j', (id) => {
    expect(parseSourceApprovalId(id)).toBeUndefined();
  });
});

describe('approverMappingEntries', () => {
  it('lists each approver whose email Jira shows, once', () => {
    const entries = approverMappingEntries([...documented, twoApprovers('pending', 'pending', 'pending')]);

    expect(entries).toEqual([{ systemUserId: FRED, email: 'fred@example.com' }]);
  });
});

describe('the reads: changedApprovals and lookupApprovals', () => {
  let site: MockJira;

  beforeEach(() => {
    site = new MockJira();
  });

  afterEach(() => {
    site.done();
  });

  function answer(pathname: string, status: number, body: string): void {
    site.answer('GET', pathname, status, body);
  }

  /** What was asked, each call as its path and query. */
  const paths = () => site.sent.map(({ path, query }) => (query.size === 0 ? path : `${path}?${query}`));

  const jira = () => new JiraClient({ baseUrl: BASE, email: 'sync@example.com', apiToken: 'token' });
  const noApprovals = JSON.stringify({
    ...fixture('request-approvals-page-2.json'),
    size: 0,
    start: 0,
    values: [],
  });

  async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
    const list: T[] = [];
    for await (const item of items) list.push(item);
    return list;
  }

  it('reads a request only when it has approvals, and skips one deleted while it is read', async () => {
    answer('/rest/api/3/search/jql', 200, fixtureText('search-jql-page-1.json')); // 10002, 10003
    answer('/rest/api/3/search/jql', 200, fixtureText('search-jql-page-2.json')); // 10004
    answer('/rest/servicedeskapi/request/10002/approval', 200, noApprovals);
    answer('/rest/servicedeskapi/request/10003/approval', 200, fixtureText('request-approvals-page-1.json'));
    answer('/rest/servicedeskapi/request/10003/approval', 200, fixtureText('request-approvals-page-2.json'));
    answer('/rest/servicedeskapi/request/10003', 200, fixtureText('customer-request.json'));
    answer('/rest/servicedeskapi/request/10004/approval', 404, fixtureText('service-desk-error.json'));

    const read = await all(changedApprovals(jira(), 'project = ED', undefined));

    expect(read.map(({ id, resolved }) => [id, resolved])).toEqual([
      [`107001.1.${FRED}`, true],
      [`107001.2.${FRED}`, true],
      [`107001.3.${FRED}`, false],
    ]);
    expect(read[0]).toMatchObject({ data: { summary: 'Laptop for a new team member' } });
    expect(paths().filter((path) => !path.includes('/approval') && path.includes('/request/'))).toEqual([
      '/rest/servicedeskapi/request/10003?expand=requestType',
    ]);
  });

  it('looks up only the ids asked for, each request read where it is stored, and leaves out what is gone', async () => {
    const issue = {
      expand: '',
      id: '107001',
      key: 'IT-107',
      self: `${BASE}/rest/api/3/issue/107001`,
      fields: { summary: 'Laptop for a new team member', updated: '2021-01-19T09:12:31.000+1000' },
    };
    answer('/rest/api/3/issue/107001', 200, JSON.stringify(issue));
    answer('/rest/servicedeskapi/request/107001/approval', 200, fixtureText('request-approvals-page-1.json'));
    answer('/rest/servicedeskapi/request/107001/approval', 200, fixtureText('request-approvals-page-2.json'));
    answer('/rest/servicedeskapi/request/107001', 200, fixtureText('customer-request.json'));
    // Deleted, or no longer visible to the sync account: Jira's 404.
    answer('/rest/api/3/issue/10002', 404, fixtureText('platform-error-collection.json'));

    const wanted = [`107001.3.${FRED}`, `10002.9.${FRED}`, `107001.8.${FRED}`, 'not-a-jira-id'];
    const read = await all(lookupApprovals(jira(), wanted));

    expect(read.map(({ id }) => id)).toEqual([`107001.3.${FRED}`]);
    expect(paths().filter((path) => path.startsWith('/rest/api/'))).toEqual([
      '/rest/api/3/issue/107001?fields=summary%2Cupdated',
      '/rest/api/3/issue/10002?fields=summary%2Cupdated',
    ]);
  });

  it('fails the lookup, rather than take a request as deleted, when a read fails otherwise', async () => {
    answer('/rest/api/3/issue/10002', 503, '');

    await expect(all(lookupApprovals(jira(), [`10002.9.${FRED}`]))).rejects.toMatchObject({ status: 503 });
  });
});
