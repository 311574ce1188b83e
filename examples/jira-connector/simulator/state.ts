/**
 * The simulated site's data: accounts, request types, requests with their approvals, and the activity that
 * changes them (new requests, edits, answers given in Jira itself, deletions). Everything random comes from one
 * seeded generator, so a seed and the same sequence of calls give the same data.
 * @module
 */
import { Random } from './random.js';

export type Decision = 'approved' | 'declined' | 'pending';

/** An Atlassian account of the simulated site. */
export interface Account {
  accountId: string;
  email: string;
  displayName: string;
  timeZone: string;
  apiToken: string;
  /** `agent`: a Service Management agent (browses and searches the project); `approver` and `customer` do not. */
  role: 'agent' | 'approver' | 'customer';
  /** Whether Jira shows the account's email to others (a privacy setting). */
  emailVisible: boolean;
  /** An expired or revoked API token no longer signs in. */
  tokenExpired: boolean;
  /** A Jira administrator: may manage the site's admin webhooks. */
  admin: boolean;
}

export interface RequestType {
  id: string;
  name: string;
  description: string;
  issueTypeId: string;
  /** The form's fields and the values the simulation fills in. */
  fields: readonly { fieldId: string; label: string; values: readonly (string | number)[] }[];
  /** The approval a request of this type waits for; `undefined`: none. */
  approval: { name: string; approvers: 1 | 2; needs: 'one' | 'all' } | undefined;
  summaries: readonly string[];
}

export interface Approval {
  id: number;
  name: string;
  approvers: { accountId: string; decision: Decision }[];
  /** `one`: the first approve decides; `all`: every approver must approve. A decline always decides. */
  needs: 'one' | 'all';
  finalDecision: Decision;
  createdAt: number;
  completedAt: number | undefined;
}

export interface Issue {
  id: number;
  key: string;
  projectKey: string;
  number: number;
  requestTypeId: string;
  reporterId: string;
  summary: string;
  fields: { fieldId: string; label: string; value: string | number }[];
  status: string;
  statusCategory: 'NEW' | 'INDETERMINATE' | 'DONE';
  statusAt: number;
  createdAt: number;
  updatedAt: number;
  approvals: Approval[];
}

/** What a test chooses of a new request rather than leaving it to chance. */
export interface NewRequestChoices {
  /** The request's summary. */
  summary?: string;
  /** The account ids of its approval's approvers: as many as its request type asks for. */
  approvers?: readonly string[];
}

/** Something that happened in the simulated site. */
export type SimulatorEvent =
  | { type: 'created'; issueKey: string; approvals: number }
  | { type: 'edited'; issueKey: string; fieldId: string }
  | {
      type: 'decided';
      issueKey: string;
      approvalId: string;
      accountId: string;
      decision: 'approved' | 'declined';
      /** `source`: answered in Jira itself; `api`: answered over the REST API. */
      via: 'source' | 'api';
    }
  | { type: 'deleted'; issueKey: string };

/** One line of an issue's change history, as Jira's changelog writes it (ChangeDetails). */
export interface ChangeItem {
  field: string;
  fieldId: string;
  fieldtype: 'jira' | 'custom';
  from?: string;
  fromString?: string;
  to?: string;
  toString?: string;
}

/** A change of an issue, as Jira tells its webhooks: what became of it, who did it, and what moved. */
export interface IssueChange {
  webhookEvent: 'jira:issue_created' | 'jira:issue_updated' | 'jira:issue_deleted';
  /** Jira's finer name of the change: `issue_created`, `issue_updated`, `issue_generic`, `issue_commented`, … */
  typeName: string;
  /** The issue after the change (as it stood, for a deletion): a copy, which later changes leave alone. */
  issue: Issue;
  /** The account that made the change. */
  actorId: string;
  /** When it was made; `undefined` for a deletion, which is now. */
  at: number | undefined;
  items: ChangeItem[];
  /** The comment, when the change is one. */
  comment?: { id: string; body: string; authorId: string; public: boolean };
}

export const SERVICE_DESK_ID = '1';

const REQUEST_TYPES: readonly RequestType[] = [
  {
    id: '10',
    name: 'Request new hardware',
    description: 'A laptop, a screen or a phone for work.',
    issueTypeId: '10003',
    fields: [
      {
        fieldId: 'customfield_10050',
        label: 'Item',
        values: ['Laptop', 'Monitor', 'Phone', 'Docking station'],
      },
      { fieldId: 'customfield_10051', label: 'Estimated cost (EUR)', values: [180, 240, 890, 1450, 2300] },
      {
        fieldId: 'description',
        label: 'Why do you need it?',
        values: [
          'The old one broke.',
          'New team member.',
          'Needed for on-call.',
          'Screen too small for design work.',
        ],
      },
    ],
    approval: { name: 'Manager approval', approvers: 1, needs: 'one' },
    summaries: ['New laptop for the design team', 'Replacement phone', 'Second monitor', 'Docking station'],
  },
  {
    id: '11',
    name: 'Request access to software',
    description: 'Access to an application or a licence for it.',
    issueTypeId: '10004',
    fields: [
      {
        fieldId: 'customfield_10060',
        label: 'Application',
        values: ['Figma', 'Salesforce', 'Tableau', 'GitHub'],
      },
      { fieldId: 'customfield_10061', label: 'Access level', values: ['Viewer', 'Editor', 'Administrator'] },
      {
        fieldId: 'description',
        label: 'What will you use it for?',
        values: ['Quarterly reporting.', 'Reviewing designs.', 'Customer follow-up.', 'Release work.'],
      },
    ],
    approval: { name: 'Application owner approval', approvers: 2, needs: 'one' },
    summaries: ['Access to Tableau', 'Figma editor seat', 'Salesforce licence', 'GitHub organisation access'],
  },
  {
    id: '12',
    name: 'Book business travel',
    description: 'Trips that need a budget holder to sign off.',
    issueTypeId: '10005',
    fields: [
      {
        fieldId: 'customfield_10070',
        label: 'Destination',
        values: ['Berlin', 'Lisbon', 'New York', 'Singapore'],
      },
      { fieldId: 'customfield_10071', label: 'Estimated cost (EUR)', values: [420, 980, 1750, 3200] },
      {
        fieldId: 'description',
        label: 'Purpose of the trip',
        values: ['Customer workshop.', 'Conference talk.', 'Team offsite.', 'Partner meeting.'],
      },
    ],
    approval: { name: 'Budget holders', approvers: 2, needs: 'all' },
    summaries: ['Trip to a customer workshop', 'Conference travel', 'Team offsite travel', 'Partner visit'],
  },
  {
    id: '13',
    name: 'Get IT help',
    description: 'Anything else; no approval needed.',
    issueTypeId: '10001',
    fields: [
      {
        fieldId: 'description',
        label: 'What happened?',
        values: ['VPN drops every hour.', 'Printer on floor 2 jams.', 'Cannot open shared drive.'],
      },
    ],
    approval: undefined,
    summaries: ['VPN keeps disconnecting', 'Printer jam', 'Shared drive not reachable'],
  },
];

const PEOPLE = {
  sync: { name: 'Jira Sync', email: 'jira-sync@example.com', timeZone: 'Europe/Berlin' },
  approvers: [
    { name: 'Ada Lovelace', email: 'ada@example.com', timeZone: 'Europe/London', emailVisible: true },
    { name: 'Grace Hopper', email: 'grace@example.com', timeZone: 'America/New_York', emailVisible: true },
    { name: 'Alan Turing', email: 'alan@example.com', timeZone: 'Europe/London', emailVisible: false },
    {
      name: 'Katherine Johnson',
      email: 'katherine@example.com',
      timeZone: 'America/Chicago',
      emailVisible: true,
    },
  ],
  customers: [
    { name: 'Marie Curie', email: 'marie@example.com', timeZone: 'Europe/Paris' },
    { name: 'Niels Bohr', email: 'niels@example.com', timeZone: 'Europe/Copenhagen' },
    { name: 'Lise Meitner', email: 'lise@example.com', timeZone: 'Europe/Vienna' },
    { name: 'Emmy Noether', email: 'emmy@example.com', timeZone: 'Europe/Berlin' },
  ],
} as const;

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The whole state of the simulated site, and the changes to it. */
export class SiteState {
  readonly projectKey: string;
  /** The site's default user time zone, in which its answers write date-times. */
  readonly timeZone = 'Australia/Sydney';
  readonly accounts: Account[] = [];
  readonly requestTypes = REQUEST_TYPES;
  readonly issues = new Map<number, Issue>();
  /** The same issues by key (which never changes here: no issue moves to another project). */
  readonly #byKey = new Map<string, Issue>();
  /** Every answer given, in Jira or over the API, in order. */
  readonly decisions: (SimulatorEvent & { type: 'decided' })[] = [];
  /** Told each change of an issue as it happens: where the site's webhooks start. */
  onIssueChange: ((change: IssueChange) => void) | undefined;
  readonly #random: Random;
  readonly #now: () => number;
  #nextIssueId = 10001;
  #nextIssueNumber = 1;
  #nextApprovalId = 1;

  constructor(options: { seed: number; now: () => number; projectKey: string; requests: number }) {
    this.projectKey = options.projectKey;
    this.#random = new Random(options.seed);
    this.#now = options.now;
    const account = (
      person: { name: string; email: string; timeZone: string; emailVisible?: boolean },
      role: Account['role'],
      accountId: string,
    ): Account => ({
      accountId,
      email: person.email,
      displayName: person.name,
      timeZone: person.timeZone,
      apiToken: `ATATT3xFfGF0${this.#random.string(40, TOKEN_ALPHABET)}`,
      role,
      emailVisible: person.emailVisible ?? true,
      tokenExpired: false,
      // The sync account administers the site too, so that it may register the connector's admin webhook.
      admin: role === 'agent',
    });
    this.accounts.push(account(PEOPLE.sync, 'agent', this.#random.string(24)));
    for (const [index, person] of PEOPLE.approvers.entries()) {
      // Jira has two forms of account id; the second has colons and dashes, which the connector must keep intact.
      const id =
        index === 2
          ? `712020:${this.#random.string(8)}-${this.#random.string(4)}-${this.#random.string(4)}-${this.#random.string(4)}-${this.#random.string(12)}`
          : this.#random.string(24);
      this.accounts.push(account(person, 'approver', id));
    }
    for (const person of PEOPLE.customers)
      this.accounts.push(account(person, 'customer', this.#random.string(24)));

    // History before now: requests created a while apart, some already answered.
    const start = this.#now() - options.requests * 45 * 60_000;
    for (let i = 0; i < options.requests; i++) {
      const at = start + i * 45 * 60_000;
      const issue = this.#newIssue(at);
      const approval = issue.approvals[0];
      if (approval !== undefined && this.#random.next() < 0.3) {
        const approver = this.#random.pick(approval.approvers);
        this.#answer(
          issue,
          approval,
          approver.accountId,
          this.#random.next() < 0.75 ? 'approved' : 'declined',
          {
            at: at + 20 * 60_000,
            via: 'source',
          },
        );
      }
    }
  }

  get syncAccount(): Account {
    return this.accounts.find(({ role }) => role === 'agent')!;
  }

  get approvers(): Account[] {
    return this.accounts.filter(({ role }) => role === 'approver');
  }

  account(accountId: string): Account | undefined {
    return this.accounts.find((account) => account.accountId === accountId);
  }

  /** The issue with this id or key, unless deleted. */
  issue(idOrKey: string): Issue | undefined {
    if (/^\d+$/.test(idOrKey)) return this.issues.get(Number(idOrKey));
    return this.#byKey.get(idOrKey.toUpperCase());
  }

  /** One round of activity: a new request, an edit, an answer given in Jira, or (rarely) a deletion. */
  advance(): SimulatorEvent {
    const open = this.#pendingAnswers();
    const action = this.#random.weighted<'create' | 'edit' | 'decide' | 'delete'>([
      ['create', 3],
      ['edit', this.issues.size > 0 ? 2 : 0],
      ['decide', open.length > 0 ? 2 : 0],
      ['delete', this.issues.size > 3 ? 0.3 : 0],
    ]);
    if (action === 'edit') return this.edit(this.#random.pick([...this.issues.values()]).key);
    if (action === 'decide') {
      const { issue, approval, accountId } = this.#random.pick(open);
      const decision = this.#random.next() < 0.75 ? 'approved' : 'declined';
      return this.decideInSource(issue.key, String(approval.id), accountId, decision);
    }
    if (action === 'delete') return this.delete(this.#random.pick([...this.issues.values()]).key);
    return this.create();
  }

  /**
   * A customer raises a new request, of a request type picked at random unless given; its summary and its
   * approval's approvers (as many as the request type asks for) are picked at random unless given.
   */
  create(requestTypeId?: string, chosen: NewRequestChoices = {}): SimulatorEvent {
    const issue = this.#newIssue(this.#now(), requestTypeId, chosen);
    this.changed(issue, 'jira:issue_created', 'issue_created', issue.reporterId, []);
    return { type: 'created', issueKey: issue.key, approvals: issue.approvals.length };
  }

  /** The customer or an agent changes one of the request's fields, or its summary when given. */
  edit(issueKey: string, change: { summary?: string } = {}): SimulatorEvent {
    const issue = this.#existing(issueKey);
    if (change.summary !== undefined) {
      const before = issue.summary;
      issue.summary = change.summary;
      issue.updatedAt = this.#now();
      this.changed(issue, 'jira:issue_updated', 'issue_updated', issue.reporterId, [
        textChange('summary', 'Summary', before, issue.summary),
      ]);
      return { type: 'edited', issueKey: issue.key, fieldId: 'summary' };
    }
    const type = this.#requestType(issue.requestTypeId);
    const field = this.#random.pick(type.fields);
    const current = issue.fields.find(({ fieldId }) => fieldId === field.fieldId)!;
    const before = current.value;
    const others = field.values.filter((value) => value !== current.value);
    current.value = others.length > 0 ? this.#random.pick(others) : current.value;
    issue.updatedAt = this.#now();
    this.changed(issue, 'jira:issue_updated', 'issue_updated', issue.reporterId, [
      textChange(field.fieldId, field.label, String(before), String(current.value)),
    ]);
    return { type: 'edited', issueKey: issue.key, fieldId: field.fieldId };
  }

  /** An approver answers in Jira itself (the portal, email), not through the connector. */
  decideInSource(
    issueKey: string,
    approvalId: string,
    accountId: string,
    decision: 'approved' | 'declined',
  ): SimulatorEvent {
    const issue = this.#existing(issueKey);
    const approval = issue.approvals.find(({ id }) => String(id) === approvalId);
    if (approval === undefined) throw new RangeError(`${issue.key} has no approval ${approvalId}`);
    if (!this.isPendingFor(approval, accountId)) {
      throw new RangeError(`approval ${approvalId} of ${issue.key} does not wait for ${accountId}`);
    }
    return this.#answer(issue, approval, accountId, decision, { at: this.#now(), via: 'source' });
  }

  /** An answer given over the REST API, after the caller's checks. */
  answerFromApi(issue: Issue, approval: Approval, accountId: string, decision: 'approved' | 'declined') {
    return this.#answer(issue, approval, accountId, decision, { at: this.#now(), via: 'api' });
  }

  /** An admin deletes the request: it is gone from search and every call about it is a 404. */
  delete(issueKey: string): SimulatorEvent {
    const issue = this.#existing(issueKey);
    this.issues.delete(issue.id);
    this.#byKey.delete(issue.key);
    this.changed(issue, 'jira:issue_deleted', 'issue_deleted', this.syncAccount.accountId, []);
    return { type: 'deleted', issueKey: issue.key };
  }

  /** Tells {@link onIssueChange} of a change of `issue`, with a copy of the issue as it is now. */
  changed(
    issue: Issue,
    webhookEvent: IssueChange['webhookEvent'],
    typeName: string,
    actorId: string,
    items: ChangeItem[],
    { at, comment }: { at?: number; comment?: IssueChange['comment'] } = {},
  ): void {
    if (this.onIssueChange === undefined) return;
    this.onIssueChange({
      webhookEvent,
      typeName,
      issue: structuredClone(issue),
      actorId,
      // The change's own stamp: the clock is not read again (a test's clock may count its reads).
      at: at ?? (webhookEvent === 'jira:issue_deleted' ? undefined : issue.updatedAt),
      items,
      ...(comment === undefined ? {} : { comment }),
    });
  }

  isPendingFor(approval: Approval, accountId: string): boolean {
    return (
      approval.finalDecision === 'pending' &&
      approval.approvers.some(
        (approver) => approver.accountId === accountId && approver.decision === 'pending',
      )
    );
  }

  #answer(
    issue: Issue,
    approval: Approval,
    accountId: string,
    decision: 'approved' | 'declined',
    { at, via }: { at: number; via: 'source' | 'api' },
  ): SimulatorEvent & { type: 'decided' } {
    approval.approvers.find((approver) => approver.accountId === accountId)!.decision = decision;
    const statusBefore = issue.status;
    if (decision === 'declined') approval.finalDecision = 'declined';
    else if (
      approval.needs === 'one' ||
      approval.approvers.every((approver) => approver.decision === 'approved')
    ) {
      approval.finalDecision = 'approved';
    }
    if (approval.finalDecision !== 'pending') {
      approval.completedAt = at;
      issue.status = approval.finalDecision === 'approved' ? 'In progress' : 'Declined';
      issue.statusCategory = approval.finalDecision === 'approved' ? 'INDETERMINATE' : 'DONE';
      issue.statusAt = at;
    }
    // An answer is recorded on the issue (its Approvals field and history), so the issue counts as updated.
    issue.updatedAt = at;
    const items =
      issue.status === statusBefore ? [] : [textChange('status', 'status', statusBefore, issue.status)];
    const typeName = items.length > 0 ? 'issue_generic' : 'issue_updated';
    this.changed(issue, 'jira:issue_updated', typeName, accountId, items, { at });
    const event = {
      type: 'decided' as const,
      issueKey: issue.key,
      approvalId: String(approval.id),
      accountId,
      decision,
      via,
    };
    this.decisions.push(event);
    return event;
  }

  #newIssue(at: number, requestTypeId?: string, chosen: NewRequestChoices = {}): Issue {
    const type =
      requestTypeId === undefined ? this.#random.pick(REQUEST_TYPES) : this.#requestType(requestTypeId);
    if (chosen.approvers !== undefined) this.#checkApprovers(type, chosen.approvers);
    const reporter = this.#random.pick(this.accounts.filter(({ role }) => role === 'customer'));
    const number = this.#nextIssueNumber++;
    const issue: Issue = {
      id: this.#nextIssueId++,
      key: `${this.projectKey}-${number}`,
      projectKey: this.projectKey,
      number,
      requestTypeId: type.id,
      reporterId: reporter.accountId,
      summary: chosen.summary ?? this.#random.pick(type.summaries),
      fields: type.fields.map(({ fieldId, label, values }) => ({
        fieldId,
        label,
        value: this.#random.pick(values),
      })),
      status: type.approval === undefined ? 'Waiting for support' : 'Waiting for approval',
      statusCategory: 'NEW',
      statusAt: at,
      createdAt: at,
      updatedAt: at,
      approvals: [],
    };
    if (type.approval !== undefined) {
      const candidates = [...this.approvers];
      const approvers: Approval['approvers'] = (chosen.approvers ?? []).map((accountId) => ({
        accountId,
        decision: 'pending',
      }));
      while (approvers.length < type.approval.approvers) {
        const [picked] = candidates.splice(this.#random.int(0, candidates.length - 1), 1);
        approvers.push({ accountId: picked!.accountId, decision: 'pending' });
      }
      issue.approvals.push({
        id: this.#nextApprovalId++,
        name: type.approval.name,
        approvers,
        needs: type.approval.needs,
        finalDecision: 'pending',
        createdAt: at,
        completedAt: undefined,
      });
    }
    this.issues.set(issue.id, issue);
    this.#byKey.set(issue.key, issue);
    return issue;
  }

  #pendingAnswers(): { issue: Issue; approval: Approval; accountId: string }[] {
    return [...this.issues.values()].flatMap((issue) =>
      issue.approvals.flatMap((approval) =>
        approval.approvers
          .filter(({ accountId }) => this.isPendingFor(approval, accountId))
          .map(({ accountId }) => ({ issue, approval, accountId })),
      ),
    );
  }

  #checkApprovers(type: RequestType, accountIds: readonly string[]): void {
    const wanted = type.approval?.approvers ?? 0;
    if (accountIds.length !== wanted || new Set(accountIds).size !== accountIds.length) {
      throw new RangeError(
        `request type ${type.id} takes ${wanted} different approvers, got ${accountIds.length}`,
      );
    }
    for (const accountId of accountIds) {
      if (this.account(accountId)?.role !== 'approver') throw new RangeError(`${accountId} is no approver`);
    }
  }

  #requestType(id: string): RequestType {
    const type = REQUEST_TYPES.find((candidate) => candidate.id === id);
    if (type === undefined) throw new RangeError(`no request type ${id}`);
    return type;
  }

  #existing(issueKey: string): Issue {
    const issue = this.issue(issueKey);
    if (issue === undefined) throw new RangeError(`no request ${issueKey}`);
    return issue;
  }
}

/** A change of a field shown as text: its value before and after. */
function textChange(fieldId: string, field: string, before: string, after: string): ChangeItem {
  return {
    field,
    fieldId,
    fieldtype: fieldId.startsWith('customfield_') ? 'custom' : 'jira',
    fromString: before,
    toString: after,
  };
}
