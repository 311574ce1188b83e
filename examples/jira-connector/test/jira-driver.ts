/**
 * The conformance battery's driver of the simulated Jira: it raises, edits, answers and deletes requests in the
 * simulator, on a clock of its own (or the battery's), makes the site fail and answer short pages, and says what the
 * Approval Service should hold, computed from the simulator's records (not through the connector's mapping, which
 * is what the battery checks).
 *
 * `conformance` is the subject the battery takes: `conformanceSuite(conformance, { describe, it })` in
 * `conformance.test.ts`, or `connector verify test/jira-driver.ts` from the command line.
 * @module
 */
import type {
  ConformanceSubject,
  ExpectedApproval,
  FailureScope,
  NewSourceRequest,
  RestoreSource,
  SourceDriver,
  SourceFailure,
  SourceOperation,
} from 'approval-connector-kit/conformance';
import {
  type Disruption,
  type JiraEndpoint,
  JiraSimulator,
  type SimulatedRequest,
} from '../simulator/simulator.js';
import { SERVICE_DESK_ID } from '../simulator/state.js';
import { JiraConnector } from '../src/connector.js';
import { JiraClient } from '../src/jira-client.js';

/** Where the driver's clock starts: every change moves it on a second, unless held still by `sameInstant`. */
const START = Date.parse('2026-03-02T09:00:00.000Z');
/** The request type the driver raises: one approval with one approver, so one request is one service approval. */
const HARDWARE = '10';
/** Issues per search page: small, so that the battery's ties cross pages. */
const PAGE_SIZE = 3;
/** How long a `slow` call takes when the battery does not say: longer than any task's deadline. */
const SLOW_MS = 60_000;

/**
 * The calls of the site each of the battery's operations means. The search pages are the sync's alone, the issue
 * read reconciliation's, the approval read the pre-check's (after `GET /myself`, which says whose credentials the
 * task carries) and the answer the action's. The request and approvals reads serve both the sync and
 * reconciliation, after the search or the issue read: they fail with `any` only, and each operation still fails
 * at its own first call.
 */
const ENDPOINTS: Readonly<Record<SourceOperation, readonly JiraEndpoint[]>> = {
  changes: ['search'],
  lookup: ['issue'],
  precheck: ['myself', 'approval'],
  action: ['answer'],
};

/** The simulated site's clock. */
class SiteClock {
  /** The driver's own: a second further at each change. */
  #own = START;
  /** The battery's, from {@link JiraDriver.setClock}: it moves by itself. */
  #set: (() => number) | undefined;
  /** Held still by {@link JiraDriver.sameInstant}. */
  #held: number | undefined;

  /** Now, to the millisecond, as Jira stamps `updated`. */
  readonly now = (): number => this.#held ?? (this.#set === undefined ? this.#own : Math.floor(this.#set()));

  set(now: () => number): void {
    this.#set = now;
  }

  /** Moves the driver's own clock on before a change, unless held or set. */
  tick(): void {
    if (this.#held === undefined && this.#set === undefined) this.#own += 1000;
  }

  async hold<T>(changes: () => Promise<T>): Promise<T> {
    this.tick();
    this.#held = this.now();
    try {
      return await changes();
    } finally {
      this.#held = undefined;
    }
  }
}

/** The ids of a service approval, as the driver made it. */
interface Made {
  issueId: string;
  issueKey: string;
  approvalId: string;
  accountId: string;
}

/** Drives a simulated Jira site of its own; {@link close} stops it. */
export class JiraDriver implements SourceDriver {
  readonly simulator: JiraSimulator;
  /** Every failure the simulated site can show a client, as Jira Cloud shows it. */
  readonly failures: readonly SourceFailure[] = [
    'unavailable',
    'rateLimited',
    'unreachable',
    'unauthorized',
    'hang',
    'slow',
  ];
  readonly pageSize = PAGE_SIZE;
  /**
   * The site delivers to the webhook the connector registers (it is built with `webhook: 'register'`), at the address
   * and with the secret the battery gives the worker: nothing to do but wait for the site's deliveries.
   */
  readonly push = { deliverTo: () => {}, sent: () => this.simulator.webhooksSettled() };
  readonly approvers: readonly string[];
  readonly #made = new Map<string, Made>();
  readonly #clock: SiteClock;

  private constructor(simulator: JiraSimulator, clock: SiteClock) {
    this.simulator = simulator;
    this.approvers = simulator.approvers.map(({ accountId }) => accountId);
    this.#clock = clock;
  }

  /** A driver and its simulated site, with no requests yet. */
  static async start(): Promise<JiraDriver> {
    const clock = new SiteClock();
    const simulator = await JiraSimulator.start({ requests: 0, now: clock.now });
    simulator.behaviour.searchPageLimit = PAGE_SIZE;
    return new JiraDriver(simulator, clock);
  }

  /** The connector as a deployment would build it, signed in to the site as its sync account. */
  connector(): JiraConnector {
    const { email, apiToken } = this.simulator.syncAccount;
    return new JiraConnector({
      jira: new JiraClient({ baseUrl: this.simulator.url, email, apiToken }),
      jql: this.simulator.jql,
      requestTypes: [HARDWARE],
      webhook: 'register',
    });
  }

  create({ approver, title }: NewSourceRequest): string {
    this.#clock.tick();
    const event = this.simulator.createRequest(HARDWARE, { summary: title, approvers: [approver] });
    const request = this.simulator.request(event.issueKey)!;
    const made = {
      issueId: request.id,
      issueKey: request.key,
      approvalId: request.approvals[0]!.id,
      accountId: approver,
    };
    const id = `${made.issueId}.${made.approvalId}.${made.accountId}`;
    this.#made.set(id, made);
    return id;
  }

  change(id: string, { title }: { title: string }): void {
    this.#clock.tick();
    this.simulator.editRequest(this.#of(id).issueKey, { summary: title });
  }

  /** The approver approves it in Jira itself; an approval decided already stays as it is. */
  resolve(id: string): void {
    const { issueKey, approvalId, accountId } = this.#of(id);
    const approval = this.simulator.request(issueKey)?.approvals.find(({ id }) => id === approvalId);
    const own = approval?.approvers.find((approver) => approver.accountId === accountId);
    if (approval?.finalDecision !== 'pending' || own?.decision !== 'pending') return;
    this.#clock.tick();
    this.simulator.decideInSource(issueKey, approvalId, accountId, 'approved');
  }

  delete(id: string): void {
    this.simulator.deleteRequest(this.#of(id).issueKey);
  }

  sameInstant<T>(changes: () => Promise<T>): Promise<T> {
    return this.#clock.hold(changes);
  }

  /** The site stamps every change (the connector's answers too) with `now()` from here on. */
  setClock(now: () => number): void {
    this.#clock.set(now);
  }

  /** Search pages shorter than `maxResults` and the page limit, `isLast: false` while more follow. */
  shortPages(enabled: boolean): void {
    this.simulator.behaviour.shortPages = enabled;
  }

  /** One service approval per approver of each approval of each request, as Jira shows them now. */
  holds(): ExpectedApproval[] {
    const names = new Map(
      this.simulator.accounts.map(({ accountId, displayName }) => [accountId, displayName]),
    );
    return this.simulator.requests().flatMap((request) =>
      request.approvals.flatMap((approval) =>
        approval.approvers.map(({ accountId, decision }) => ({
          id: `${request.id}.${approval.id}.${accountId}`,
          approver: accountId,
          resolved: approval.finalDecision !== 'pending' || decision !== 'pending',
          schemaId: `jira-request-type-${request.requestTypeId}`,
          lastModified: new Date(Math.max(request.updatedAt.getTime(), approval.completedAt?.getTime() ?? 0)),
          data: { ...this.#shown(request, approval, names), approverName: names.get(accountId) ?? accountId },
        })),
      ),
    );
  }

  /** The answers the site received over its API for this approver of this approval. */
  actions(id: string): number {
    const { issueKey, approvalId, accountId } = this.#of(id);
    return this.simulator
      .decisions({ via: 'api' })
      .filter((decision) => decision.issueKey === issueKey && decision.approvalId === approvalId)
      .filter((decision) => decision.accountId === accountId).length;
  }

  /** The approver's email and API token: what they give the app's sign-in form. */
  credentials(approver: string): Record<string, string> {
    const account = this.simulator.approvers.find(({ accountId }) => accountId === approver);
    if (account === undefined) throw new RangeError(`${approver} is no approver of the simulated site`);
    return { email: account.email, apiToken: account.apiToken };
  }

  /**
   * The site fails the calls of `scope.operation` (see {@link ENDPOINTS}) as Jira Cloud does. Unreachable is the
   * port refusing connections when every call fails until restored; a single endpoint cannot refuse them, so its
   * calls are cut before any answer instead.
   */
  async fail(
    failure: SourceFailure,
    scope: FailureScope = { operation: 'any', times: 'until-restored' },
  ): Promise<RestoreSource> {
    const { operation, times, delayMs } = scope;
    if (failure === 'unreachable' && operation === 'any' && times === 'until-restored') {
      return this.simulator.goOffline();
    }
    const disruption = disruptionOf(failure, delayMs);
    const endpoints = operation === 'any' ? undefined : ENDPOINTS[operation];
    return this.simulator.disrupt(disruption, {
      ...(endpoints === undefined ? {} : { endpoints }),
      ...(times === 'until-restored' ? {} : { times }),
    });
  }

  close(): Promise<void> {
    return this.simulator.close();
  }

  /** What the app shows of an approval: the request, its form and the approval, as Jira holds them. */
  #shown(
    request: SimulatedRequest,
    approval: SimulatedRequest['approvals'][number],
    names: ReadonlyMap<string, string>,
  ): Record<string, unknown> {
    const nameOf = (accountId: string) => names.get(accountId) ?? accountId;
    return {
      issueKey: request.key,
      summary: request.summary,
      requestType: request.requestType,
      reporter: nameOf(request.reporterId),
      status: request.status,
      createdAt: request.createdAt.toISOString(),
      link: `${this.simulator.url}/servicedesk/customer/portal/${SERVICE_DESK_ID}/${request.key}`,
      fields: request.fields.map(({ fieldId, label, value }) => ({ id: fieldId, label, value })),
      approval: {
        id: approval.id,
        name: approval.name,
        finalDecision: approval.finalDecision,
        approvers: approval.approvers.map(({ accountId, decision }) => ({
          name: nameOf(accountId),
          decision,
        })),
      },
    };
  }

  #of(id: string): Made {
    const made = this.#made.get(id);
    if (made === undefined) throw new RangeError(`the driver made no request ${id}`);
    return made;
  }
}

/** How the site shows each failure the driver provokes. */
function disruptionOf(failure: SourceFailure, delayMs: number | undefined): Disruption {
  switch (failure) {
    case 'unavailable':
      return { status: 503 };
    // Jira's 429 says in `Retry-After` how many whole seconds to wait; 0, the limit's window over by the time the
    // answer arrives, keeps the battery from waiting out seconds at each read the connector retries.
    case 'rateLimited':
      return { status: 429, retryAfterSeconds: 0 };
    case 'unreachable':
      return 'cut';
    // The API token expired, or was revoked: Jira refuses it, 401.
    case 'unauthorized':
      return 'unauthorized';
    case 'hang':
      return 'hang';
    case 'slow':
      return { delayMs: delayMs ?? SLOW_MS };
    default:
      throw new RangeError(`the simulated Jira cannot fail as ${failure}`);
  }
}

/** The subject of the conformance battery: a fresh simulated site for each check, and the connector reading it. */
export const conformance: ConformanceSubject<JiraDriver> = {
  name: 'JiraConnector against the simulated Jira',
  driver: () => JiraDriver.start(),
  connector: (driver) => driver.connector(),
};
