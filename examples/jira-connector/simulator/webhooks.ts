/**
 * The simulated site's webhooks: the two APIs that manage them, and their deliveries.
 *
 * - **Admin webhooks** (`/rest/webhooks/1.0/webhook`), which only a Jira administrator may manage. They do not
 *   expire. One created with a `secret` signs each delivery: `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the body>`.
 *   Their filter is JQL (the simulator's part of it).
 * - **Dynamic webhooks** (`/rest/api/3/webhook`), which only apps may manage: the site's OAuth 2.0 app, by its
 *   access token; an account signing in with an API token gets `403`. They expire `dynamicWebhookLifetimeMs` after
 *   they were registered or last refreshed (30 days, as Jira's do); an expired one is no longer delivered, and the
 *   site forgets it. Their filter is the subset of JQL the platform API documents; a filter outside it is an
 *   `errors` entry of the `200`'s result, not a failure of the call.
 *
 * Each change of an issue (created, updated, deleted) is delivered to each webhook whose events and filter match it,
 * the filter applied to the issue as it is after the change. A delivery is a `POST` of the event's JSON with Jira's
 * headers: `X-Atlassian-Webhook-Identifier` (the same for every attempt of one delivery), `X-Atlassian-Webhook-Flow`,
 * `X-Atlassian-Webhook-Retry` on a retry, and `X-Hub-Signature` where signed. An answer of `408`, `409`, `425`,
 * `429` or `5xx`, no answer, or no connection is tried again (Atlassian's retry policy), up to `webhookRetries`
 * times, `webhookRetryDelayMs` apart. The switches of {@link WebhookBehaviour} make deliveries duplicated,
 * reordered and dropped.
 * @module
 */
import { createHmac } from 'node:crypto';
import { platformError, userDetailsBody, webhookIssueBody } from './answers.js';
import { dynamicFilterProblem, JqlError, type ParsedQuery, parseJql } from './jql.js';
import { Random } from './random.js';
import type { Account, IssueChange, SiteState } from './state.js';

/** How the site's webhooks behave; part of the simulator's `JiraBehaviour`. */
export interface WebhookBehaviour {
  /**
   * Each delivery is sent this many more times, with the same `X-Atlassian-Webhook-Identifier` and a
   * `X-Atlassian-Webhook-Retry` counting them, as Jira does when it did not see a delivery acknowledged.
   * @default 0
   */
  webhookDuplicates: number;
  /**
   * The order deliveries waiting to be sent go in: `raised`, the order of the changes; `reversed`, the latest first;
   * `shuffled`, at random (from the seed). Jira does not promise an order.
   * @default 'raised'
   */
  webhookOrder: 'raised' | 'reversed' | 'shuffled';
  /** The share of changes whose deliveries are dropped, never sent (from the seed): 0 to 1. @default 0 */
  webhookDropRate: number;
  /** How many times a failed delivery is tried again. @default 5 */
  webhookRetries: number;
  /** How long after a failed attempt the next one is made (Jira's are minutes apart). @default 1000 */
  webhookRetryDelayMs: number;
  /** How long an attempt waits for its answer. @default 10_000 */
  webhookTimeoutMs: number;
  /** How long a dynamic webhook lives after its registration or last refresh. @default 30 days */
  dynamicWebhookLifetimeMs: number;
}

export const DEFAULT_WEBHOOK_BEHAVIOUR: WebhookBehaviour = {
  webhookDuplicates: 0,
  webhookOrder: 'raised',
  webhookDropRate: 0,
  webhookRetries: 5,
  webhookRetryDelayMs: 1000,
  webhookTimeoutMs: 10_000,
  dynamicWebhookLifetimeMs: 30 * 24 * 3_600_000,
};

/** The site's OAuth 2.0 app: the one caller that may manage dynamic webhooks. */
export interface SimulatedApp {
  clientId: string;
  /** Sent as `Authorization: Bearer <accessToken>`. */
  accessToken: string;
}

/** One attempt of a delivery, as the site made it. */
export interface SimulatedDelivery {
  /** `X-Atlassian-Webhook-Identifier`: the same for every attempt of one delivery. */
  identifier: string;
  webhook: { kind: 'admin' | 'dynamic'; id: number };
  webhookEvent: string;
  issueKey: string;
  url: string;
  /** 0 for the first attempt; then `X-Atlassian-Webhook-Retry`. */
  retry: number;
  /** `delivered` (a 2xx), `failed` (any other answer, or none), or `dropped` (never sent). */
  outcome: 'delivered' | 'failed' | 'dropped';
  /** The answer's status, when there was one. */
  status?: number;
  /** Exactly what was sent. */
  headers: Record<string, string>;
  body: string;
}

/** An answer of the webhook APIs: the simulator writes it. */
export interface WebhookAnswer {
  status: number;
  body?: unknown;
}

/** Who calls the webhook APIs. */
export type WebhookCaller = { kind: 'account'; account: Account } | { kind: 'app' } | { kind: 'anonymous' };

interface AdminHook {
  kind: 'admin';
  id: number;
  name: string;
  url: string;
  events: string[];
  jql: string | undefined;
  query: ParsedQuery | undefined;
  secret: string | undefined;
  excludeBody: boolean;
  updatedBy: Account;
  updatedAt: number;
}

interface DynamicHook {
  kind: 'dynamic';
  id: number;
  url: string;
  events: string[];
  jqlFilter: string;
  query: ParsedQuery;
  fieldIdsFilter: string[] | undefined;
  expiresAt: number;
}

type Hook = AdminHook | DynamicHook;

/** A delivery waiting to be sent: one attempt of it. */
interface Pending {
  hook: Hook;
  identifier: string;
  webhookEvent: string;
  issueKey: string;
  body: string;
  retry: number;
}

const RETRIED = new Set([408, 409, 425, 429]);
const DYNAMIC_EVENTS = new Set([
  'jira:issue_created',
  'jira:issue_updated',
  'jira:issue_deleted',
  'comment_created',
  'comment_updated',
  'comment_deleted',
  'issue_property_set',
  'issue_property_deleted',
]);

/** The webhooks of a simulated site, and their deliveries. */
export class SimulatedWebhooks {
  readonly app: SimulatedApp;
  readonly #base: string;
  readonly #state: SiteState;
  readonly #now: () => number;
  readonly #behaviour: WebhookBehaviour;
  readonly #random: Random;
  readonly #hooks = new Map<number, Hook>();
  readonly #queue: Pending[] = [];
  readonly #log: SimulatedDelivery[] = [];
  readonly #idle = new Set<() => void>();
  readonly #retryTimers = new Set<NodeJS.Timeout>();
  #nextId = 1;
  #nextIdentifier: number;
  #nextChangelogId = 10_000;
  #sending = false;
  #closed = false;

  constructor(options: {
    base: string;
    state: SiteState;
    now: () => number;
    behaviour: WebhookBehaviour;
    seed: number;
  }) {
    this.#base = options.base;
    this.#state = options.state;
    this.#now = options.now;
    this.#behaviour = options.behaviour;
    this.#random = new Random(options.seed ^ 0x0ebb00c5);
    this.app = {
      clientId: this.#random.string(32, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'),
      accessToken: `eyJ${this.#random.string(48, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789')}`,
    };
    this.#nextIdentifier = this.#random.int(100_000, 999_999);
    this.#state.onIssueChange = (change) => this.#raise(change);
  }

  /** Every attempt made (and every delivery dropped), oldest first. */
  deliveries(): SimulatedDelivery[] {
    return this.#log.map((delivery) => ({ ...delivery, headers: { ...delivery.headers } }));
  }

  /** Resolves once no delivery waits to be sent, is being sent, or waits for its retry. */
  settled(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  /** Stops delivering: what waits is never sent. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#retryTimers) clearTimeout(timer);
    this.#retryTimers.clear();
    this.#queue.length = 0;
    this.#settle();
  }

  /** `/rest/webhooks/1.0/webhook[/{id}]`: the admin webhooks, a Jira administrator's. */
  admin(method: string, id: string | undefined, caller: WebhookCaller, body: unknown): WebhookAnswer {
    if (caller.kind !== 'account') {
      return { status: 401, body: platformError('You are not authenticated.') };
    }
    if (!caller.account.admin) {
      return {
        status: 403,
        body: platformError('You must be a Jira administrator to manage webhooks.'),
      };
    }
    const hook = id === undefined ? undefined : this.#hooks.get(Number(id));
    const known = hook?.kind === 'admin' ? hook : undefined;
    if (id !== undefined && known === undefined) {
      return { status: 404, body: platformError(`Webhook with id ${id} does not exist.`) };
    }
    if (id === undefined && method === 'GET') {
      const admins = [...this.#hooks.values()].filter((each): each is AdminHook => each.kind === 'admin');
      return { status: 200, body: admins.map((each) => this.#adminBody(each)) };
    }
    if (id === undefined && method === 'POST') return this.#saveAdmin(undefined, caller.account, body);
    if (known !== undefined && method === 'GET') return { status: 200, body: this.#adminBody(known) };
    if (known !== undefined && method === 'PUT') return this.#saveAdmin(known, caller.account, body);
    if (known !== undefined && method === 'DELETE') {
      this.#hooks.delete(known.id);
      return { status: 204 };
    }
    return { status: 405 };
  }

  /** `/rest/api/3/webhook[/refresh]`: the dynamic webhooks, the app's. */
  dynamic(method: string, refresh: boolean, caller: WebhookCaller, query: URLSearchParams, body: unknown) {
    if (caller.kind !== 'app') {
      return {
        status: 403,
        body: platformError('Only Connect and OAuth 2.0 apps can use this operation.'),
      };
    }
    this.#forgetExpired();
    if (refresh) return method === 'PUT' ? this.#refresh(body) : { status: 405 };
    if (method === 'GET') return this.#listDynamic(query);
    if (method === 'POST') return this.#registerDynamic(body);
    if (method === 'DELETE') {
      const ids = webhookIdsOf(body);
      if (ids === undefined) return { status: 400, body: platformError('webhookIds is required.') };
      for (const id of ids) if (this.#hooks.get(id)?.kind === 'dynamic') this.#hooks.delete(id);
      return { status: 202 };
    }
    return { status: 405 };
  }

  #saveAdmin(hook: AdminHook | undefined, account: Account, body: unknown): WebhookAnswer {
    const input = (body ?? {}) as Record<string, unknown>;
    const { name, url, events, filters, excludeBody = false, secret } = input;
    const jql = (filters as Record<string, unknown> | undefined)?.['issue-related-events-section'];
    const problem =
      (typeof name !== 'string' || name.trim() === '' ? 'The webhook name is required.' : undefined) ??
      (typeof url !== 'string' || !/^https?:\/\/\S+$/.test(url)
        ? 'The webhook URL is not valid.'
        : undefined) ??
      (!Array.isArray(events) || !events.every((event) => typeof event === 'string')
        ? 'The events must be a list of event names.'
        : undefined) ??
      (jql !== undefined && jql !== null && typeof jql !== 'string'
        ? 'The JQL filter must be text.'
        : undefined) ??
      (typeof excludeBody !== 'boolean' ? 'excludeBody must be true or false.' : undefined) ??
      (secret !== undefined && typeof secret !== 'string' ? 'The secret must be text.' : undefined);
    if (problem !== undefined) return { status: 400, body: platformError(problem) };
    let query: ParsedQuery | undefined;
    const filter = typeof jql === 'string' && jql.trim() !== '' ? jql : undefined;
    try {
      query = filter === undefined ? undefined : this.#parse(filter, account.timeZone);
    } catch (error) {
      if (error instanceof JqlError) return { status: 400, body: platformError(error.message) };
      throw error;
    }
    const saved: AdminHook = {
      kind: 'admin',
      id: hook?.id ?? this.#nextId++,
      name: name as string,
      url: url as string,
      events: [...new Set(events as string[])],
      jql: filter,
      query,
      // Jira keeps the secret it has when an update sends none.
      secret: (secret as string | undefined) ?? hook?.secret,
      excludeBody: excludeBody as boolean,
      updatedBy: account,
      updatedAt: this.#now(),
    };
    this.#hooks.set(saved.id, saved);
    return { status: hook === undefined ? 201 : 200, body: this.#adminBody(saved) };
  }

  #adminBody(hook: AdminHook) {
    return {
      self: `${this.#base}/rest/webhooks/1.0/webhook/${hook.id}`,
      name: hook.name,
      url: hook.url,
      events: hook.events,
      filters: { 'issue-related-events-section': hook.jql ?? '' },
      excludeBody: hook.excludeBody,
      enabled: true,
      lastUpdatedUser: hook.updatedBy.accountId,
      lastUpdatedDisplayName: hook.updatedBy.displayName,
      lastUpdated: hook.updatedAt,
    };
  }

  #registerDynamic(body: unknown): WebhookAnswer {
    const { url, webhooks } = (body ?? {}) as { url?: unknown; webhooks?: unknown };
    if (typeof url !== 'string' || !/^https?:\/\/\S+$/.test(url) || !Array.isArray(webhooks)) {
      return { status: 400, body: platformError('The request needs a url and a list of webhooks.') };
    }
    const others = [...this.#hooks.values()].filter((hook) => hook.kind === 'dynamic' && hook.url !== url);
    if (others.length > 0) {
      return { status: 400, body: platformError('Only a single URL per app is allowed to be registered.') };
    }
    const webhookRegistrationResult = webhooks.map((webhook: unknown) => this.#registerOne(url, webhook));
    return { status: 200, body: { webhookRegistrationResult } };
  }

  #registerOne(url: string, webhook: unknown): { createdWebhookId: number } | { errors: string[] } {
    const { events, jqlFilter, fieldIdsFilter } = (webhook ?? {}) as Record<string, unknown>;
    if (
      !Array.isArray(events) ||
      events.length === 0 ||
      !events.every((event) => DYNAMIC_EVENTS.has(event))
    ) {
      return { errors: ['The events must be one or more of the webhook events.'] };
    }
    if (typeof jqlFilter !== 'string' || jqlFilter.trim() === '')
      return { errors: ['The JQL filter is required.'] };
    const unsupported = dynamicFilterProblem(jqlFilter);
    if (unsupported !== undefined) return { errors: [unsupported] };
    let query: ParsedQuery;
    try {
      query = this.#parse(jqlFilter, 'UTC');
    } catch (error) {
      if (error instanceof JqlError) return { errors: [error.message] };
      throw error;
    }
    const id = this.#nextId++;
    this.#hooks.set(id, {
      kind: 'dynamic',
      id,
      url,
      events: [...new Set(events as string[])],
      jqlFilter,
      query,
      fieldIdsFilter: Array.isArray(fieldIdsFilter) ? fieldIdsFilter.map(String) : undefined,
      expiresAt: this.#now() + this.#behaviour.dynamicWebhookLifetimeMs,
    });
    return { createdWebhookId: id };
  }

  #listDynamic(query: URLSearchParams): WebhookAnswer {
    const startAt = Number(query.get('startAt') ?? 0);
    const maxResults = Number(query.get('maxResults') ?? 100);
    if (!Number.isInteger(startAt) || startAt < 0 || !Number.isInteger(maxResults) || maxResults < 1) {
      return { status: 400, body: platformError('startAt and maxResults must be whole numbers.') };
    }
    const all = [...this.#hooks.values()].filter((hook): hook is DynamicHook => hook.kind === 'dynamic');
    const values = all.slice(startAt, startAt + maxResults).map((hook) => ({
      id: hook.id,
      events: hook.events,
      jqlFilter: hook.jqlFilter,
      ...(hook.fieldIdsFilter === undefined ? {} : { fieldIdsFilter: hook.fieldIdsFilter }),
      expirationDate: hook.expiresAt,
      url: hook.url,
    }));
    const isLast = startAt + values.length >= all.length;
    return { status: 200, body: { isLast, maxResults, startAt, total: all.length, values } };
  }

  #refresh(body: unknown): WebhookAnswer {
    const ids = webhookIdsOf(body);
    if (ids === undefined) return { status: 400, body: platformError('webhookIds is required.') };
    const expirationDate = this.#now() + this.#behaviour.dynamicWebhookLifetimeMs;
    // Jira ignores an id it does not know (or of another app).
    for (const id of ids) {
      const hook = this.#hooks.get(id);
      if (hook?.kind === 'dynamic') hook.expiresAt = expirationDate;
    }
    return { status: 200, body: { expirationDate } };
  }

  /** An expired dynamic webhook is no longer delivered, and the site no longer knows it. */
  #forgetExpired(): void {
    // The clock is read only when there is something to expire: a test's clock may count its reads.
    if (![...this.#hooks.values()].some(({ kind }) => kind === 'dynamic')) return;
    const now = this.#now();
    for (const hook of this.#hooks.values()) {
      if (hook.kind === 'dynamic' && hook.expiresAt <= now) this.#hooks.delete(hook.id);
    }
  }

  #parse(jql: string, timeZone: string): ParsedQuery {
    return parseJql(jql, timeZone, new Set([this.#state.projectKey]));
  }

  /** A change of an issue: a delivery to each webhook it matches, or none where it is dropped. */
  #raise(change: IssueChange): void {
    if (this.#closed) return;
    this.#forgetExpired();
    const matching = [...this.#hooks.values()].filter((hook) => matches(hook, change));
    if (matching.length === 0) return;
    const dropped =
      this.#behaviour.webhookDropRate > 0 && this.#random.next() < this.#behaviour.webhookDropRate;
    const changelogId = String(this.#nextChangelogId++);
    const at = change.at ?? this.#now();
    for (const hook of matching) {
      const identifier = String(this.#nextIdentifier++);
      const body =
        hook.kind === 'admin' && hook.excludeBody
          ? ''
          : JSON.stringify(this.#payload(hook, { ...change, at }, changelogId));
      const delivery = {
        hook,
        identifier,
        webhookEvent: change.webhookEvent,
        issueKey: change.issue.key,
        body,
      };
      if (dropped) {
        this.#record({ ...delivery, retry: 0 }, 'dropped', undefined, {});
        continue;
      }
      for (let copy = 0; copy <= this.#behaviour.webhookDuplicates; copy++) {
        this.#queue.push({ ...delivery, retry: copy });
      }
    }
    this.#drainSoon();
  }

  #payload(hook: Hook, change: IssueChange & { at: number }, changelogId: string): Record<string, unknown> {
    const actor = this.#state.account(change.actorId);
    return {
      timestamp: change.at,
      webhookEvent: change.webhookEvent,
      issue_event_type_name: change.typeName,
      ...(actor === undefined ? {} : { user: userDetailsBody(this.#base, actor) }),
      issue: webhookIssueBody(this.#base, this.#state, change.issue),
      ...(change.webhookEvent === 'jira:issue_updated'
        ? { changelog: { id: changelogId, items: change.items } }
        : {}),
      ...(change.comment === undefined ? {} : { comment: this.#commentBody(change.comment) }),
      ...(hook.kind === 'dynamic' ? { matchedWebhookIds: [hook.id] } : {}),
    };
  }

  #commentBody(comment: NonNullable<IssueChange['comment']>) {
    const author = this.#state.account(comment.authorId);
    return {
      id: comment.id,
      body: comment.body,
      jsdPublic: comment.public,
      ...(author === undefined ? {} : { author: userDetailsBody(this.#base, author) }),
    };
  }

  #drainSoon(): void {
    if (this.#sending || this.#queue.length === 0) return;
    this.#sending = true;
    // After the change that raised them, and the changes made with it, as Jira sends them after the fact.
    setImmediate(() => {
      void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && !this.#closed) {
      await this.#send(this.#next());
    }
    this.#sending = false;
    this.#settle();
  }

  #next(): Pending {
    const order = this.#behaviour.webhookOrder;
    const at =
      order === 'reversed'
        ? this.#queue.length - 1
        : order === 'shuffled'
          ? this.#random.int(0, this.#queue.length - 1)
          : 0;
    return this.#queue.splice(at, 1)[0]!;
  }

  async #send(pending: Pending): Promise<void> {
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'x-atlassian-webhook-identifier': pending.identifier,
      'x-atlassian-webhook-flow': 'Primary',
      ...(pending.retry > 0 ? { 'x-atlassian-webhook-retry': String(pending.retry) } : {}),
    };
    if (pending.hook.kind === 'admin' && pending.hook.secret !== undefined) {
      const digest = createHmac('sha256', pending.hook.secret).update(pending.body, 'utf8').digest('hex');
      headers['x-hub-signature'] = `sha256=${digest}`;
    }
    let status: number | undefined;
    try {
      const answer = await fetch(pending.hook.url, {
        method: 'POST',
        headers,
        body: pending.body,
        signal: AbortSignal.timeout(this.#behaviour.webhookTimeoutMs),
        redirect: 'manual',
      });
      status = answer.status;
      await answer.body?.cancel();
    } catch {
      status = undefined;
    }
    const delivered = status !== undefined && status >= 200 && status <= 299;
    this.#record(pending, delivered ? 'delivered' : 'failed', status, headers);
    const again = status === undefined || RETRIED.has(status) || status >= 500;
    if (!delivered && again && pending.retry < this.#behaviour.webhookRetries && !this.#closed) {
      const timer = setTimeout(() => {
        this.#retryTimers.delete(timer);
        this.#queue.push({ ...pending, retry: pending.retry + 1 });
        this.#drainSoon();
      }, this.#behaviour.webhookRetryDelayMs);
      this.#retryTimers.add(timer);
    }
  }

  #record(
    pending: Pending,
    outcome: SimulatedDelivery['outcome'],
    status: number | undefined,
    headers: Record<string, string>,
  ): void {
    this.#log.push({
      identifier: pending.identifier,
      webhook: { kind: pending.hook.kind, id: pending.hook.id },
      webhookEvent: pending.webhookEvent,
      issueKey: pending.issueKey,
      url: pending.hook.url,
      retry: pending.retry,
      outcome,
      ...(status === undefined ? {} : { status }),
      headers,
      body: pending.body,
    });
  }

  #isIdle(): boolean {
    return this.#queue.length === 0 && !this.#sending && this.#retryTimers.size === 0;
  }

  #settle(): void {
    if (!this.#isIdle()) return;
    for (const resolve of this.#idle) resolve();
    this.#idle.clear();
  }
}

/** Whether a change is delivered to a webhook: its event, its filter on the issue after the change, its fields. */
function matches(hook: Hook, change: IssueChange): boolean {
  if (!hook.events.includes(change.webhookEvent)) return false;
  if (hook.query !== undefined && !hook.query.matches(change.issue)) return false;
  if (
    hook.kind === 'dynamic' &&
    hook.fieldIdsFilter !== undefined &&
    change.webhookEvent === 'jira:issue_updated'
  ) {
    return change.items.some(({ fieldId }) => hook.fieldIdsFilter!.includes(fieldId));
  }
  return true;
}

function webhookIdsOf(body: unknown): number[] | undefined {
  const ids = (body as { webhookIds?: unknown } | null)?.webhookIds;
  if (!Array.isArray(ids) || !ids.every((id) => Number.isSafeInteger(id))) return undefined;
  return ids as number[];
}
