/**
 * A small client of Jira Cloud with exactly the calls the connector makes: the account's own details, the JQL
 * search, a Service Management request, its approvals, and the answer to one.
 *
 * It signs in with basic auth (an Atlassian account's email and an API token) and sends each call with Node's global
 * `fetch`. A read (`GET`) that Jira rate-limits (`429`), or answers `503` with `Retry-After`, waits as long as Jira
 * says and is sent again, a bounded number of times within a bounded wait (`rateLimitRetries`, `rateLimitWaitMs`),
 * so that a sync run goes on rather than start again; any other failed read is left to the kit, which reads again. An
 * action (`POST`) is sent once: its failure is the task's. The client throws
 * {@link JiraHttpError} with the `status` (and `retryAfterMs` from `Retry-After`) for any answer that is not a
 * success, a redirect included: it is not followed.
 *
 * @example
 * ```ts
 * const jira = new JiraClient({ baseUrl: 'https://your-domain.atlassian.net', email, apiToken });
 * for await (const issue of jira.changedIssues('project = ITSM', since, { signal })) console.log(issue.key);
 * await jira.withCredentials(approverCredentials).answerApproval('ITSM-7', '12', 'approve', { signal });
 * ```
 * @module
 */
import { z } from 'zod';
import {
  type Checked,
  JiraArgumentError,
  JiraHttpError,
  JiraResponseError,
  JiraTimeoutError,
  orThrow,
} from './errors.js';
import { changedIssuesJql, checkedJql } from './jql.js';
import {
  JiraApproval,
  JiraApprovalPage,
  JiraComment,
  JiraCustomerRequest,
  JiraErrorBody,
  JiraIssue,
  JiraMyself,
  JiraSearchPage,
} from './schemas.js';
import {
  ADMIN_WEBHOOKS_PATH,
  type AdminWebhook,
  type AdminWebhookInput,
  adminWebhookBody,
  adminWebhookOf,
  checkedAdminWebhookId,
  DYNAMIC_WEBHOOKS_PATH,
  type DynamicWebhook,
  type DynamicWebhookInput,
  type DynamicWebhookResult,
  dynamicWebhooksBody,
  JiraAdminWebhook,
  JiraAdminWebhooks,
  JiraDynamicWebhookPage,
  JiraRegisteredWebhooks,
  JiraWebhooksExpiration,
  webhookIdsBody,
} from './webhooks.js';

/** An Atlassian account's credentials for basic auth. */
export interface JiraCredentials {
  /** The account's email address. */
  email: string;
  /** An API token of the account (https://id.atlassian.com/manage-profile/security/api-tokens). */
  apiToken: string;
}

/**
 * An OAuth 2.0 (3LO) app's access token, sent as `Authorization: Bearer`. Only Connect and OAuth 2.0 apps may make the
 * dynamic webhook calls ({@link JiraClient.registerDynamicWebhooks} and the others); such an app calls through
 * Atlassian's gateway, `https://api.atlassian.com/ex/jira/<cloud id>`. The token expires (an hour for 3LO): the app
 * refreshes it and makes a new client.
 */
export interface JiraAccessToken {
  accessToken: string;
}

/** Options of {@link JiraClient}: the site, who signs in (an account's API token, or an app's access token), limits. */
export type JiraClientOptions = JiraClientSettings & (JiraCredentials | JiraAccessToken);

/** What {@link JiraClientOptions} sets besides who signs in. */
export interface JiraClientSettings {
  /** The site, such as `https://your-domain.atlassian.net`. A path after the host is kept as a prefix. */
  baseUrl: string;
  /**
   * Most time one call may take, from sending to the end of the answer; then it fails with a
   * {@link JiraTimeoutError}.
   * @default 30_000
   */
  timeoutMs?: number;
  /**
   * How many times a read (`GET`) is sent again after a `429`, or a `503` with `Retry-After`, once the wait Jira
   * asks for (`Retry-After`, or a `429`'s `X-RateLimit-Reset`) has passed. `0` throws the first such answer.
   * An answer that does not say how long to wait is thrown at once; so is an action's (`POST`).
   * @default 4
   */
  rateLimitRetries?: number;
  /**
   * The most time one read waits in all for those retries. When the wait Jira asks for would go past it, the
   * answer is thrown (a {@link JiraHttpError} with its `retryAfterMs`), and the sync run retries later.
   * @default 30_000
   */
  rateLimitWaitMs?: number;
}

/** What every call accepts. */
export interface CallOptions {
  /** Stops the call: it rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** Options of {@link JiraClient.searchIssues}. */
export interface SearchOptions extends CallOptions {
  /** The fields to return for each issue. @default ['summary', 'updated'] */
  fields?: readonly string[];
  /** Issues per page; Jira may return fewer. @default 100 */
  pageSize?: number;
}

/** An issue the incremental search found: its id, key, summary, and when it was last updated. */
export interface ChangedIssue {
  id: string;
  key: string;
  summary: string;
  updated: Date;
}

/** A decision on an approval, as Jira's Answer approval call takes it. */
export type JiraDecision = 'approve' | 'decline';

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RATE_LIMIT_RETRIES = 4;
const DEFAULT_RATE_LIMIT_WAIT_MS = 30_000;
const SEARCH_PAGE_SIZE = 100;
/** Jira's most issues per search page. */
const MAX_SEARCH_PAGE_SIZE = 5000;
const APPROVALS_PAGE_SIZE = 50;
const SEARCH_PATH = '/rest/api/3/search/jql';
const DYNAMIC_WEBHOOKS_PAGE_SIZE = 100;

/** A typed client of the Jira Cloud calls the connector needs. */
export class JiraClient {
  readonly #base: URL;
  readonly #authorization: string;
  readonly #timeoutMs: number;
  readonly #rateLimitRetries: number;
  readonly #rateLimitWaitMs: number;
  /** The time zone of the signed-in account, asked for once; `null` when Jira did not say. */
  #timeZone: Promise<string | null> | undefined;

  constructor(options: JiraClientOptions) {
    const {
      baseUrl,
      timeoutMs = DEFAULT_TIMEOUT_MS,
      rateLimitRetries = DEFAULT_RATE_LIMIT_RETRIES,
      rateLimitWaitMs = DEFAULT_RATE_LIMIT_WAIT_MS,
    } = options ?? {};
    this.#base = orThrow('baseUrl', checkBaseUrl(baseUrl));
    this.#authorization =
      options !== undefined && options !== null && 'accessToken' in options
        ? bearerAuthorization(options.accessToken)
        : basicAuthorization(options ?? {});
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
      throw new JiraArgumentError(
        `timeoutMs must be a whole number of milliseconds from 1, got ${String(timeoutMs)}`,
      );
    }
    this.#timeoutMs = timeoutMs;
    if (!Number.isSafeInteger(rateLimitRetries) || rateLimitRetries < 0) {
      throw new JiraArgumentError(
        `rateLimitRetries must be a whole number from 0, got ${String(rateLimitRetries)}`,
      );
    }
    this.#rateLimitRetries = rateLimitRetries;
    if (!Number.isSafeInteger(rateLimitWaitMs) || rateLimitWaitMs < 0) {
      throw new JiraArgumentError(
        `rateLimitWaitMs must be a whole number of milliseconds from 0, got ${String(rateLimitWaitMs)}`,
      );
    }
    this.#rateLimitWaitMs = rateLimitWaitMs;
  }

  /**
   * The same client signed in as another account: the approver, whose credentials the task carries. Jira answers
   * an approval only for one of its approvers.
   */
  withCredentials(credentials: JiraCredentials): JiraClient {
    return new JiraClient({
      baseUrl: this.#base.href,
      email: credentials?.email,
      apiToken: credentials?.apiToken,
      timeoutMs: this.#timeoutMs,
      rateLimitRetries: this.#rateLimitRetries,
      rateLimitWaitMs: this.#rateLimitWaitMs,
    });
  }

  /** `GET /rest/api/3/myself`: the signed-in account. Also the simplest check that the credentials work. */
  async myself(options: CallOptions = {}): Promise<JiraMyself> {
    return await this.#call('GET', '/rest/api/3/myself', {}, JiraMyself, options.signal);
  }

  /**
   * `GET /rest/api/3/search/jql`, every page: follows `nextPageToken` until Jira says the page is the last.
   * Jira's search is eventually consistent: an issue changed a moment ago may not be found yet.
   */
  async *searchIssues(jql: string, options: SearchOptions = {}): AsyncIterable<JiraIssue> {
    const query = checkedSearchQuery(jql);
    const { fields = ['summary', 'updated'], pageSize = SEARCH_PAGE_SIZE, signal } = options;
    checkPageSize(pageSize);
    const seen = new Set<string>();
    let nextPageToken: string | undefined;
    do {
      const params = { jql: query, fields: fields.join(','), maxResults: String(pageSize), nextPageToken };
      const page = await this.#call('GET', SEARCH_PATH, params, JiraSearchPage, signal);
      yield* page.issues;
      nextPageToken = page.isLast === true ? undefined : (page.nextPageToken ?? undefined);
      if (nextPageToken !== undefined) {
        // A token that comes back would page forever.
        if (seen.has(nextPageToken)) {
          throw new JiraResponseError({ method: 'GET', path: SEARCH_PATH }, 'a nextPageToken again');
        }
        seen.add(nextPageToken);
      }
    } while (nextPageToken !== undefined);
  }

  /**
   * The issues of `jql` updated at or after `since` (every one when `since` is undefined), in the order of their
   * `updated`: the incremental read. The date-time is written in the signed-in account's time zone, as Jira
   * reads it (see `jql.ts`).
   *
   * Safe under change while it pages: Jira does not document whether a `nextPageToken` keeps its place when the
   * issues change between pages, and a position (an offset) skips an issue whenever one before it moves to the end.
   * So after each page that brought something new, the read starts a fresh search from the last `updated` it read
   * (`updated >= "<that minute>"`): a search by value, not by position, so an issue not changed meanwhile is in
   * it. An issue changed meanwhile moves to the end and is read again there, with its new `updated`. The token is
   * followed past a page that brought nothing new, and past one whose last issue is in the minute the search starts
   * from (more issues in one minute than a page holds), where a fresh search would be this very search and read the
   * same issues again. Once the token was followed past a page that brought something new, that search is read
   * again from its start before the read goes past its minute or ends, so that an issue the token skipped is found
   * all the same: each minute is read at most twice, not once for each of its pages. A page shorter than
   * `pageSize` is not taken as the end: only Jira's `isLast` (or no token) is.
   */
  async *changedIssues(
    jql: string,
    since: Date | undefined,
    options: SearchOptions = {},
  ): AsyncIterable<ChangedIssue> {
    const base = checkedJql(jql);
    const { pageSize = SEARCH_PAGE_SIZE, signal } = options;
    checkPageSize(pageSize);
    const timeZone = since === undefined ? undefined : await this.#accountTimeZone(signal);
    // What was yielded: each issue's id with the `updated` it was read at.
    const read = new Map<string, number>();
    const tokens = new Set<string>();
    let query = changedIssuesJql(base, since, timeZone);
    let nextPageToken: string | undefined;
    // Whether a token was followed past a page that brought something new since `query` was last read from its
    // start: an issue may have been skipped, and `query` is read again from its start before the read moves on.
    let skipped = false;
    const again = (next: string) => {
      query = next;
      nextPageToken = undefined;
      tokens.clear();
      skipped = false;
    };
    for (;;) {
      const params = {
        jql: query,
        fields: 'summary,updated',
        maxResults: String(pageSize),
        nextPageToken,
      };
      const page = await this.#call('GET', SEARCH_PATH, params, JiraSearchPage, signal);
      const issues = page.issues.map((issue) => changedIssue(issue));
      let fresh = 0;
      for (const issue of issues) {
        if (read.get(issue.id) === issue.updated.getTime()) continue;
        read.set(issue.id, issue.updated.getTime());
        fresh += 1;
        yield issue;
      }
      const token = page.isLast === true ? undefined : (page.nextPageToken ?? undefined);
      const last = issues.at(-1);
      if (token === undefined) {
        if (!skipped) return;
        again(query);
        continue;
      }
      const from = fresh > 0 && last !== undefined ? changedIssuesJql(base, last.updated, timeZone) : query;
      if (from !== query) {
        // Read `query` again from its start if an issue may have been skipped; else go on from the last read.
        again(skipped ? query : from);
        continue;
      }
      // Nothing new, or a search from the last issue read would be this very search (JQL compares to the minute:
      // many issues updated in one minute): read on with the token rather than read the same issues again.
      if (fresh > 0) skipped = true;
      // A token that comes back would page forever.
      if (tokens.has(token))
        throw new JiraResponseError({ method: 'GET', path: SEARCH_PATH }, 'a nextPageToken again');
      tokens.add(token);
      nextPageToken = token;
    }
  }

  /**
   * `GET /rest/api/3/issue/{issueIdOrKey}?fields=summary,updated`: one issue, read where it is stored (no search
   * index in between). `undefined` when Jira answers `404`: the issue was deleted, or the account may not see it.
   */
  async issue(issueIdOrKey: string, options: CallOptions = {}): Promise<ChangedIssue | undefined> {
    const path = `/rest/api/3/issue/${segment('issueIdOrKey', issueIdOrKey)}`;
    try {
      const issue = await this.#call('GET', path, { fields: 'summary,updated' }, JiraIssue, options.signal);
      return changedIssue(issue, path);
    } catch (error) {
      if (error instanceof JiraHttpError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** `GET /rest/servicedeskapi/request/{issueIdOrKey}?expand=requestType`: the customer request of an issue. */
  async getRequest(issueIdOrKey: string, options: CallOptions = {}): Promise<JiraCustomerRequest> {
    const path = `/rest/servicedeskapi/request/${segment('issueIdOrKey', issueIdOrKey)}`;
    return await this.#call('GET', path, { expand: 'requestType' }, JiraCustomerRequest, options.signal);
  }

  /** `GET /rest/servicedeskapi/request/{issueIdOrKey}/approval`, every page (`start`, `limit`, `isLastPage`). */
  async *listApprovals(issueIdOrKey: string, options: CallOptions = {}): AsyncIterable<JiraApproval> {
    const path = `/rest/servicedeskapi/request/${segment('issueIdOrKey', issueIdOrKey)}/approval`;
    let start = 0;
    for (;;) {
      const params = { start: String(start), limit: String(APPROVALS_PAGE_SIZE) };
      const page = await this.#call('GET', path, params, JiraApprovalPage, options.signal);
      yield* page.values;
      if (page.isLastPage || page.values.length === 0) return;
      start += page.values.length;
    }
  }

  /** `GET /rest/servicedeskapi/request/{issueIdOrKey}/approval/{approvalId}`: one approval, for the precheck. */
  async getApproval(
    issueIdOrKey: string,
    approvalId: string,
    options: CallOptions = {},
  ): Promise<JiraApproval> {
    const path = approvalPath(issueIdOrKey, approvalId);
    return await this.#call('GET', path, {}, JiraApproval, options.signal);
  }

  /**
   * `POST /rest/servicedeskapi/request/{issueIdOrKey}/approval/{approvalId}` with `{"decision": …}`: answers the
   * approval as the signed-in account, which must be one of its approvers (see {@link withCredentials}). Jira
   * answers `409` when the approval is no longer waiting for this answer (decided, or already answered by this
   * account: Service Management's OpenAPI), `403` when the account is not its approver, `400` for a body it cannot
   * read. Returns the approval as it is after the answer.
   */
  async answerApproval(
    issueIdOrKey: string,
    approvalId: string,
    decision: JiraDecision,
    options: CallOptions = {},
  ): Promise<JiraApproval> {
    if (decision !== 'approve' && decision !== 'decline') {
      throw new JiraArgumentError(`decision must be "approve" or "decline", got ${JSON.stringify(decision)}`);
    }
    const path = approvalPath(issueIdOrKey, approvalId);
    return await this.#call('POST', path, {}, JiraApproval, options.signal, { decision });
  }

  /**
   * `POST /rest/servicedeskapi/request/{issueIdOrKey}/comment` with `{"body": …, "public": …}`: a comment on the
   * request, by the signed-in account. The answer to an approval takes no comment; this is where one goes.
   */
  async addComment(
    issueIdOrKey: string,
    body: string,
    options: CallOptions & { public?: boolean } = {},
  ): Promise<JiraComment> {
    if (typeof body !== 'string' || body.trim() === '') {
      throw new JiraArgumentError('body must be a comment with some text');
    }
    const path = `/rest/servicedeskapi/request/${segment('issueIdOrKey', issueIdOrKey)}/comment`;
    const comment = { body, public: options.public ?? true };
    return await this.#call('POST', path, {}, JiraComment, options.signal, comment);
  }

  /**
   * `POST /rest/webhooks/1.0/webhook`: registers an admin webhook, which only a Jira administrator may (others get
   * `403`). It does not expire. With a `secret`, Jira signs each delivery (`X-Hub-Signature`). See `webhooks.ts`.
   */
  async registerAdminWebhook(input: AdminWebhookInput, options: CallOptions = {}): Promise<AdminWebhook> {
    const body = adminWebhookBody(input);
    const answer = await this.#call('POST', ADMIN_WEBHOOKS_PATH, {}, JiraAdminWebhook, options.signal, body);
    return this.#adminWebhook(answer, 'POST', ADMIN_WEBHOOKS_PATH);
  }

  /** `GET /rest/webhooks/1.0/webhook`: every admin webhook of the site (an administrator's call). */
  async listAdminWebhooks(options: CallOptions = {}): Promise<AdminWebhook[]> {
    const answer = await this.#call('GET', ADMIN_WEBHOOKS_PATH, {}, JiraAdminWebhooks, options.signal);
    return answer.map((webhook) => this.#adminWebhook(webhook, 'GET', ADMIN_WEBHOOKS_PATH));
  }

  /** `GET /rest/webhooks/1.0/webhook/{id}`: one admin webhook; `undefined` when Jira answers `404` (it is gone). */
  async getAdminWebhook(webhookId: string, options: CallOptions = {}): Promise<AdminWebhook | undefined> {
    const path = `${ADMIN_WEBHOOKS_PATH}/${checkedAdminWebhookId(webhookId)}`;
    try {
      const answer = await this.#call('GET', path, {}, JiraAdminWebhook, options.signal);
      return this.#adminWebhook(answer, 'GET', path);
    } catch (error) {
      if (error instanceof JiraHttpError && error.status === 404) return undefined;
      throw error;
    }
  }

  /**
   * `PUT /rest/webhooks/1.0/webhook/{id}`: sets the admin webhook's name, URL, events, filter and secret again,
   * as {@link registerAdminWebhook} takes them. Jira keeps the secret it has when none is sent.
   */
  async updateAdminWebhook(
    webhookId: string,
    input: AdminWebhookInput,
    options: CallOptions = {},
  ): Promise<AdminWebhook> {
    const path = `${ADMIN_WEBHOOKS_PATH}/${checkedAdminWebhookId(webhookId)}`;
    const answer = await this.#call(
      'PUT',
      path,
      {},
      JiraAdminWebhook,
      options.signal,
      adminWebhookBody(input),
    );
    return this.#adminWebhook(answer, 'PUT', path);
  }

  /** `DELETE /rest/webhooks/1.0/webhook/{id}`; `false` when Jira answers `404` (it was gone already). */
  async deleteAdminWebhook(webhookId: string, options: CallOptions = {}): Promise<boolean> {
    const path = `${ADMIN_WEBHOOKS_PATH}/${checkedAdminWebhookId(webhookId)}`;
    try {
      await this.#call('DELETE', path, {}, z.unknown(), options.signal);
      return true;
    } catch (error) {
      if (error instanceof JiraHttpError && error.status === 404) return false;
      throw error;
    }
  }

  /**
   * `POST /rest/api/3/webhook`: registers dynamic webhooks, all delivering to `url` (one URL per app). Only Connect
   * and OAuth 2.0 apps may (a client with an {@link JiraAccessToken}); an account's API token gets `403`. Each
   * result says what Jira made of the webhook at the same place: its id, or the `errors` Jira answered inside its
   * `200` (a JQL filter it does not support, say). They expire 30 days on: {@link refreshDynamicWebhooks}.
   */
  async registerDynamicWebhooks(
    url: string,
    webhooks: readonly DynamicWebhookInput[],
    options: CallOptions = {},
  ): Promise<DynamicWebhookResult[]> {
    const body = dynamicWebhooksBody(url, webhooks);
    const answer = await this.#call(
      'POST',
      DYNAMIC_WEBHOOKS_PATH,
      {},
      JiraRegisteredWebhooks,
      options.signal,
      body,
    );
    return answer.webhookRegistrationResult.map(({ createdWebhookId, errors }) =>
      createdWebhookId === undefined
        ? { ok: false, errors: errors ?? ['Jira registered no webhook and said nothing of why'] }
        : { ok: true, id: createdWebhookId },
    );
  }

  /** `GET /rest/api/3/webhook`, every page: the dynamic webhooks the calling app registered. */
  async *listDynamicWebhooks(options: CallOptions = {}): AsyncIterable<DynamicWebhook> {
    let startAt = 0;
    for (;;) {
      const params = { startAt: String(startAt), maxResults: String(DYNAMIC_WEBHOOKS_PAGE_SIZE) };
      const page = await this.#call(
        'GET',
        DYNAMIC_WEBHOOKS_PATH,
        params,
        JiraDynamicWebhookPage,
        options.signal,
      );
      for (const { id, events, jqlFilter, url, expirationDate } of page.values) {
        yield { id, events, jqlFilter, url, expiresAt: expirationDate };
      }
      if (page.isLast !== false || page.values.length === 0) return;
      startAt += page.values.length;
    }
  }

  /**
   * `PUT /rest/api/3/webhook/refresh`: extends the life of these dynamic webhooks, which expire 30 days after they
   * were registered or last refreshed. Returns when they now expire. Jira ignores an id it does not know, or of
   * another app: {@link listDynamicWebhooks} tells which are still there.
   */
  async refreshDynamicWebhooks(webhookIds: readonly number[], options: CallOptions = {}): Promise<Date> {
    const body = webhookIdsBody(webhookIds);
    const path = `${DYNAMIC_WEBHOOKS_PATH}/refresh`;
    const answer = await this.#call('PUT', path, {}, JiraWebhooksExpiration, options.signal, body);
    return answer.expirationDate;
  }

  /** `DELETE /rest/api/3/webhook`: removes these dynamic webhooks of the calling app (others' ids are ignored). */
  async deleteDynamicWebhooks(webhookIds: readonly number[], options: CallOptions = {}): Promise<void> {
    const body = webhookIdsBody(webhookIds);
    await this.#call('DELETE', DYNAMIC_WEBHOOKS_PATH, {}, z.unknown(), options.signal, body);
  }

  #adminWebhook(webhook: z.infer<typeof JiraAdminWebhook>, method: string, path: string): AdminWebhook {
    const read = adminWebhookOf(webhook);
    if (read === undefined) throw new JiraResponseError({ method, path }, 'a webhook whose self names no id');
    return read;
  }

  async #accountTimeZone(signal: AbortSignal | undefined): Promise<string | undefined> {
    this.#timeZone ??= this.myself({ signal }).then(
      (account) => account.timeZone ?? null,
      (error: unknown) => {
        this.#timeZone = undefined; // ask again next time
        throw error;
      },
    );
    return (await this.#timeZone) ?? undefined;
  }

  /**
   * Sends a call; a read that Jira asks to wait for (`429`, or `503` with `Retry-After`) waits and is sent again,
   * within `rateLimitRetries` and `rateLimitWaitMs` (measured on the monotonic clock).
   */
  async #call<Schema extends z.ZodType>(
    method: HttpMethod,
    path: string,
    params: Record<string, string | readonly string[] | undefined>,
    schema: Schema,
    signal: AbortSignal | undefined,
    body?: unknown,
  ): Promise<z.output<Schema>> {
    const started = performance.now();
    for (let retries = 0; ; retries++) {
      try {
        return await this.#send(method, path, params, schema, signal, body);
      } catch (error) {
        const wait = method === 'GET' && retries < this.#rateLimitRetries ? waitAsked(error) : undefined;
        if (wait === undefined || performance.now() - started + wait > this.#rateLimitWaitMs) throw error;
        await sleep(wait, signal);
      }
    }
  }

  async #send<Schema extends z.ZodType>(
    method: HttpMethod,
    path: string,
    params: Record<string, string | readonly string[] | undefined>,
    schema: Schema,
    signal: AbortSignal | undefined,
    body?: unknown,
  ): Promise<z.output<Schema>> {
    signal?.throwIfAborted();
    const target = { method, path };
    const url = new URL(`${this.#base.pathname.replace(/\/$/, '')}${path}`, this.#base);
    for (const [name, value] of Object.entries(params)) {
      for (const one of typeof value === 'string' ? [value] : (value ?? []))
        url.searchParams.append(name, one);
    }
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    const headers: Record<string, string> = {
      authorization: this.#authorization,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';

    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const answer = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal === undefined ? deadline : AbortSignal.any([signal, deadline]),
        // A redirect is a sign-in page or a moved site: an answer to report, not a call to repeat elsewhere.
        redirect: 'manual',
      });
      status = answer.status;
      // Jira's rate limiting sends `Retry-After`; where a 429 comes without it, `X-RateLimit-Reset` (an ISO 8601
      // instant) says when the limit resets, which is when to call again.
      retryAfter =
        answer.headers.get('retry-after') ??
        (answer.status === 429 ? answer.headers.get('x-ratelimit-reset') : null) ??
        undefined;
      text = await answer.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted) throw new JiraTimeoutError(target, this.#timeoutMs, deadline.reason);
      throw connectionFailure(error);
    }

    if (status < 200 || status > 299) {
      throw new JiraHttpError(target, status, errorMessagesOf(text), parseRetryAfter(retryAfter, Date.now()));
    }
    // `202 Accepted` and `204 No Content` carry no body, which the schema of such a call expects.
    if (text === '' && (status === 202 || status === 204)) return schemaOf(schema, undefined, status, target);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new JiraResponseError(target, `${status} with a body that is not JSON`);
    }
    return schemaOf(schema, json, status, target);
  }
}

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The answer's body as `schema` reads it, or a {@link JiraResponseError} saying where it is not what it should be. */
function schemaOf<Schema extends z.ZodType>(
  schema: Schema,
  json: unknown,
  status: number,
  target: { method: string; path: string },
): z.output<Schema> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'the body' : issue.path.join('.');
    throw new JiraResponseError(
      target,
      `${status} with an unexpected body: ${where}: ${issue?.message ?? ''}`,
    );
  }
  return parsed.data;
}

/** How long Jira asked to wait before a read is sent again: a `429`'s, or a `503`'s with `Retry-After`. */
function waitAsked(error: unknown): number | undefined {
  if (!(error instanceof JiraHttpError) || (error.status !== 429 && error.status !== 503)) return undefined;
  return error.retryAfterMs;
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Reads a `Retry-After` header, in seconds or as a date (an HTTP date, or the ISO 8601 instant of
 * `X-RateLimit-Reset`), into milliseconds from `now`. `undefined` when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function checkPageSize(pageSize: number): void {
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_SEARCH_PAGE_SIZE) {
    throw new JiraArgumentError(
      `pageSize must be a whole number from 1 to ${MAX_SEARCH_PAGE_SIZE}, got ${pageSize}`,
    );
  }
}

function changedIssue(issue: JiraIssue, path = SEARCH_PATH): ChangedIssue {
  const { summary, updated } = issue.fields;
  const at = typeof updated === 'string' ? parseJiraDateTime(updated) : undefined;
  if (at === undefined) {
    throw new JiraResponseError(
      { method: 'GET', path },
      `issue ${issue.key} without a readable fields.updated`,
    );
  }
  return { id: issue.id, key: issue.key, summary: typeof summary === 'string' ? summary : '', updated: at };
}

/** Jira's date-time, `2026-05-01T10:03:07.000+0200`: ISO 8601 with the offset written without a colon. */
function parseJiraDateTime(value: string): Date | undefined {
  const iso = value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function errorMessagesOf(text: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return []; // Jira answers some failures (a refused sign-in) with an HTML page: the status says enough.
  }
  const body = JiraErrorBody.safeParse(json);
  if (!body.success) return [];
  const { errorMessages = [], errors = {}, errorMessage } = body.data;
  return [...errorMessages, ...Object.values(errors), errorMessage].filter(
    (message): message is string => typeof message === 'string' && message !== '',
  );
}

function approvalPath(issueIdOrKey: string, approvalId: string): string {
  if (typeof approvalId !== 'string' || !/^\d+$/.test(approvalId)) {
    throw new JiraArgumentError(
      `approvalId must be a numeric approval id, got ${JSON.stringify(approvalId)}`,
    );
  }
  return `/rest/servicedeskapi/request/${segment('issueIdOrKey', issueIdOrKey)}/approval/${approvalId}`;
}

function segment(name: string, value: unknown): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+$/.test(value)) {
    throw new JiraArgumentError(
      `${name} must be an issue id or key, such as ITSM-7, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkedSearchQuery(jql: unknown): string {
  if (typeof jql !== 'string' || jql.trim() === '') {
    throw new JiraArgumentError('jql must be a non-empty JQL query');
  }
  return jql;
}

/** Checks a site's base URL: http(s), without credentials; its query and fragment are dropped. */
export function checkBaseUrl(baseUrl: unknown): Checked<URL> {
  let url: URL | undefined;
  try {
    url = typeof baseUrl === 'string' ? new URL(baseUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username ||
    url.password
  ) {
    return {
      ok: false,
      problem: `must be an http(s) URL without credentials, such as https://your-domain.atlassian.net, got ${
        typeof baseUrl === 'string'
          ? JSON.stringify(baseUrl.replace(/\/\/[^@/]*@/, '//[redacted]@'))
          : typeof baseUrl
      }`,
    };
  }
  url.search = '';
  url.hash = '';
  return { ok: true, value: url };
}

/** Checks an Atlassian account's email as basic auth takes it. */
export function checkEmail(email: unknown): Checked<string> {
  if (typeof email !== 'string' || email.trim() === '' || email.includes(':')) {
    return {
      ok: false,
      problem: 'must be the Atlassian account email address, a non-empty string without ":"',
    };
  }
  return { ok: true, value: email };
}

/** Checks an API token; the problem never repeats its value. */
export function checkApiToken(apiToken: unknown): Checked<string> {
  if (typeof apiToken !== 'string' || apiToken === '') {
    return {
      ok: false,
      problem: `must be a non-empty string, got ${apiToken === '' ? 'an empty string' : typeof apiToken}`,
    };
  }
  return { ok: true, value: apiToken };
}

function bearerAuthorization(accessToken: unknown): string {
  if (typeof accessToken !== 'string' || !/^[\x21-\x7e]+$/.test(accessToken)) {
    throw new JiraArgumentError(
      `accessToken must be a non-empty token of printable characters without spaces, got ${
        typeof accessToken === 'string' ? 'another string' : typeof accessToken
      }`,
    );
  }
  return `Bearer ${accessToken}`;
}

function basicAuthorization({ email, apiToken }: Partial<JiraCredentials>): string {
  const user = orThrow('email', checkEmail(email));
  const token = orThrow('apiToken', checkApiToken(apiToken));
  return `Basic ${Buffer.from(`${user}:${token}`, 'utf8').toString('base64')}`;
}

/**
 * `fetch` rejects every failed connection with the same `TypeError: fetch failed`; what failed (with the `code`,
 * such as `ECONNREFUSED`, that the kit's failure mapping reads) is its `cause`.
 */
function connectionFailure(error: unknown): unknown {
  return error instanceof TypeError && error.cause instanceof Error ? error.cause : error;
}
