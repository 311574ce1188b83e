import { inspect } from 'node:util';
import { classifyFailure } from 'approval-connector-kit';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JiraArgumentError, JiraHttpError, JiraResponseError } from '../src/errors.js';
import { JiraClient } from '../src/jira-client.js';
import { jqlDateTime } from '../src/jql.js';
import { fixtureText } from './fixtures.js';
import { BASE, MockJira, type Sent } from './mock-jira.js';

const EMAIL = 'fred@example.com';
const TOKEN = 'ATATT3xFfGF0-unit-test-token-value';
const BASIC = `Basic ${Buffer.from(`${EMAIL}:${TOKEN}`).toString('base64')}`;

let site: MockJira;
let sent: Sent[];

beforeEach(() => {
  site = new MockJira();
  sent = site.sent;
});

afterEach(() => {
  site.done();
});

function client(options: { rateLimitRetries?: number; rateLimitWaitMs?: number } = {}): JiraClient {
  return new JiraClient({ baseUrl: BASE, email: EMAIL, apiToken: TOKEN, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

function issueOf(id: string, key: string, updated: string) {
  const self = `https://your-domain.atlassian.net/rest/api/3/issue/${id}`;
  return { expand: '', id, key, self, fields: { summary: `Summary of ${key}`, updated } };
}

/** `GET /rest/api/3/issue/10004` (IssueBean), its fields cut to those asked for, as the search page's issue. */
function issueFixture() {
  return JSON.parse(fixtureText('search-jql-page-2.json')).issues[0];
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const list: T[] = [];
  for await (const item of items) list.push(item);
  return list;
}

describe('JiraClient: the calls', () => {
  it('signs in with basic auth of the email and the API token, and asks for JSON', async () => {
    site.answer('GET', '/rest/api/3/myself', 200, fixtureText('myself.json'));

    const account = await client().myself();

    expect(account).toMatchObject({ accountId: '5b10a2844c20165700ede21g', timeZone: 'Australia/Sydney' });
    expect(sent[0]!.headers).toMatchObject({ authorization: BASIC, accept: 'application/json' });
  });

  it('reads every page of a search, following nextPageToken until isLast', async () => {
    site.answer('GET', '/rest/api/3/search/jql', 200, fixtureText('search-jql-page-1.json'));
    site.answer('GET', '/rest/api/3/search/jql', 200, fixtureText('search-jql-page-2.json'));

    const issues = await all(client().searchIssues('project = ED ORDER BY key', { pageSize: 2 }));

    expect(issues.map(({ key }) => key)).toEqual(['ED-1', 'ED-2', 'ED-3']);
    expect(sent.map(({ query }) => Object.fromEntries(query))).toEqual([
      { jql: 'project = ED ORDER BY key', fields: 'summary,updated', maxResults: '2' },
      {
        jql: 'project = ED ORDER BY key',
        fields: 'summary,updated',
        maxResults: '2',
        nextPageToken: 'CAEaAggD',
      },
    ]);
  });

  it("searches what changed since an instant, written in the account's time zone, asking for the zone once", async () => {
    site.answer('GET', '/rest/api/3/myself', 200, fixtureText('myself.json')); // Australia/Sydney
    site.answer('GET', '/rest/api/3/search/jql', 200, fixtureText('search-jql-page-2.json'));
    site.answer('GET', '/rest/api/3/search/jql', 200, fixtureText('search-jql-page-2.json'));
    const jira = client();

    // 2016-10-05T07:08:59Z is 18:08:59 in Sydney (daylight saving time, UTC+11).
    const changed = await all(jira.changedIssues('project = ITSM', new Date('2016-10-05T07:08:59.999Z')));
    await all(jira.changedIssues('project = ITSM', new Date('2016-10-05T07:08:59.999Z')));

    expect(sent.filter(({ path }) => path === '/rest/api/3/myself')).toHaveLength(1);
    expect(sent[1]!.query.get('jql')).toBe(
      '(project = ITSM) AND updated >= "2016-10-05 18:08" ORDER BY updated ASC, key ASC',
    );
    expect(changed).toEqual([
      {
        id: '10004',
        key: 'ED-3',
        summary: 'Access to the finance share',
        updated: new Date('2021-01-19T00:02:07.512Z'), // 10:02:07.512+1000
      },
    ]);
  });

  it('reads a full search without a date restriction and without asking for the time zone', async () => {
    site.answer('GET', '/rest/api/3/search/jql', 200, fixtureText('search-jql-page-2.json'));

    await all(client().changedIssues('project = ITSM', undefined));

    expect(sent.map(({ path }) => path)).toEqual(['/rest/api/3/search/jql']);
    expect(sent[0]!.query.get('jql')).toBe('(project = ITSM) ORDER BY updated ASC, key ASC');
  });

  it('reads one issue where it is stored, and takes a 404 (deleted, or not visible) as no issue', async () => {
    site.answer('GET', '/rest/api/3/issue/10004', 200, issueFixture());
    site.answer('GET', '/rest/api/3/issue/10010', 404, fixtureText('platform-error-collection.json'));

    const found = await client().issue('10004');
    const gone = await client().issue('10010');

    expect(found).toMatchObject({ id: '10004', key: 'ED-3', updated: new Date('2021-01-19T00:02:07.512Z') });
    expect(gone).toBeUndefined();
    expect(Object.fromEntries(sent[0]!.query)).toEqual({ fields: 'summary,updated' });
  });

  it('does not take a failed issue read other than a 404 as no issue', async () => {
    site.answer('GET', '/rest/api/3/issue/10004', 503, '');

    await expect(client().issue('10004')).rejects.toMatchObject({ status: 503 });
  });

  it('after a page that brought new issues, searches again from the last one read rather than follow the token', async () => {
    // Jira's token may be a position: an issue that moves to the end while the search is paged would shift the
    // rest by one, and the issue after the page would be skipped. A search by value cannot skip it.
    site.answer('GET', '/rest/api/3/search/jql', 200, fixtureText('search-jql-page-1.json'));
    site.answer('GET', '/rest/api/3/search/jql', 200, {
      isLast: false,
      nextPageToken: 'CAEaAggE',
      issues: [issueOf('10003', 'ED-2', '2021-01-19T09:12:31.000+1000')], // read already: nothing new
    });
    site.answer('GET', '/rest/api/3/search/jql', 200, fixtureText('search-jql-page-2.json'));

    const issues = await all(client().changedIssues('project = ED', undefined, { pageSize: 100 }));

    expect(issues.map(({ key }) => key)).toEqual(['ED-1', 'ED-2', 'ED-3']);
    // The first page is shorter than maxResults (100) and not the last: the read goes on.
    expect(sent.map(({ query }) => [query.get('jql'), query.get('nextPageToken')])).toEqual([
      ['(project = ED) ORDER BY updated ASC, key ASC', null],
      // 2021-01-19T09:12:31+1000 is 2021-01-18 23:12 UTC; without the account's time zone, 12 hours earlier.
      ['(project = ED) AND updated >= "2021-01-18 11:12" ORDER BY updated ASC, key ASC', null],
      ['(project = ED) AND updated >= "2021-01-18 11:12" ORDER BY updated ASC, key ASC', 'CAEaAggE'],
    ]);
  });

  it('follows the token past new issues of the minute the search starts from, then reads that search again once', async () => {
    // Many issues updated in one minute (a bulk change): a search from the last one read would be this very search,
    // and would read the minute again for each of its pages. The token is followed instead; as it may have skipped
    // an issue, the search is read again from its start once, before the read moves past its minute.
    const page = (issues: ReturnType<typeof issueOf>[], nextPageToken?: string) =>
      site.answer('GET', '/rest/api/3/search/jql', 200, {
        issues,
        ...(nextPageToken === undefined ? { isLast: true } : { isLast: false, nextPageToken }),
      });
    const a = issueOf('10001', 'ED-1', '2021-01-19T09:12:31.000+1000');
    const b = issueOf('10002', 'ED-2', '2021-01-19T09:12:40.000+1000');
    const c = issueOf('10003', 'ED-3', '2021-01-19T09:12:50.000+1000');
    const skipped = issueOf('10005', 'ED-5', '2021-01-19T09:12:55.000+1000');
    const d = issueOf('10004', 'ED-4', '2021-01-19T09:13:05.000+1000');
    page([a], 'T1');
    page([a, b], 'T2'); // the search from ED-1's minute
    page([c], 'T3'); // ED-3 is in that minute too: the token again
    page([d], 'T4'); // ED-4 is in the next minute, and the token was followed past new issues
    page([a, b], 'T5'); // the search from ED-1's minute again, from its start: nothing new
    page([c, skipped, d], 'T6'); // ED-5, which the token skipped
    page([d]); // the search from ED-4's minute

    const issues = await all(client().changedIssues('project = ED', undefined, { pageSize: 3 }));

    expect(issues.map(({ key }) => key)).toEqual(['ED-1', 'ED-2', 'ED-3', 'ED-4', 'ED-5']);
    const from = (minute: string) =>
      `(project = ED) AND updated >= "${minute}" ORDER BY updated ASC, key ASC`;
    expect(sent.map(({ query }) => [query.get('jql'), query.get('nextPageToken')])).toEqual([
      ['(project = ED) ORDER BY updated ASC, key ASC', null],
      [from('2021-01-18 11:12'), null],
      [from('2021-01-18 11:12'), 'T2'],
      [from('2021-01-18 11:12'), 'T3'],
      [from('2021-01-18 11:12'), null],
      [from('2021-01-18 11:12'), 'T5'],
      [from('2021-01-18 11:13'), null],
    ]);
  });

  it('reads the search again from its start when it ends after the token was followed past new issues', async () => {
    const page = (issues: ReturnType<typeof issueOf>[], nextPageToken?: string) =>
      site.answer('GET', '/rest/api/3/search/jql', 200, {
        issues,
        ...(nextPageToken === undefined ? { isLast: true } : { isLast: false, nextPageToken }),
      });
    const a = issueOf('10001', 'ED-1', '2021-01-19T09:12:31.000+1000');
    const b = issueOf('10002', 'ED-2', '2021-01-19T09:12:40.000+1000');
    const skipped = issueOf('10003', 'ED-3', '2021-01-19T09:12:45.000+1000');
    page([a], 'T1');
    page([a, b], 'T2'); // the search from ED-1's minute: ED-2 is new, and in that minute
    page([]); // the last page
    page([a, skipped, b]); // read again from its start: ED-3, which the token skipped

    const issues = await all(client().changedIssues('project = ED', undefined, { pageSize: 3 }));

    expect(issues.map(({ key }) => key)).toEqual(['ED-1', 'ED-2', 'ED-3']);
    expect(sent.map(({ query }) => query.get('nextPageToken'))).toEqual([null, null, 'T2', null]);
  });

  it("pages a request's approvals with start and limit until isLastPage", async () => {
    site.answer(
      'GET',
      '/rest/servicedeskapi/request/ITSM-7/approval',
      200,
      fixtureText('request-approvals-page-1.json'),
    );
    site.answer(
      'GET',
      '/rest/servicedeskapi/request/ITSM-7/approval',
      200,
      fixtureText('request-approvals-page-2.json'),
    );

    const approvals = await all(client().listApprovals('ITSM-7'));

    expect(approvals.map(({ id, finalDecision }) => [id, finalDecision])).toEqual([
      ['1', 'approved'],
      ['2', 'declined'],
      ['3', 'pending'],
    ]);
    // The documented page holds two approvals: the next page starts after what came, not after `limit`.
    expect(sent.map(({ query }) => [query.get('start'), query.get('limit')])).toEqual([
      ['0', '50'],
      ['2', '50'],
    ]);
  });

  it('reads one approval, for the precheck', async () => {
    site.answer('GET', '/rest/servicedeskapi/request/ITSM-7/approval/1', 200, fixtureText('approval.json'));

    const approval = await client().getApproval('ITSM-7', '1');

    expect(approval).toMatchObject({
      id: '1',
      finalDecision: 'approved',
      completedDate: { epochMillis: 1475134200000 },
      approvers: [
        { approver: { accountId: 'qm:a713c8ea-1075-4e30-9d96-891a7d181739:5ad6d3581db05e2a66fa80b' } },
      ],
    });
  });

  it('reads a customer request with its request type', async () => {
    site.answer('GET', '/rest/servicedeskapi/request/107001', 200, fixtureText('customer-request.json'));

    const request = await client().getRequest('107001');

    expect(sent[0]!.query.get('expand')).toBe('requestType');
    expect(request).toMatchObject({
      issueKey: 'HELPDESK-1',
      requestTypeId: '25',
      requestType: { id: '25', name: 'Get IT Help' },
      reporter: { displayName: 'Fred F. User' },
    });
  });

  it('answers an approval with {"decision": …} as JSON and returns the approval as it is after', async () => {
    site.answer('POST', '/rest/servicedeskapi/request/ITSM-7/approval/1', 200, fixtureText('approval.json'));

    const approval = await client().answerApproval('ITSM-7', '1', 'approve');

    expect(sent[0]).toMatchObject({ method: 'POST', body: '{"decision":"approve"}' });
    expect(sent[0]!.headers['content-type']).toBe('application/json');
    expect(approval.finalDecision).toBe('approved');
  });

  it('signs in as the approver with withCredentials, keeping the site', async () => {
    site.answer('POST', '/rest/servicedeskapi/request/ITSM-7/approval/3', 200, fixtureText('approval.json'));

    await client()
      .withCredentials({ email: 'ada@example.com', apiToken: 'ada-token' })
      .answerApproval('ITSM-7', '3', 'decline');

    expect(sent[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from('ada@example.com:ada-token').toString('base64')}`,
    );
    expect(sent[0]!.body).toBe('{"decision":"decline"}');
  });

  it('keeps a path after the host as a prefix of every call', async () => {
    const prefixed = 'https://api.example.com/ex/jira/0a1b2c3d';
    nock('https://api.example.com')
      .get('/ex/jira/0a1b2c3d/rest/api/3/myself')
      .reply(200, fixtureText('myself.json'), { 'content-type': 'application/json' });

    const jira = new JiraClient({ baseUrl: `${prefixed}/`, email: EMAIL, apiToken: TOKEN });

    await expect(jira.myself()).resolves.toMatchObject({ displayName: 'Mia Krystof' });
  });
});

describe('JiraClient: failures the kit classifies without more code', () => {
  it("carries a 404's status and Service Management's errorMessage: a systemError", async () => {
    site.answer(
      'GET',
      '/rest/servicedeskapi/request/ITSM-7/approval/1',
      404,
      fixtureText('service-desk-error.json'),
    );

    const error = await rejection(client().getApproval('ITSM-7', '1'));

    expect(error).toBeInstanceOf(JiraHttpError);
    expect(error).toMatchObject({
      status: 404,
      errorMessages: ['Here is an error message'],
      code: 'jira_http_error',
    });
    expect(classifyFailure(error)).toMatchObject({ status: 'systemError', meta: { code: 'HTTP_404' } });
  });

  it('carries a refused sign-in (401 with an HTML page) as an authenticationError', async () => {
    site.answer('GET', '/rest/api/3/myself', 401, '<html><body>Unauthorized (401)</body></html>', {
      'x-seraph-loginreason': 'AUTHENTICATED_FAILED',
    });

    const error = await rejection(client().myself());

    expect(error).toMatchObject({ status: 401, errorMessages: [] });
    expect(classifyFailure(error)).toMatchObject({
      status: 'authenticationError',
      meta: { code: 'HTTP_401' },
    });
  });

  it('carries a 409 of an approval already decided as a systemError, with what Jira said', async () => {
    site.answer(
      'POST',
      '/rest/servicedeskapi/request/ITSM-7/approval/1',
      409,
      fixtureText('service-desk-error.json'),
    );

    const error = await rejection(client().answerApproval('ITSM-7', '1', 'decline'));

    expect(error).toMatchObject({ status: 409 });
    expect(classifyFailure(error)).toMatchObject({
      status: 'systemError',
      meta: { code: 'HTTP_409', message: expect.stringContaining('Here is an error message') },
    });
  });

  it('adds a public comment to a request', async () => {
    site.answer('POST', '/rest/servicedeskapi/request/ITSM-7/comment', 201, {
      id: '1000',
      body: 'Fine by me.',
      public: true,
    });

    const comment = await client().addComment('ITSM-7', 'Fine by me.');

    expect(comment).toMatchObject({ id: '1000' });
    expect(JSON.parse(sent[0]!.body!)).toEqual({ body: 'Fine by me.', public: true });
    expect(sent[0]!.headers['content-type']).toBe('application/json');
  });

  it("reads the platform's ErrorCollection", async () => {
    site.answer('GET', '/rest/api/3/search/jql', 400, fixtureText('platform-error-collection.json'));

    const error = await rejection(all(client().searchIssues('project = NOPE')));

    expect(error).toMatchObject({
      status: 400,
      errorMessages: ["The value 'NOPE' does not exist for the field 'project'."],
    });
  });

  it("turns a 429's Retry-After in seconds into retryAfterMs, said in the message: a serviceUnavailable", async () => {
    site.answer('GET', '/rest/api/3/search/jql', 429, '', {
      'retry-after': '30',
      'ratelimit-reason': 'jira-quota-based',
    });

    const error = await rejection(all(client({ rateLimitRetries: 0 }).searchIssues('project = ITSM')));

    expect(error).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    expect(classifyFailure(error)).toMatchObject({
      status: 'serviceUnavailable',
      meta: { code: 'HTTP_429', message: 'GET /rest/api/3/search/jql answered 429; try again in 30 s' },
    });
  });

  it("takes a 429's X-RateLimit-Reset as when to try again when it comes without Retry-After", async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-05-01T10:00:00Z') });
    try {
      site.answer('GET', '/rest/api/3/search/jql', 429, '', { 'x-ratelimit-reset': '2026-05-01T10:01Z' });

      const error = await rejection(all(client({ rateLimitRetries: 0 }).searchIssues('project = ITSM')));

      expect(error).toMatchObject({ status: 429, retryAfterMs: 60_000 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("turns a 503's Retry-After as an HTTP date into retryAfterMs", async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-05-01T10:00:00Z') });
    try {
      site.answer('GET', '/rest/api/3/myself', 503, '', { 'retry-after': 'Fri, 01 May 2026 10:00:45 GMT' });

      const error = await rejection(client({ rateLimitRetries: 0 }).myself());

      expect(error).toMatchObject({ status: 503, retryAfterMs: 45_000 });
      expect(classifyFailure(error).status).toBe('serviceUnavailable');
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a success whose body is not JSON, or lacks what the connector reads', async () => {
    site.answer('GET', '/rest/api/3/myself', 200, '<html>maintenance</html>');
    site.answer('GET', '/rest/servicedeskapi/request/ITSM-7/approval/1', 200, { id: '1', approvers: [] });

    const notJson = await rejection(client().myself());
    const incomplete = await rejection(client().getApproval('ITSM-7', '1'));

    expect(notJson).toBeInstanceOf(JiraResponseError);
    expect(notJson).toMatchObject({ code: 'jira_invalid_response' });
    expect(incomplete).toMatchObject({
      code: 'jira_invalid_response',
      message: expect.stringContaining('finalDecision'),
    });
    expect(classifyFailure(incomplete).status).toBe('internalError');
  });

  it('stops paging when Jira hands back a nextPageToken it gave before', async () => {
    const looping = { isLast: false, issues: [], nextPageToken: 'same' };
    site.answer('GET', '/rest/api/3/search/jql', 200, looping);
    site.answer('GET', '/rest/api/3/search/jql', 200, looping);

    const error = await rejection(all(client().searchIssues('project = ITSM')));

    expect(error).toMatchObject({
      code: 'jira_invalid_response',
      message: expect.stringContaining('nextPageToken'),
    });
  });

  it('throws a redirect as the answer it is, not following it with the credentials to where it points', async () => {
    site.answer('GET', '/rest/api/3/myself', 302, '', {
      location: `${BASE}/login.jsp?os_destination=%2Frest%2Fapi%2F3%2Fmyself`,
    });

    const error = await rejection(client().myself());

    expect(error).toBeInstanceOf(JiraHttpError);
    expect(error).toMatchObject({ status: 302, code: 'jira_http_error' });
    expect(classifyFailure(error).status).toBe('internalError');
    expect(sent.map(({ path }) => path)).toEqual(['/rest/api/3/myself']);
  });

  it("rejects with the signal's reason when the call is aborted, sending nothing", async () => {
    const reason = new Error('shutting down');

    const error = await rejection(client().getApproval('ITSM-7', '1', { signal: AbortSignal.abort(reason) }));

    expect(error).toBe(reason);
    expect(sent).toEqual([]);
  });

  it("never shows the API token: not in an error, its message or inspection, nor in the client's", async () => {
    site.answer('GET', '/rest/api/3/myself', 401, fixtureText('service-desk-error.json'));
    const jira = client();

    const error = await rejection(jira.myself());

    const base64 = BASIC.slice('Basic '.length);
    for (const text of [String(error), inspect(error, { depth: 10 }), JSON.stringify(error), inspect(jira)]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(base64);
    }
  });
});

describe('JiraClient: a read waits out a rate limit', () => {
  const MYSELF = {
    accountId: '5b10a2844c20165700ede21g',
    displayName: 'Fred F. User',
    timeZone: 'Europe/Berlin',
  };

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** Lets the timers run until `promise` settles; its outcome, a rejection included. */
  async function settled<T>(promise: Promise<T>): Promise<T | unknown> {
    const outcome = promise.then(
      (value) => value,
      (error: unknown) => error,
    );
    let done = false;
    void outcome.then(() => {
      done = true;
    });
    while (!done) await vi.advanceTimersToNextTimerAsync();
    return await outcome;
  }

  it('reads again after the Retry-After of a 429, and of a 503 that says one, and returns what it reads', async () => {
    site.answer('GET', '/rest/api/3/myself', 429, '', { 'retry-after': '2' });
    site.answer('GET', '/rest/api/3/myself', 503, '', { 'retry-after': '1' });
    site.answer('GET', '/rest/api/3/myself', 200, MYSELF);

    expect(await settled(client().myself())).toMatchObject({ accountId: MYSELF.accountId });
    expect(sent.map(({ path }) => path)).toEqual(Array(3).fill('/rest/api/3/myself'));
  });

  it("reads again after a 429's X-RateLimit-Reset when it comes without Retry-After", async () => {
    vi.setSystemTime(Date.parse('2026-05-01T10:00:00Z'));
    site.answer('GET', '/rest/api/3/myself', 429, '', { 'x-ratelimit-reset': '2026-05-01T10:00:05Z' });
    site.answer('GET', '/rest/api/3/myself', 200, MYSELF);

    expect(await settled(client().myself())).toMatchObject({ accountId: MYSELF.accountId });
    expect(sent).toHaveLength(2);
  });

  it('throws the answer once rateLimitRetries reads were rate-limited too', async () => {
    for (let i = 0; i < 3; i++) site.answer('GET', '/rest/api/3/myself', 429, '', { 'retry-after': '1' });

    const error = await settled(client({ rateLimitRetries: 2 }).myself());

    expect(error).toMatchObject({ status: 429, retryAfterMs: 1000 });
    expect(sent).toHaveLength(3);
  });

  it('throws at once when the wait asked for would pass rateLimitWaitMs in all', async () => {
    site.answer('GET', '/rest/api/3/myself', 429, '', { 'retry-after': '3' });
    site.answer('GET', '/rest/api/3/myself', 429, '', { 'retry-after': '3' });

    const error = await settled(client({ rateLimitWaitMs: 5000 }).myself());

    expect(error).toMatchObject({ status: 429, retryAfterMs: 3000 });
    expect(sent).toHaveLength(2);
  });

  it('throws a 429 that does not say how long to wait, and a 503 without Retry-After, at once', async () => {
    site.answer('GET', '/rest/api/3/myself', 429, '');
    site.answer('GET', '/rest/api/3/myself', 503, '');

    expect(await settled(client().myself())).toMatchObject({ status: 429, retryAfterMs: undefined });
    expect(await settled(client().myself())).toMatchObject({ status: 503, retryAfterMs: undefined });
    expect(sent).toHaveLength(2);
  });

  it("sends an action once: the approval's answer fails at once with the 429, for the task to report", async () => {
    site.answer('POST', '/rest/servicedeskapi/request/ITSM-7/approval/1', 429, '', { 'retry-after': '1' });

    const error = await settled(client().answerApproval('ITSM-7', '1', 'approve'));

    expect(error).toMatchObject({ status: 429, retryAfterMs: 1000 });
    expect(sent).toHaveLength(1);
  });

  it("stops waiting when the call's signal aborts, rejecting with its reason and reading no more", async () => {
    site.answer('GET', '/rest/api/3/myself', 429, '', { 'retry-after': '10' });
    const stop = new AbortController();
    const reason = new Error('stopping');

    const call = client().myself({ signal: stop.signal });
    const outcome = call.catch((error: unknown) => error);
    await vi.waitFor(() => expect(vi.getTimerCount()).toBe(1));
    stop.abort(reason);

    expect(await outcome).toBe(reason);
    expect(sent).toHaveLength(1);
  });

  it('refuses rateLimitRetries and rateLimitWaitMs that are not whole numbers from 0', () => {
    expect(() => client({ rateLimitRetries: -1 })).toThrow(
      new JiraArgumentError('rateLimitRetries must be a whole number from 0, got -1'),
    );
    expect(() => client({ rateLimitWaitMs: 1.5 })).toThrow(
      new JiraArgumentError('rateLimitWaitMs must be a whole number of milliseconds from 0, got 1.5'),
    );
  });
});

describe('JiraClient: bad input gets a clear error and sends nothing', () => {
  it.each([
    ['an empty base URL', { baseUrl: '' }, /baseUrl/],
    ['a base URL that is not http(s)', { baseUrl: 'ftp://your-domain.atlassian.net' }, /baseUrl/],
    ['a base URL with credentials', { baseUrl: 'https://fred:secret@your-domain.atlassian.net' }, /baseUrl/],
    ['an empty email', { email: '' }, /email/],
    ['an empty API token', { apiToken: '' }, /apiToken/],
    ['a timeout of 0', { timeoutMs: 0 }, /timeoutMs/],
  ])('refuses %s', (_, override, message) => {
    const create = () => new JiraClient({ baseUrl: BASE, email: EMAIL, apiToken: TOKEN, ...override });

    expect(create).toThrow(JiraArgumentError);
    expect(create).toThrow(message);
  });

  it('does not repeat the credentials of a refused base URL', () => {
    const create = () => new JiraClient({ baseUrl: 'ftp://fred:secret@host', email: EMAIL, apiToken: TOKEN });

    expect(create).toThrow(/\[redacted\]/);
    expect(create).not.toThrow(/secret/);
  });

  it.each([
    ['an empty JQL', () => all(client().changedIssues('  ', undefined)), /jql/],
    [
      'a JQL with its own ORDER BY',
      () => all(client().changedIssues('project = X order by key', undefined)),
      /ORDER BY/,
    ],
    [
      'a page size over 5000',
      () => all(client().searchIssues('project = X', { pageSize: 5001 })),
      /pageSize/,
    ],
    ['an issue key with a slash', () => client().getApproval('ITSM-7/../1', '1'), /issueIdOrKey/],
    ['an approval id that is not a number', () => client().getApproval('ITSM-7', 'abc'), /approvalId/],
    [
      'a decision Jira does not know',
      () => client().answerApproval('ITSM-7', '1', 'yes' as 'approve'),
      /decision/,
    ],
    ['an empty comment', () => client().addComment('ITSM-7', '  '), /body/],
    ['an issue id with a slash', () => client().issue('10004/../1'), /issueIdOrKey/],
  ])('refuses %s', async (_, call, message) => {
    const error = await rejection(call());

    expect(error).toBeInstanceOf(JiraArgumentError);
    expect((error as Error).message).toMatch(message);
    expect(sent).toEqual([]);
  });
});

describe('jqlDateTime: an instant as JQL reads it, never after the instant', () => {
  it("writes the account's wall clock, rounded down to the minute", () => {
    expect(jqlDateTime(new Date('2026-01-15T09:41:59.999Z'), 'Europe/Berlin')).toBe('2026-01-15 10:41');
    expect(jqlDateTime(new Date('2026-07-15T09:41:00Z'), 'America/New_York')).toBe('2026-07-15 05:41');
    expect(jqlDateTime(new Date('2026-07-15T09:41:00Z'), 'UTC')).toBe('2026-07-15 09:41');
  });

  it('writes a time in the hour repeated when clocks go back so that its later reading is not after it', () => {
    // Berlin goes back from 03:00 CEST to 02:00 CET at 2026-10-25T01:00Z. 00:30Z is 02:30 CEST; "02:30" also
    // names 02:30 CET (01:30Z), an hour later. "01:30" can only be 01:30 CEST (23:30Z the day before).
    expect(jqlDateTime(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25 01:30');
  });

  it('starts 12 hours early when the time zone is unknown or not a zone', () => {
    expect(jqlDateTime(new Date('2026-07-15T09:41:00Z'), undefined)).toBe('2026-07-14 21:41');
    expect(jqlDateTime(new Date('2026-07-15T09:41:00Z'), 'Mars/Olympus_Mons')).toBe('2026-07-14 21:41');
  });
});
