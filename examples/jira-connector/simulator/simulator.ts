/**
 * A simulated Jira Service Management Cloud site on a loopback port: exactly the calls the connector makes, with
 * Jira's basic-auth checks, permissions and error shapes, and sample data that changes over time.
 *
 * @example
 * ```ts
 * const jira = await JiraSimulator.start({ seed: 7 });
 * const client = new JiraClient({ baseUrl: jira.url, ...jira.syncAccount });
 * jira.advance(); // a new request, an edit, an answer given in Jira, or a deletion
 * jira.decisions({ via: 'api' }); // what the connector decided
 * await jira.close();
 * ```
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  approvalBody,
  commentBody,
  customerRequestBody,
  myselfBody,
  pageBody,
  platformError,
  SEARCHABLE_FIELDS,
  searchIssueBody,
  serviceDeskError,
} from './answers.js';
import { compareSortKeys, JqlError, parseJql } from './jql.js';
import { Random } from './random.js';
import {
  type Account,
  type Issue,
  type NewRequestChoices,
  type RequestType,
  type SimulatorEvent,
  SiteState,
} from './state.js';
import { minuteStamp } from './time.js';
import {
  DEFAULT_WEBHOOK_BEHAVIOUR,
  type SimulatedApp,
  type SimulatedDelivery,
  SimulatedWebhooks,
  type WebhookBehaviour,
  type WebhookCaller,
} from './webhooks.js';

export type { NewRequestChoices, SimulatorEvent } from './state.js';
export type { SimulatedApp, SimulatedDelivery, WebhookBehaviour } from './webhooks.js';

/** Options of {@link JiraSimulator.start}. */
export interface JiraSimulatorOptions {
  /** Seeds the sample data and the activity: the same seed and calls give the same data. @default 1 */
  seed?: number;
  /** The simulated site's clock: every date it writes comes from it. @default Date.now */
  now?: () => number;
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (any free port) */
  port?: number;
  /** How many requests exist at the start, created in the hours before it. @default 8 */
  requests?: number;
  /** The Service Management project's key. @default 'ITSM' */
  projectKey?: string;
  /** Told each answer given over the API (the connector's decisions), once it is recorded. */
  onAnswer?: (event: SimulatorEvent & { type: 'decided' }) => void;
  /** How the site behaves where Jira's behaviour matters to a client; see {@link JiraBehaviour}. */
  behaviour?: Partial<JiraBehaviour>;
}

/**
 * Where the simulated site behaves as Jira does in ways a client can get wrong. The defaults are Jira's documented
 * behaviour (or, where Atlassian documents none, the less forgiving reading); a test turns on the harder cases, or
 * turns a behaviour off to show what a client would see on a site that lacked it. Change them at any time through
 * {@link JiraSimulator.behaviour}.
 */
export interface JiraBehaviour extends WebhookBehaviour {
  /**
   * A JQL `id`/`issue`/`key` clause naming an issue that does not exist, or that the caller cannot see, makes the
   * whole search a `400` (Jira's JQL validation: "An issue with key … does not exist for field …"), rather than
   * matching nothing.
   * @default true
   */
  jqlIssuesMustExist: boolean;
  /**
   * The most issues one search page holds, whatever `maxResults` asks for: Jira may answer fewer than asked, on any
   * page (Atlassian: "API may return fewer items per page"), and says which page is the last with `isLast`.
   * @default 100
   */
  searchPageLimit: number;
  /**
   * Search pages shorter than they could be, on any page: each holds a random 1 to n - 1 of the n issues it could
   * (n above 1), and says with `isLast: false` and a `nextPageToken` that more follow, as Jira Cloud may (Atlassian:
   * "API may return fewer items per page"). Drawn from the seed.
   * @default false
   */
  shortPages: boolean;
  /**
   * What a `nextPageToken` holds: `offset`, the position of the next page (an issue that moves to the end while
   * the search is paged shifts the rest, and one is skipped), or `cursor`, the sort key of the last issue read
   * (nothing is skipped). Atlassian does not document which a token is; the default is the one a client cannot
   * afford to trust.
   * @default 'offset'
   */
  pageTokens: 'offset' | 'cursor';
  /**
   * Searches during which requests change: before each search call after the first, one request that the call
   * before returned is edited (its `updated` moves to now), until this many were. Each counts down.
   * @default 0
   */
  changesWhilePaging: number;
  /**
   * A rate limit as a token bucket: it holds `capacity` calls, refilled at `refillPerSecond` (on the real,
   * monotonic clock, whatever the site's `now`); a call that finds it empty is answered `429` with `Retry-After`
   * (the whole seconds until a call is allowed again), `X-RateLimit-Reset` and `RateLimit-Reason`, as Jira Cloud
   * answers. `undefined`: no limit. Changing it starts a full bucket.
   * @default undefined
   */
  rateLimit: { capacity: number; refillPerSecond: number } | undefined;
}

const DEFAULT_BEHAVIOUR: JiraBehaviour = {
  jqlIssuesMustExist: true,
  searchPageLimit: 100,
  shortPages: false,
  pageTokens: 'offset',
  changesWhilePaging: 0,
  rateLimit: undefined,
  ...DEFAULT_WEBHOOK_BEHAVIOUR,
};

/** An account of the simulated site and its API token. */
export interface SimulatedAccount {
  accountId: string;
  email: string;
  displayName: string;
  apiToken: string;
  timeZone: string;
}

/** A request as the simulated site holds it, for tests to look at. */
export interface SimulatedRequest {
  id: string;
  key: string;
  summary: string;
  requestTypeId: string;
  /** The request type's name. */
  requestType: string;
  /** The account id of the customer who raised it. */
  reporterId: string;
  status: string;
  createdAt: Date;
  updatedAt: Date;
  fields: { fieldId: string; label: string; value: string | number }[];
  approvals: {
    id: string;
    name: string;
    finalDecision: 'approved' | 'declined' | 'pending';
    /** When it got its final decision. */
    completedAt: Date | undefined;
    approvers: { accountId: string; decision: 'approved' | 'declined' | 'pending' }[];
  }[];
}

/** A comment added to a request over the API. */
export interface SimulatedComment {
  id: string;
  issueKey: string;
  authorId: string;
  body: string;
  public: boolean;
}

/** An answer the simulated site gives instead of the next ones: a rate limit or an outage. */
export interface SimulatedFault {
  /** `429`, or a `5xx`. */
  status: number;
  /** Sent as `Retry-After`, and in `X-RateLimit-Reset` with a 429. */
  retryAfterSeconds?: number;
  /** Only calls of this method get it; others are answered as usual. @default any method */
  method?: 'GET' | 'POST';
}

/**
 * The calls of the site's API, as {@link JiraSimulator.disrupt} names them: `GET /rest/api/3/myself`, `GET
 * /rest/api/3/search/jql`, `GET /rest/api/3/issue/{issueIdOrKey}`, `GET /rest/servicedeskapi/request/{issueIdOrKey}`,
 * `GET …/request/{issueIdOrKey}/approval`, `GET …/approval/{approvalId}`, `POST …/approval/{approvalId}` (an
 * answer), `POST …/request/{issueIdOrKey}/comment`, and the webhook APIs: `/rest/webhooks/1.0/webhook[/{id}]` (the
 * admin webhooks) and `/rest/api/3/webhook[/refresh]` (the dynamic ones).
 */
export type JiraEndpoint =
  | 'adminWebhooks'
  | 'dynamicWebhooks'
  | 'myself'
  | 'search'
  | 'issue'
  | 'request'
  | 'approvals'
  | 'approval'
  | 'answer'
  | 'comment';

/**
 * What goes wrong with the calls {@link JiraSimulator.disrupt} takes: a {@link SimulatedFault}'s answer;
 * `'unauthorized'`, the `401` Jira answers credentials it refuses (an expired or revoked API token); `'cut'`, the
 * connection closed before any answer, as when the site drops off the network mid-call; `'hang'`, no answer until
 * the disruption ends (then the call is cut) or the client gives up; `{ delayMs }`, answered and carried out only
 * that much later, and not at all when the client gave up meanwhile.
 */
export type Disruption = SimulatedFault | 'unauthorized' | 'cut' | 'hang' | { delayMs: number };

/** Which calls {@link JiraSimulator.disrupt} takes. */
export interface DisruptionScope {
  /** Only calls of these endpoints. @default every call */
  endpoints?: readonly JiraEndpoint[];
  /** Only the next this many of them. @default every one until the disruption ends */
  times?: number;
}

interface ActiveDisruption {
  disruption: Disruption;
  endpoints: readonly JiraEndpoint[] | undefined;
  left: number;
  /** The calls it holds unanswered (`hang`). */
  held: Set<ServerResponse>;
}

type Caller = WebhookCaller | { kind: 'refused' };
type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

const MAX_BODY_BYTES = 64 * 1024;
const MAX_SEARCH_RESULTS = 5000;

/** The simulated site and its HTTP server. */
export class JiraSimulator {
  /** The site's base URL, such as `http://127.0.0.1:38211`. */
  readonly url: string;
  readonly #server: Server;
  readonly #state: SiteState;
  readonly #now: () => number;
  readonly #faults: SimulatedFault[] = [];
  readonly #onAnswer: JiraSimulatorOptions['onAnswer'];
  /** How the site behaves; tests change it as they go. */
  readonly behaviour: JiraBehaviour;
  /** The issues the last search page returned, for {@link JiraBehaviour.changesWhilePaging}. */
  #lastSearchPage: readonly Issue[] = [];
  /** The token bucket of {@link JiraBehaviour.rateLimit}: the limit it was filled for, its tokens, and when. */
  #bucket: { limit: JiraBehaviour['rateLimit']; tokens: number; at: number } | undefined;
  #rateLimited = 0;
  readonly #comments: SimulatedComment[] = [];
  /** The answer of every call during {@link outage}. */
  #outage: SimulatedFault | undefined;
  /** The calls held, unanswered, during {@link hang}. */
  #hanging: Set<ServerResponse> | undefined;
  /** What {@link disrupt} set going, oldest first. */
  readonly #disruptions: ActiveDisruption[] = [];
  /** The calls a disruption holds now: {@link waiting}. */
  #waiting = 0;
  /** Draws {@link JiraBehaviour.shortPages}. */
  readonly #random: Random;
  readonly #webhooks: SimulatedWebhooks;
  #closing: Promise<void> | undefined;

  private constructor(
    server: Server,
    url: string,
    state: SiteState,
    now: () => number,
    onAnswer: JiraSimulatorOptions['onAnswer'],
    behaviour: Partial<JiraBehaviour> | undefined,
    seed: number,
  ) {
    this.behaviour = { ...DEFAULT_BEHAVIOUR, ...behaviour };
    checkRateLimit(this.behaviour.rateLimit);
    this.#server = server;
    this.url = url;
    this.#state = state;
    this.#now = now;
    this.#onAnswer = onAnswer;
    this.#random = new Random(seed ^ 0x5eed);
    this.#webhooks = new SimulatedWebhooks({ base: url, state, now, behaviour: this.behaviour, seed });
  }

  /** Starts a simulated site on a loopback port. */
  static async start(options: JiraSimulatorOptions = {}): Promise<JiraSimulator> {
    const {
      seed = 1,
      now = Date.now,
      host = '127.0.0.1',
      port = 0,
      requests = 8,
      projectKey = 'ITSM',
    } = options;
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a whole number, got ${seed}`);
    if (!Number.isSafeInteger(requests) || requests < 0) {
      throw new RangeError(`requests must be a whole number from 0, got ${requests}`);
    }
    if (!/^[A-Z][A-Z0-9]{1,9}$/.test(projectKey)) {
      throw new RangeError(
        `projectKey must be 2 to 10 capital letters and digits, got ${JSON.stringify(projectKey)}`,
      );
    }
    const state = new SiteState({ seed, now, projectKey, requests });
    let simulator: JiraSimulator | undefined;
    const server = createServer((request, response) => {
      simulator!.#handle(request, response).catch(() => response.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const hostInUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    simulator = new JiraSimulator(
      server,
      `http://${hostInUrl}:${address.port}`,
      state,
      now,
      options.onAnswer,
      options.behaviour,
      seed,
    );
    return simulator;
  }

  /** How many calls {@link disrupt} holds now, unanswered: hung, or slow and not yet carried out. */
  get waiting(): number {
    return this.#waiting;
  }

  /** How many calls {@link JiraBehaviour.rateLimit} answered `429`. */
  get rateLimited(): number {
    return this.#rateLimited;
  }

  /** The JQL that selects the simulated project's requests. */
  get jql(): string {
    return `project = ${this.#state.projectKey}`;
  }

  /** The Service Management agent the connector syncs as: it may search the project and read every request. */
  get syncAccount(): SimulatedAccount {
    return accountView(this.#state.syncAccount);
  }

  /** The approvers; each may answer the approvals that name them. One of them hides their email. */
  get approvers(): SimulatedAccount[] {
    return this.#state.approvers.map(accountView);
  }

  /**
   * The variables the example connector reads to sync this site as its sync account: `JIRA_BASE_URL`,
   * `JIRA_EMAIL`, `JIRA_API_TOKEN`, `JIRA_JQL`, and `JIRA_REQUEST_TYPES` (the request types that ask for approval).
   */
  connectorEnv(): Record<string, string> {
    const sync = this.#state.syncAccount;
    return {
      JIRA_BASE_URL: this.url,
      JIRA_EMAIL: sync.email,
      JIRA_API_TOKEN: sync.apiToken,
      JIRA_JQL: this.jql,
      JIRA_REQUEST_TYPES: this.#state.requestTypes
        .filter(({ approval }) => approval !== undefined)
        .map(({ id }) => id)
        .join(','),
    };
  }

  /** Every account, the customers who raise requests included. */
  get accounts(): SimulatedAccount[] {
    return this.#state.accounts.map(accountView);
  }

  /** Rounds of activity: each is a new request, an edit, an answer given in Jira, or (rarely) a deletion. */
  advance(rounds = 1): SimulatorEvent[] {
    return Array.from({ length: rounds }, () => this.#state.advance());
  }

  /**
   * A customer raises a request (of the given request type: `10` hardware, `11` software, `12` travel, `13` help),
   * with the summary and approvers given, or picked at random.
   */
  createRequest(requestTypeId?: string, chosen?: NewRequestChoices): SimulatorEvent {
    return this.#state.create(requestTypeId, chosen);
  }

  /** One of the request's fields changes, or its summary, when given. */
  editRequest(issueKey: string, change?: { summary?: string }): SimulatorEvent {
    return this.#state.edit(issueKey, change);
  }

  /** An approver answers in Jira itself, not through the connector. */
  decideInSource(
    issueKey: string,
    approvalId: string,
    accountId: string,
    decision: 'approved' | 'declined',
  ): SimulatorEvent {
    return this.#state.decideInSource(issueKey, approvalId, accountId, decision);
  }

  /** The request is deleted: gone from search, and a 404 for every call about it. */
  deleteRequest(issueKey: string): SimulatorEvent {
    return this.#state.delete(issueKey);
  }

  /** The account's API token expires: it no longer signs in (`401`). */
  expireToken(email: string): void {
    const account = this.#state.accounts.find((candidate) => candidate.email === email);
    if (account === undefined) throw new RangeError(`no account ${email}`);
    account.tokenExpired = true;
  }

  /** The account's API token signs in again (after {@link expireToken}). */
  renewToken(email: string): void {
    const account = this.#state.accounts.find((candidate) => candidate.email === email);
    if (account === undefined) throw new RangeError(`no account ${email}`);
    account.tokenExpired = false;
  }

  /**
   * An outage: every call, whoever makes it, gets this answer until the returned function is called (which ends
   * it). Calls {@link failNext} queued come after it.
   */
  outage(fault: SimulatedFault): () => void {
    checkFault(fault);
    this.#outage = fault;
    return () => {
      if (this.#outage === fault) this.#outage = undefined;
    };
  }

  /**
   * The site stops answering: every call is held, never answered, until the returned function is called, which
   * cuts the held ones (as a load balancer's idle timeout would) and answers the next calls again.
   */
  hang(): () => void {
    this.#hanging ??= new Set();
    return () => {
      for (const response of this.#hanging ?? []) response.destroy();
      this.#hanging = undefined;
    };
  }

  /**
   * The site goes off the network: its port refuses connections (`ECONNREFUSED`) and open connections are cut,
   * until the returned function is called, which listens on the same port again.
   */
  async goOffline(): Promise<() => Promise<void>> {
    if (this.#closing !== undefined) throw new Error('the simulator is closed');
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return async () => {
      if (this.#closing !== undefined || this.#server.listening) return;
      const { hostname, port } = new URL(this.url);
      await new Promise<void>((resolve, reject) => {
        this.#server.once('error', reject);
        this.#server.listen(Number(port), hostname.replace(/^\[|\]$/g, ''), () => {
          this.#server.off('error', reject);
          resolve();
        });
      });
    };
  }

  /**
   * Calls go wrong as `disruption` says: those of `scope.endpoints` (every call without), the next `scope.times` of
   * them or every one until the returned function is called, which ends it (a count not used up included) and cuts
   * the calls it holds. It comes before an {@link outage} and {@link failNext}; of two that take a call, the older.
   */
  disrupt(disruption: Disruption, scope: DisruptionScope = {}): () => void {
    if (typeof disruption === 'object' && 'status' in disruption) checkFault(disruption);
    if (typeof disruption === 'object' && 'delayMs' in disruption) {
      if (!Number.isSafeInteger(disruption.delayMs) || disruption.delayMs < 0) {
        throw new RangeError(`delayMs must be a whole number from 0, got ${disruption.delayMs}`);
      }
    }
    const { endpoints, times = Number.POSITIVE_INFINITY } = scope;
    if (times !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(times) || times < 1)) {
      throw new RangeError(`times must be a whole number from 1, got ${times}`);
    }
    const active: ActiveDisruption = { disruption, endpoints, left: times, held: new Set() };
    this.#disruptions.push(active);
    return () => {
      const at = this.#disruptions.indexOf(active);
      if (at >= 0) this.#disruptions.splice(at, 1);
      for (const response of active.held) response.destroy();
      active.held.clear();
    };
  }

  /** The next `times` calls, whoever makes them, get this answer instead. */
  failNext(fault: SimulatedFault, times = 1): void {
    checkFault(fault);
    for (let i = 0; i < times; i++) this.#faults.push(fault);
  }

  /** The answers given so far, in order: through the API (`via: 'api'`), in Jira itself (`'source'`), or both. */
  decisions(filter: { via?: 'api' | 'source' } = {}): (SimulatorEvent & { type: 'decided' })[] {
    return this.#state.decisions
      .filter(({ via }) => filter.via === undefined || via === filter.via)
      .map((decision) => ({ ...decision }));
  }

  /** The comments added over the API, in order. */
  comments(): SimulatedComment[] {
    return this.#comments.map((comment) => ({ ...comment }));
  }

  /** The request with this key or id as the site holds it now; `undefined` when there is none (or it was deleted). */
  request(issueIdOrKey: string): SimulatedRequest | undefined {
    const issue = this.#state.issue(issueIdOrKey);
    return issue === undefined ? undefined : requestView(issue, this.#state.requestTypes);
  }

  /** Every request, oldest first. */
  requests(): SimulatedRequest[] {
    return [...this.#state.issues.values()].map((issue) => requestView(issue, this.#state.requestTypes));
  }

  /**
   * The site's OAuth 2.0 app: its access token (`Authorization: Bearer`) is the one credential that may manage
   * dynamic webhooks, as only Connect and OAuth 2.0 apps may in Jira. It may call nothing else here.
   */
  get app(): SimulatedApp {
    return { ...this.#webhooks.app };
  }

  /** Every webhook delivery attempted, and every one dropped, oldest first. */
  deliveries(): SimulatedDelivery[] {
    return this.#webhooks.deliveries();
  }

  /** Resolves once no webhook delivery waits to be sent, is being sent, or waits for a retry. */
  webhooksSettled(): Promise<void> {
    return this.#webhooks.settled();
  }

  /** Stops the server; calls in flight are cut, and webhook deliveries not sent yet never are. Idempotent. */
  async close(): Promise<void> {
    this.#webhooks.close();
    this.#closing ??= new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    await this.#closing;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (this.#hanging !== undefined) {
      this.#hanging.add(response);
      return;
    }
    const disrupted = this.#disruptionOf(request);
    if (disrupted !== undefined) {
      const { disruption, held } = disrupted;
      if (disruption === 'cut') {
        response.destroy();
        return;
      }
      if (disruption === 'hang') {
        held.add(response);
        this.#waiting += 1;
        response.once('close', () => {
          held.delete(response);
          this.#waiting -= 1;
        });
        return;
      }
      if (disruption === 'unauthorized') return this.#write(response, refusedCredentials());
      if ('status' in disruption) return this.#write(response, this.#faultAnswer(disruption));
      // Slow: nothing is read of the call, nor carried out, before the delay; a client gone by then gets nothing.
      this.#waiting += 1;
      const gone = await closesWithin(response, disruption.delayMs).finally(() => {
        this.#waiting -= 1;
      });
      if (gone) return;
    }
    let answer: Answer;
    try {
      answer = await this.#answer(request);
    } catch {
      answer = { status: 500, body: platformError('Internal server error') };
    }
    this.#write(response, answer);
  }

  /** The disruption that takes this call, counted down; `undefined` when none does. */
  #disruptionOf(request: IncomingMessage): ActiveDisruption | undefined {
    if (this.#disruptions.length === 0) return undefined;
    const endpoint = endpointOf(request.method ?? 'GET', new URL(request.url ?? '/', this.url).pathname);
    const at = this.#disruptions.findIndex(
      ({ endpoints }) => endpoints === undefined || (endpoint !== undefined && endpoints.includes(endpoint)),
    );
    if (at < 0) return undefined;
    const active = this.#disruptions[at]!;
    active.left -= 1;
    if (active.left <= 0) this.#disruptions.splice(at, 1);
    return active;
  }

  #write(response: ServerResponse, answer: Answer): void {
    const headers: Record<string, string> = { ...answer.headers };
    let payload = '';
    if (answer.body !== undefined) {
      payload = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      headers['content-type'] ??= 'application/json;charset=UTF-8';
    }
    response.writeHead(answer.status, headers);
    response.end(payload);
  }

  async #answer(request: IncomingMessage): Promise<Answer> {
    const url = new URL(request.url ?? '/', this.url);
    const path = url.pathname;
    const outage = this.#outage;
    if (outage !== undefined && (outage.method === undefined || outage.method === request.method)) {
      return this.#faultAnswer(outage);
    }
    const faultAt = this.#faults.findIndex(({ method }) => method === undefined || method === request.method);
    if (faultAt >= 0) return this.#faultAnswer(this.#faults.splice(faultAt, 1)[0]!);
    const waitSeconds = this.#takeToken();
    if (waitSeconds !== undefined) {
      this.#rateLimited += 1;
      return this.#faultAnswer({ status: 429, retryAfterSeconds: waitSeconds });
    }

    const caller = this.#authenticate(request.headers.authorization);
    if (caller.kind === 'refused') return refusedCredentials();
    const method = request.method ?? 'GET';
    const webhooks = this.#webhookCall(request, url, caller);
    if (webhooks !== undefined) return await webhooks;
    if (caller.kind === 'app') {
      return {
        status: 401,
        body: platformError('The simulated site lets its app call the webhook API only.'),
      };
    }
    if (path === '/rest/api/3/myself') {
      if (method !== 'GET') return methodNotAllowed();
      if (caller.kind !== 'account') {
        return {
          status: 401,
          body: platformError(
            'You are not authenticated. Authentication required to perform this operation.',
          ),
        };
      }
      return { status: 200, body: myselfBody(this.url, caller.account) };
    }
    if (path === '/rest/api/3/search/jql') {
      if (method !== 'GET') return methodNotAllowed();
      return this.#search(url.searchParams, caller);
    }
    const issuePath = /^\/rest\/api\/3\/issue\/([^/]+)$/.exec(path);
    if (issuePath !== null) {
      if (method !== 'GET') return methodNotAllowed();
      const issue = this.#state.issue(safeDecode(issuePath[1]!));
      if (issue === undefined || caller.kind !== 'account' || !this.#canView(caller.account, issue)) {
        return {
          status: 404,
          body: platformError('Issue does not exist or you do not have permission to see it.'),
        };
      }
      return {
        status: 200,
        body: searchIssueBody(this.url, issue, fieldsOf(url.searchParams), this.#state.timeZone),
      };
    }
    const commentPath = /^\/rest\/servicedeskapi\/request\/([^/]+)\/comment$/.exec(path);
    if (commentPath !== null) {
      if (method !== 'POST') return methodNotAllowed();
      if (caller.kind !== 'account') {
        return { status: 401, body: serviceDeskError('You are not logged in.', 'sd.security.not.logged.in') };
      }
      const issue = this.#state.issue(safeDecode(commentPath[1]!));
      if (issue === undefined || !this.#canView(caller.account, issue)) {
        return {
          status: 404,
          body: serviceDeskError(
            'The request does not exist or you do not have permission to see it.',
            'sd.request.not.found',
          ),
        };
      }
      return this.#addComment(request, issue, caller.account);
    }
    const match = /^\/rest\/servicedeskapi\/request\/([^/]+)(\/approval(?:\/([^/]+))?)?$/.exec(path);
    if (match !== null) {
      const [, issueIdOrKey, approvals, approvalId] = match;
      const isPost = approvalId !== undefined && method === 'POST';
      if (method !== 'GET' && !isPost) return methodNotAllowed();
      if (caller.kind !== 'account') {
        return { status: 401, body: serviceDeskError('You are not logged in.', 'sd.security.not.logged.in') };
      }
      const issue = this.#state.issue(safeDecode(issueIdOrKey!));
      if (issue === undefined || !this.#canView(caller.account, issue)) {
        return {
          status: 404,
          body: serviceDeskError(
            'The request does not exist or you do not have permission to see it.',
            'sd.request.not.found',
          ),
        };
      }
      if (approvals === undefined) {
        const expand = url.searchParams.getAll('expand').flatMap((value) => value.split(','));
        const body = customerRequestBody(this.url, this.#state, issue, expand.includes('requestType'));
        return { status: 200, body };
      }
      if (approvalId === undefined) return this.#listApprovals(url, issue, caller.account);
      const approval = issue.approvals.find(({ id }) => String(id) === approvalId);
      if (approval === undefined) {
        return {
          status: 404,
          body: serviceDeskError('The approval does not exist.', 'sd.approval.not.found'),
        };
      }
      if (!isPost)
        return { status: 200, body: approvalBody(this.url, this.#state, issue, approval, caller.account) };
      return this.#answerApproval(request, issue, approval.id, caller.account);
    }
    return { status: 404, body: platformError(`null for uri: ${url.href}`) };
  }

  /** A call of the webhook APIs, answered; `undefined` for any other call. */
  #webhookCall(request: IncomingMessage, url: URL, caller: WebhookCaller): Promise<Answer> | undefined {
    const method = request.method ?? 'GET';
    const admin = /^\/rest\/webhooks\/1\.0\/webhook(?:\/([^/]+))?$/.exec(url.pathname);
    const dynamic = /^\/rest\/api\/3\/webhook(\/refresh)?$/.exec(url.pathname);
    if (admin === null && dynamic === null) return undefined;
    return (async () => {
      let body: unknown;
      if (method === 'POST' || method === 'PUT' || (method === 'DELETE' && dynamic !== null)) {
        if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return { status: 415 };
        const text = await readBody(request);
        if (text === undefined) return { status: 413 };
        try {
          body = JSON.parse(text);
        } catch {
          return { status: 400, body: platformError('The request body is not valid JSON.') };
        }
      }
      if (admin !== null) return this.#webhooks.admin(method, admin[1], caller, body);
      return this.#webhooks.dynamic(method, dynamic![1] !== undefined, caller, url.searchParams, body);
    })();
  }

  #search(params: URLSearchParams, caller: Caller): Answer {
    const reader = caller.kind === 'account' ? caller.account : undefined;
    // Without Browse projects (anonymous, customers, approvers) the project is not there for the caller.
    const browses = reader?.role === 'agent';
    const jql = params.get('jql');
    if (jql === null || jql.trim() === '') {
      return { status: 400, body: platformError('The JQL query is required and must be bounded.') };
    }
    const maxResults = Number(params.get('maxResults') ?? 50);
    if (!Number.isInteger(maxResults)) {
      return {
        status: 400,
        body: platformError(`The value '${params.get('maxResults')}' is not a valid number.`),
      };
    }
    const reconcile = params.getAll('reconcileIssues').flatMap((value) => value.split(','));
    if (reconcile.length > 50) {
      return { status: 400, body: platformError('reconcileIssues accepts at most 50 issue ids.') };
    }
    let query: ReturnType<typeof parseJql>;
    const exists = (idOrKey: string) => {
      const issue = this.#state.issue(idOrKey);
      return issue !== undefined && browses;
    };
    try {
      query = parseJql(
        jql,
        reader?.timeZone ?? 'UTC',
        new Set(browses ? [this.#state.projectKey] : []),
        this.behaviour.jqlIssuesMustExist ? exists : undefined,
      );
    } catch (error) {
      if (error instanceof JqlError) return { status: 400, body: platformError(error.message) };
      throw error;
    }
    if (!query.bounded) {
      return {
        status: 400,
        body: platformError(
          'Unbounded JQL queries are not allowed here. Please add a search restriction to your query.',
        ),
      };
    }
    let position: PagePosition = { offset: 0 };
    const token = params.get('nextPageToken');
    if (token !== null) {
      const read = readPageToken(token, jql);
      if (read === undefined) {
        return { status: 400, body: platformError('The provided next page token is invalid or expired.') };
      }
      position = read;
    }
    this.#changeWhilePaging();
    const { after } = position;
    const { directions } = query;
    // Each matching issue with its sort key, worked out once per search rather than at each comparison.
    const matching: { issue: Issue; key: readonly (number | string)[] }[] = [];
    if (browses) {
      for (const issue of this.#state.issues.values()) {
        if (!query.matches(issue)) continue;
        const key = query.sortKey(issue);
        if (after === undefined || compareSortKeys(key, after, directions) > 0) matching.push({ issue, key });
      }
    }
    const found = matching.sort((a, b) => compareSortKeys(a.key, b.key, directions)).slice(position.offset);
    let size = Math.min(Math.max(maxResults, 1), MAX_SEARCH_RESULTS, this.behaviour.searchPageLimit);
    const left = Math.min(size, found.length);
    if (this.behaviour.shortPages && left > 1) size = this.#random.int(1, left - 1);
    const page = found.slice(0, size).map(({ issue }) => issue);
    this.#lastSearchPage = page;
    const isLast = found.length <= size;
    const next: PagePosition =
      this.behaviour.pageTokens === 'offset'
        ? { offset: position.offset + page.length }
        : { offset: 0, after: found[page.length - 1]?.key ?? [] };
    return {
      status: 200,
      body: {
        issues: page.map((issue) => searchIssueBody(this.url, issue, fieldsOf(params), this.#state.timeZone)),
        ...(isLast ? {} : { nextPageToken: writePageToken(jql, next) }),
        isLast,
      },
    };
  }

  /** {@link JiraBehaviour.changesWhilePaging}: a request the last search page returned is edited. */
  #changeWhilePaging(): void {
    if (this.behaviour.changesWhilePaging <= 0) return;
    const issue = this.#lastSearchPage.find((candidate) => this.#state.issues.has(candidate.id));
    if (issue === undefined) return;
    this.behaviour.changesWhilePaging -= 1;
    this.#state.edit(issue.key);
  }

  async #addComment(request: IncomingMessage, issue: Issue, caller: Account): Promise<Answer> {
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return { status: 415 };
    const text = await readBody(request);
    if (text === undefined) return { status: 413 };
    let body: { body?: unknown; public?: unknown } | null;
    try {
      body = JSON.parse(text) as { body?: unknown; public?: unknown } | null;
    } catch {
      return {
        status: 400,
        body: serviceDeskError('The request body is not valid JSON.', 'sd.request.body.invalid'),
      };
    }
    if (typeof body?.body !== 'string' || body.body.trim() === '') {
      return {
        status: 400,
        body: serviceDeskError('The comment body is required.', 'sd.comment.body.required'),
      };
    }
    const isPublic = body.public === undefined ? true : body.public;
    if (typeof isPublic !== 'boolean') {
      return {
        status: 400,
        body: serviceDeskError('public must be true or false.', 'sd.comment.public.invalid'),
      };
    }
    // Only an agent may add an internal comment.
    if (!isPublic && caller.role !== 'agent') {
      return {
        status: 403,
        body: serviceDeskError(
          'You do not have permission to add internal comments.',
          'sd.comment.internal.forbidden',
        ),
      };
    }
    const comment: SimulatedComment = {
      id: String(10_000 + this.#comments.length + 1),
      issueKey: issue.key,
      authorId: caller.accountId,
      body: body.body,
      public: isPublic,
    };
    this.#comments.push(comment);
    issue.updatedAt = this.#now();
    this.#state.changed(issue, 'jira:issue_updated', 'issue_commented', caller.accountId, [], {
      comment: { id: comment.id, body: comment.body, authorId: caller.accountId, public: isPublic },
    });
    return {
      status: 201,
      body: commentBody(this.url, this.#state, issue, comment, this.#state.account(caller.accountId)!),
    };
  }

  #listApprovals(url: URL, issue: Issue, reader: Account): Answer {
    const start = Number(url.searchParams.get('start') ?? 0);
    const limit = Number(url.searchParams.get('limit') ?? 50);
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(limit) || limit < 1) {
      return {
        status: 400,
        body: serviceDeskError('start must be 0 or more and limit 1 or more.', 'sd.paging.invalid'),
      };
    }
    const values = issue.approvals
      .slice(start, start + limit)
      .map((approval) => approvalBody(this.url, this.#state, issue, approval, reader));
    const path = `/rest/servicedeskapi/request/${issue.id}/approval`;
    return { status: 200, body: pageBody(this.url, path, values, start, limit, issue.approvals.length) };
  }

  async #answerApproval(
    request: IncomingMessage,
    issue: Issue,
    approvalId: number,
    caller: Account,
  ): Promise<Answer> {
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return { status: 415 };
    const text = await readBody(request);
    if (text === undefined) return { status: 413 };
    let decision: unknown;
    try {
      decision = (JSON.parse(text) as { decision?: unknown } | null)?.decision;
    } catch {
      return {
        status: 400,
        body: serviceDeskError('The request body is not valid JSON.', 'sd.request.body.invalid'),
      };
    }
    if (decision !== 'approve' && decision !== 'decline') {
      return {
        status: 400,
        body: serviceDeskError(
          'The decision must be "approve" or "decline".',
          'sd.approval.decision.invalid',
        ),
      };
    }
    // Read again after the body: the request or the approval may have gone meanwhile.
    const approval = this.#state.issue(String(issue.id))?.approvals.find(({ id }) => id === approvalId);
    if (approval === undefined) {
      return { status: 404, body: serviceDeskError('The approval does not exist.', 'sd.approval.not.found') };
    }
    if (!approval.approvers.some(({ accountId }) => accountId === caller.accountId)) {
      return {
        status: 403,
        body: serviceDeskError('You are not an approver of this approval.', 'sd.approval.not.approver'),
      };
    }
    if (!this.#state.isPendingFor(approval, caller.accountId)) {
      // Service Management's OpenAPI: 409 "if the approval has already been decided".
      return {
        status: 409,
        body: serviceDeskError(
          'The request is not awaiting this approval, or you have already answered it.',
          'sd.approval.already.answered',
        ),
      };
    }
    const answered = this.#state.answerFromApi(
      issue,
      approval,
      caller.accountId,
      decision === 'approve' ? 'approved' : 'declined',
    );
    this.#onAnswer?.({ ...answered });
    return { status: 200, body: approvalBody(this.url, this.#state, issue, approval, caller) };
  }

  /** Takes a call from the rate limit's bucket: `undefined` when it had one, else the seconds until it has. */
  #takeToken(): number | undefined {
    const limit = this.behaviour.rateLimit;
    if (limit === undefined) return undefined;
    const now = performance.now();
    if (this.#bucket?.limit !== limit) checkRateLimit(limit);
    if (this.#bucket?.limit !== limit) this.#bucket = { limit, tokens: limit.capacity, at: now };
    const bucket = this.#bucket;
    bucket.tokens = Math.min(
      limit.capacity,
      bucket.tokens + ((now - bucket.at) / 1000) * limit.refillPerSecond,
    );
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / limit.refillPerSecond));
  }

  #faultAnswer(fault: SimulatedFault): Answer {
    const headers: Record<string, string> = {};
    if (fault.retryAfterSeconds !== undefined) {
      headers['retry-after'] = String(fault.retryAfterSeconds);
      if (fault.status === 429) {
        headers['x-ratelimit-reset'] = minuteStamp(this.#now() + fault.retryAfterSeconds * 1000);
        headers['ratelimit-reason'] = 'jira-quota-based';
      }
    }
    return { status: fault.status, headers };
  }

  #authenticate(header: string | undefined): Caller {
    if (header === undefined) return { kind: 'anonymous' };
    const bearer = /^Bearer (\S+)$/i.exec(header.trim());
    if (bearer !== null)
      return bearer[1] === this.#webhooks.app.accessToken ? { kind: 'app' } : { kind: 'refused' };
    const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
    if (match === null) return { kind: 'refused' };
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const email = decoded.slice(0, colon).toLowerCase();
    const token = decoded.slice(colon + 1);
    const account = this.#state.accounts.find((candidate) => candidate.email === email);
    if (colon < 0 || account === undefined || account.tokenExpired || account.apiToken !== token) {
      return { kind: 'refused' };
    }
    return { kind: 'account', account };
  }

  #canView(account: Account, issue: Issue): boolean {
    return (
      account.role === 'agent' ||
      issue.reporterId === account.accountId ||
      issue.approvals.some(({ approvers }) =>
        approvers.some(({ accountId }) => accountId === account.accountId),
      )
    );
  }
}

/** Jira's answer to credentials it refuses (wrong, expired or revoked), before any resource runs. */
function refusedCredentials(): Answer {
  return {
    status: 401,
    headers: { 'x-seraph-loginreason': 'AUTHENTICATED_FAILED', 'content-type': 'text/html;charset=UTF-8' },
    body: '<html><body><h1>Unauthorized (401)</h1><p>Basic Authentication Failure - Reason : AUTHENTICATED_FAILED</p></body></html>',
  };
}

/** Which of the API's calls this is; `undefined` for a path the site does not serve. */
function endpointOf(method: string, path: string): JiraEndpoint | undefined {
  if (/^\/rest\/webhooks\/1\.0\/webhook(\/[^/]+)?$/.test(path)) return 'adminWebhooks';
  if (/^\/rest\/api\/3\/webhook(\/refresh)?$/.test(path)) return 'dynamicWebhooks';
  if (path === '/rest/api/3/myself') return 'myself';
  if (path === '/rest/api/3/search/jql') return 'search';
  if (/^\/rest\/api\/3\/issue\/[^/]+$/.test(path)) return 'issue';
  const request = /^\/rest\/servicedeskapi\/request\/[^/]+(\/comment|\/approval(\/[^/]+)?)?$/.exec(path);
  if (request === null) return undefined;
  if (request[1] === '/comment') return 'comment';
  if (request[2] !== undefined) return method === 'POST' ? 'answer' : 'approval';
  return request[1] === undefined ? 'request' : 'approvals';
}

/** Whether the call's connection closes (its client gave up) within `ms`. */
function closesWithin(response: ServerResponse, ms: number): Promise<boolean> {
  if (response.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const closed = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      response.off('close', closed);
      resolve(false);
    }, ms);
    response.once('close', closed);
  });
}

function checkFault(fault: SimulatedFault): void {
  if (
    !Number.isInteger(fault.status) ||
    (fault.status !== 429 && (fault.status < 500 || fault.status > 599))
  ) {
    throw new RangeError(`fault.status must be 429 or a 5xx, got ${fault.status}`);
  }
  if (fault.method !== undefined && fault.method !== 'GET' && fault.method !== 'POST') {
    throw new RangeError(`fault.method must be GET or POST, got ${JSON.stringify(fault.method)}`);
  }
}

function checkRateLimit(limit: JiraBehaviour['rateLimit']): void {
  if (limit === undefined) return;
  const { capacity, refillPerSecond } = limit;
  if (
    !Number.isSafeInteger(capacity) ||
    capacity < 1 ||
    !(refillPerSecond > 0 && refillPerSecond < Infinity)
  ) {
    throw new RangeError(
      `rateLimit must be { capacity: a whole number from 1, refillPerSecond: above 0 }, got ${JSON.stringify(limit)}`,
    );
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // names no request: a 404
  }
}

function methodNotAllowed(): Answer {
  return { status: 405 };
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Where the next search page starts: an `offset` into the results, or (a cursor) `after` the sort key of the last
 * issue read, where an issue updated while the search is paged moves behind the cursor and is found again, and no
 * other issue is skipped. See {@link JiraBehaviour.pageTokens}.
 */
interface PagePosition {
  offset: number;
  after?: readonly (number | string)[];
}

function writePageToken(jql: string, position: PagePosition): string {
  return Buffer.from(JSON.stringify({ jql, ...position })).toString('base64url');
}

function readPageToken(token: string, jql: string): PagePosition | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      jql?: unknown;
      offset?: unknown;
      after?: unknown;
    };
    if (parsed.jql !== jql || !Number.isSafeInteger(parsed.offset)) return undefined;
    if (parsed.after !== undefined && !Array.isArray(parsed.after)) return undefined;
    return {
      offset: parsed.offset as number,
      ...(parsed.after === undefined ? {} : { after: parsed.after as (number | string)[] }),
    };
  } catch {
    return undefined;
  }
}

/** The fields a search or an issue read asked for, as far as the simulator keeps them. */
function fieldsOf(params: URLSearchParams): (typeof SEARCHABLE_FIELDS)[number][] {
  return params
    .getAll('fields')
    .flatMap((value) => value.split(','))
    .map((field) => field.trim())
    .flatMap((field) => (field === '*all' || field === '*navigable' ? [...SEARCHABLE_FIELDS] : [field]))
    .filter((field): field is (typeof SEARCHABLE_FIELDS)[number] =>
      (SEARCHABLE_FIELDS as readonly string[]).includes(field),
    );
}

function accountView(account: Account): SimulatedAccount {
  const { accountId, email, displayName, apiToken, timeZone } = account;
  return { accountId, email, displayName, apiToken, timeZone };
}

function requestView(issue: Issue, requestTypes: readonly RequestType[]): SimulatedRequest {
  return {
    id: String(issue.id),
    key: issue.key,
    summary: issue.summary,
    requestTypeId: issue.requestTypeId,
    requestType: requestTypes.find(({ id }) => id === issue.requestTypeId)?.name ?? '',
    reporterId: issue.reporterId,
    status: issue.status,
    createdAt: new Date(issue.createdAt),
    updatedAt: new Date(issue.updatedAt),
    fields: issue.fields.map((field) => ({ ...field })),
    approvals: issue.approvals.map((approval) => ({
      id: String(approval.id),
      name: approval.name,
      finalDecision: approval.finalDecision,
      completedAt: approval.completedAt === undefined ? undefined : new Date(approval.completedAt),
      approvers: approval.approvers.map((approver) => ({ ...approver })),
    })),
  };
}
