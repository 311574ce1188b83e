import { EventEmitter } from 'node:events';
import { AuthenticationError, type Credentials, runWorker, Secret } from 'approval-connector-kit';
import { WORKER_EXIT_CODES } from 'approval-connector-kit/worker';
import { describe, expect, it } from 'vitest';
import { toSourceApprovals } from '../src/approvals.js';
import build, {
  approverCredentials,
  DecisionInput,
  type DecisionTarget,
  decisionVerdict,
  JiraConnector,
  requestTypeTemplate,
} from '../src/connector.js';
import { JiraArgumentError } from '../src/errors.js';
import { JiraClient } from '../src/jira-client.js';
import { JiraApproval, JiraApprovalPage, JiraCustomerRequest } from '../src/schemas.js';
import { fixture } from './fixtures.js';
import { BASE } from './mock-jira.js';

// The connector's own logic, on answers shaped as Jira documents them (see fixtures/README.md).
const FRED = 'qm:a713c8ea-1075-4e30-9d96-891a7d181739:5ad6d3581db05e2a66fa80b';
const answered = JiraApproval.parse(fixture('approval.json')); // Fred approved; approved
const pending = JiraApproval.parse(fixture('approval-pending.json')); // waits for Fred
const request = JiraCustomerRequest.parse(fixture('customer-request.json'));

function target(approval: JiraApproval, accountId = FRED): DecisionTarget {
  return {
    issueId: request.issueId,
    approvalId: approval.id,
    accountId,
    issueKey: request.issueKey,
    comment: undefined,
  };
}

function credentials(fields: Record<string, string>): Credentials {
  return Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, new Secret(value)]));
}

function client(): JiraClient {
  return new JiraClient({ baseUrl: BASE, email: 'jira-sync@example.com', apiToken: 'sync-token' });
}

describe('decisionVerdict: what the precheck makes of the approval Jira holds', () => {
  it('runs the action while the approval waits for this approver', () => {
    expect(decisionVerdict(pending, target(pending), 'approve')).toBe(true);
    expect(decisionVerdict(pending, target(pending), 'decline')).toBe(true);
  });

  it('reports success without sending when the approver already gave this very answer', () => {
    expect(decisionVerdict(answered, target(answered), 'approve')).toEqual({
      status: 'success',
      meta: {
        code: 'already_answered',
        message: 'HELPDESK-1: "Please approve this request" was already approved by this approver in Jira',
      },
    });
  });

  it('reports a systemError without sending when the approver answered otherwise', () => {
    expect(decisionVerdict(answered, target(answered), 'decline')).toMatchObject({
      status: 'systemError',
      meta: { code: 'already_decided', message: expect.stringContaining('already approved') },
    });
  });

  it("reports a systemError when another approver's answer decided it", () => {
    const declinedByOthers = { ...pending, finalDecision: 'declined' as const };

    expect(decisionVerdict(declinedByOthers, target(declinedByOthers), 'approve')).toEqual({
      status: 'systemError',
      meta: {
        code: 'already_decided',
        message: 'HELPDESK-1: "Budget holder approval" was already declined in Jira',
      },
    });
  });

  it('reports a systemError when the account is no longer one of its approvers', () => {
    expect(decisionVerdict(pending, target(pending, 'someone-else'), 'approve')).toMatchObject({
      status: 'systemError',
      meta: { code: 'not_an_approver' },
    });
  });
});

describe("approverCredentials: the approver's Jira sign-in from the task", () => {
  it('takes email and apiToken', () => {
    expect(approverCredentials(credentials({ email: 'fred@example.com', apiToken: 'fred-token' }))).toEqual({
      email: 'fred@example.com',
      apiToken: 'fred-token',
    });
  });

  it('takes username and password, as a sign-in form gives them', () => {
    expect(
      approverCredentials(credentials({ username: 'fred@example.com', password: 'fred-token' })),
    ).toEqual({
      email: 'fred@example.com',
      apiToken: 'fred-token',
    });
  });

  it.each([
    ['no credentials', undefined],
    ['no API token', credentials({ email: 'fred@example.com' })],
    ['an empty API token', credentials({ email: 'fred@example.com', apiToken: ' ' })],
    ['no email', credentials({ password: 'fred-token' })],
    ['an email with a colon', credentials({ email: 'fred:x@example.com', apiToken: 'fred-token' })],
  ])('refuses %s as an authentication failure that repeats none of them', (_, given) => {
    let error: unknown;
    try {
      approverCredentials(given);
    } catch (thrown) {
      error = thrown;
    }

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).code).toBe('authentication');
    expect((error as Error).message).not.toMatch(/fred-token|fred@|fred:x/);
  });
});

describe('DecisionInput: the task data both task types read', () => {
  const [synced] = toSourceApprovals(
    { id: request.issueId, key: request.issueKey, summary: 'Request JSD help', updated: new Date(0) },
    request,
    [pending],
  );

  it('reads the Jira approval and approver from the id of the approval the task carries', () => {
    const approval = { ...synced, lastModified: new Date(0).toISOString() };

    expect(DecisionInput.parse({ approval, approveComments: '' })).toEqual({
      issueId: request.issueId,
      approvalId: '3',
      accountId: FRED,
      issueKey: request.issueKey,
      comment: undefined,
    });
  });

  it("reads the approver's comment, trimmed; a blank one is none", () => {
    const approval = { ...synced, lastModified: new Date(0).toISOString() };

    expect(DecisionInput.parse({ approval, approveComments: '  Fine by me. ' })).toMatchObject({
      comment: 'Fine by me.',
    });
    expect(DecisionInput.parse({ approval, approveComments: ' ' })).toMatchObject({ comment: undefined });
  });

  it("refuses an approval whose id is not a Jira approval's, naming the field", () => {
    const parsed = DecisionInput.safeParse({ approval: { id: 'PO-1001', data: {} } });

    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map(({ path }) => path)).toEqual([['approval', 'id']]);
  });
});

describe("requestTypeTemplate: a request type's UI template", () => {
  const [synced] = toSourceApprovals(
    { id: request.issueId, key: request.issueKey, summary: 'Request JSD help', updated: new Date(0) },
    request,
    JiraApprovalPage.parse(fixture('request-approvals-page-1.json')).values,
  );
  const template = requestTypeTemplate(request.requestTypeId);

  it("is keyed by the schema id the mapping gives the request type's approvals", () => {
    expect(template.schemaId).toBe(synced!.schemaId);
  });

  it('names only what the mapping writes into the data', () => {
    const { title, subtitle, description, fields } = template.template as {
      title: string;
      subtitle: string;
      description: string;
      fields: { path: string }[];
    };
    const placeholders = [title, subtitle, description].flatMap((text) =>
      [...text.matchAll(/\{\{(.+?)\}\}/g)].map((match) => match[1]!),
    );
    const paths = [...placeholders, ...fields.map(({ path }) => path)];
    const lookUp = (path: string) =>
      path
        .split('.')
        .reduce<unknown>((value, key) => (value as Record<string, unknown>)?.[key], synced!.data);

    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(lookUp(path), path).not.toBeUndefined();
  });
});

describe('JiraConnector', () => {
  it('answers with the approver’s credentials, syncs incrementally, unordered, and reconciles', () => {
    const connector = new JiraConnector({
      jira: client(),
      jql: 'project = ITSM',
      requestTypes: ['10', '11'],
    });

    expect(connector.authRequired).toBe(true);
    expect(Object.keys(connector.tasks)).toEqual(['approve', 'decline']);
    expect(connector.source).toMatchObject({ kind: 'incremental', ordered: false });
    expect(connector.source.lookup).toBeTypeOf('function');
    expect(connector.uiTemplates.map(({ schemaId }) => schemaId)).toEqual([
      'jira-request-type-10',
      'jira-request-type-11',
    ]);
  });

  it.each([
    ['a JQL with its own ORDER BY', { jql: 'project = ITSM ORDER BY key' }, /jql/],
    ['a request type id that is not a number', { requestTypes: ['hardware'] }, /requestTypes/],
  ])('refuses %s', (_, override, message) => {
    const create = () => new JiraConnector({ jira: client(), jql: 'project = ITSM', ...override });

    expect(create).toThrow(JiraArgumentError);
    expect(create).toThrow(message);
  });
});

describe('the default export', () => {
  it('refuses a missing variable before anything starts: the worker exits 2, a refused configuration', async () => {
    const code = await runWorker(build, {
      env: {
        // Nothing listens there: the configuration is refused before the service is reached.
        APPROVAL_SERVICE_URL: 'http://127.0.0.1:9',
        APPROVAL_CONNECTOR_TOKEN: 'connector-token',
        LOG_LEVEL: 'silent',
        JIRA_BASE_URL: BASE,
        JIRA_EMAIL: 'jira-sync@example.com',
        JIRA_API_TOKEN: 'sync-token',
      },
      argv: [],
      signals: new EventEmitter(),
    });

    expect(code).toBe(WORKER_EXIT_CODES.refused);
  });
});
