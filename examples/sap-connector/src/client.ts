/**
 * A small client of SAP's task-processing service (`/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/`, the service
 * behind My Inbox), with exactly the calls the connector needs: the open tasks with their decision options, the
 * decision options of one task, and the `Decision` function import.
 *
 * Credentials are passed to each call and kept by none: the sync reads with the connector's technical user, each
 * decision is taken with the approver's own credentials, and the CSRF token and session cookies a decision fetches
 * are used for that decision's POST only. Calls go through Node's global `fetch`; a redirect (to a logon page) is
 * not followed but answered as the {@link SapHttpError} it is.
 *
 * @example
 * ```ts
 * const sap = new SapInboxClient({ serviceUrl: 'https://sap.example.com/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/' });
 * for await (const open of sap.openTasks({ credentials: technicalUser, signal })) console.log(open.task.TaskTitle);
 * await sap.decide(ref, { decisionKey: '0001', comments: '' }, { credentials: approver, signal });
 * ```
 * @module
 */
import type { z } from 'zod';
import { SapHttpError, SapInboxUnsettledError, SapResponseError } from './errors.js';
import {
  DecisionOption,
  InboxTask,
  OPEN_STATUSES,
  type OpenTask,
  type SapCredentials,
  Task,
  type TaskRef,
} from './model.js';
import { parseRetryAfter, quote, readODataError } from './odata.js';

/** How the client reaches SAP. */
export interface SapInboxClientOptions {
  /**
   * The task-processing service's root, for example
   * `https://sap.example.com/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/` (a missing final `/` is added).
   */
  serviceUrl: string | URL;
  /**
   * The SAP client (`sap-client`) to log on to.
   * @default none: the system's default client
   */
  sapClient?: string;
  /**
   * Tasks per page of the task collection (`$top`).
   * @default 100
   */
  pageSize?: number;
  /**
   * How long one request may take, answer included, before it is aborted with a `TimeoutError`.
   * @default 30_000
   */
  timeoutMs?: number;
}

/** What every call takes: whose credentials to use, and a signal that aborts it. */
export interface SapCallOptions {
  credentials: SapCredentials;
  signal: AbortSignal;
}

/** What {@link SapInboxClient.openTasks} reads. */
export interface OpenTasksOptions extends SapCallOptions {
  /**
   * Only tasks of these task definitions (`TaskDefinitionID`, for example `TS00008267`).
   * @default every task definition
   */
  taskDefinitionIds?: readonly string[];
}

/** A decision to take: one of the task's `DecisionKey`s, and the comment to go with it (`''` for none). */
export interface Decision {
  decisionKey: string;
  comments: string;
}

// A paged read that finds the inbox changed under it starts again; after this many reads in a row it gives up.
const MAX_READS = 4;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** A typed client of SAP's task-processing OData V2 service; see the module's documentation. */
export class SapInboxClient {
  readonly #service: URL;
  readonly #sapClient: string | undefined;
  readonly #pageSize: number;
  readonly #timeoutMs: number;

  constructor(options: SapInboxClientOptions) {
    this.#service = serviceRoot(options.serviceUrl);
    this.#sapClient = options.sapClient === undefined ? undefined : sapClient(options.sapClient);
    this.#pageSize = integerOption('pageSize', options.pageSize, 100, 1, 1000);
    this.#timeoutMs = integerOption('timeoutMs', options.timeoutMs, 30_000, 1, 600_000);
  }

  /**
   * Every open task (READY, RESERVED or IN_PROGRESS) of the signed-in user's inbox, oldest first, each with its
   * decision options. Reads the task collection page by page (`$top`/`$skip`) with its potential owners and custom
   * attributes expanded, and the decision options of each task: a task definition does not fix them, since SAP's
   * generic decision task (`TS00008267`) serves the decision steps of many workflows, each with its own.
   *
   * A page whose answer carries `d.__next` (server-side paging) is read to its end by following that link. A page
   * shorter than `$top` is not taken as the end (a service may drop tasks after its database read): only a page
   * with nothing new is.
   *
   * Each page after the first starts one task early, at the last task of the page before: when that task is not
   * where it was, the inbox changed under the read (or its order is not stable) and a task could have been skipped,
   * so the read starts again from the first page (yielding no task twice). A task that is open throughout the read
   * is always yielded.
   */
  async *openTasks(options: OpenTasksOptions): AsyncGenerator<OpenTask> {
    const { credentials, signal } = options;
    checkCredentials(credentials);
    const filter = openTasksFilter(options.taskDefinitionIds);
    const yielded = new Set<string>();
    let reads = 1;
    let offset = 0;
    let anchor: string | undefined;
    for (;;) {
      const overlap = anchor === undefined ? 0 : 1;
      let page = await this.#readPages(
        'TaskCollection',
        {
          $filter: filter,
          $expand: 'PotentialOwners,CustomAttributeData',
          $orderby: 'CreatedOn asc,InstanceID asc',
          $skip: String(offset - overlap),
          $top: String(this.#pageSize + overlap),
        },
        InboxTask,
        options,
      );
      if (anchor !== undefined) {
        if (page[0] === undefined || keyOf(page[0]) !== anchor) {
          reads += 1;
          if (reads > MAX_READS) throw new SapInboxUnsettledError(MAX_READS);
          offset = 0;
          anchor = undefined;
          continue;
        }
        page = page.slice(1);
      }
      const last = page.at(-1);
      if (last === undefined) return;
      for (const task of page) {
        const key = keyOf(task);
        if (yielded.has(key)) continue;
        yielded.add(key);
        const decisionOptions = await this.decisionOptions(
          { origin: task.SAP__Origin, instanceId: task.InstanceID },
          { credentials, signal },
        );
        yield { task, decisionOptions };
      }
      offset += page.length;
      anchor = keyOf(last);
    }
  }

  /**
   * One task as the user whose credentials are given sees it, completed or not
   * (`GET TaskCollection(SAP__Origin='…',InstanceID='…')`): its status tells whether it still waits for a decision.
   */
  async task(ref: TaskRef, options: SapCallOptions): Promise<Task> {
    checkRef(ref);
    checkCredentials(options.credentials);
    const key = `SAP__Origin=${encodeURIComponent(quote(ref.origin))},InstanceID=${encodeURIComponent(quote(ref.instanceId))}`;
    const answer = await this.#send('GET', `TaskCollection(${key})`, {}, options);
    const what = 'GET TaskCollection (one task)';
    if (answer.status < 200 || answer.status > 299) throw httpError(what, answer);
    return parseEntity(what, answer, Task);
  }

  /** The decisions one task offers (the `DecisionOptions` function import). */
  async decisionOptions(ref: TaskRef, options: SapCallOptions): Promise<DecisionOption[]> {
    checkRef(ref);
    checkCredentials(options.credentials);
    return this.#readCollection(
      'DecisionOptions',
      { SAP__Origin: quote(ref.origin), InstanceID: quote(ref.instanceId) },
      DecisionOption,
      options,
    );
  }

  /**
   * Takes a decision on a task (the `Decision` function import), as the user whose credentials are given, and
   * returns the task as SAP answers it (its new status).
   *
   * Fetches a CSRF token first (`x-csrf-token: Fetch` on a read of the service root) and sends it back with that
   * read's session cookies. When SAP answers the POST `403` with `x-csrf-token: Required` (the session expired in
   * between), it fetches a new token and tries once more. Neither token nor cookies outlive the call.
   */
  async decide(ref: TaskRef, decision: Decision, options: SapCallOptions): Promise<Task> {
    checkRef(ref);
    checkCredentials(options.credentials);
    if (typeof decision.decisionKey !== 'string' || decision.decisionKey === '') {
      throw new TypeError(
        `Expected \`decisionKey\` to be a non-empty string, got ${describe(decision.decisionKey)}`,
      );
    }
    if (typeof decision.comments !== 'string') {
      throw new TypeError(
        `Expected \`comments\` to be a string ('' for none), got ${describe(decision.comments)}`,
      );
    }
    const query = {
      SAP__Origin: quote(ref.origin),
      InstanceID: quote(ref.instanceId),
      DecisionKey: quote(decision.decisionKey),
      // SAP requires the parameter even without a comment: an empty string then.
      Comments: quote(decision.comments),
    };
    for (let attempt = 1; ; attempt += 1) {
      const session = await this.#fetchCsrfSession(options);
      const answer = await this.#send('POST', 'Decision', query, options, {
        'x-csrf-token': session.token,
        ...(session.cookie === '' ? {} : { cookie: session.cookie }),
      });
      if (answer.status === 403 && answer.headers.get('x-csrf-token')?.toLowerCase() === 'required') {
        if (attempt === 1) continue;
      }
      if (answer.status < 200 || answer.status > 299) throw httpError('POST Decision', answer);
      return parseEntity('POST Decision', answer, Task);
    }
  }

  async #fetchCsrfSession(options: SapCallOptions): Promise<{ token: string; cookie: string }> {
    const answer = await this.#send('GET', '', {}, options, { 'x-csrf-token': 'Fetch' });
    if (answer.status < 200 || answer.status > 299) throw httpError('GET (CSRF token fetch)', answer);
    const token = answer.headers.get('x-csrf-token');
    if (token === null || token === '' || token.toLowerCase() === 'required') {
      throw new SapResponseError('GET (CSRF token fetch)', 'it carried no x-csrf-token header');
    }
    const cookie = answer.headers
      .getSetCookie()
      .map((line) => line.split(';', 1)[0]?.trim() ?? '')
      .filter((pair) => pair.includes('='))
      .join('; ');
    return { token, cookie };
  }

  async #readCollection<Item extends z.ZodType>(
    path: string,
    query: Record<string, string>,
    item: Item,
    options: SapCallOptions,
  ): Promise<z.output<Item>[]> {
    return (await this.#readCollectionPage(path, query, item, options)).results;
  }

  /** A collection and every page its answers link to with `d.__next` (server-side paging). */
  async #readPages<Item extends z.ZodType>(
    path: string,
    query: Record<string, string>,
    item: Item,
    options: SapCallOptions,
  ): Promise<z.output<Item>[]> {
    const results: z.output<Item>[] = [];
    const seen = new Set<string>();
    let page = await this.#readCollectionPage(path, query, item, options);
    for (;;) {
      results.push(...page.results);
      if (page.next === undefined) return results;
      // A link that comes back would page forever.
      if (seen.has(page.next.href))
        throw new SapResponseError(`GET ${path}`, 'd.__next links to a page again');
      seen.add(page.next.href);
      page = await this.#readCollectionPage(page.next, {}, item, options);
    }
  }

  async #readCollectionPage<Item extends z.ZodType>(
    path: string | URL,
    query: Record<string, string>,
    item: Item,
    options: SapCallOptions,
  ): Promise<{ results: z.output<Item>[]; next: URL | undefined }> {
    const what = `GET ${typeof path === 'string' ? path : 'd.__next'}`;
    const answer = await this.#send('GET', path, query, options);
    if (answer.status < 200 || answer.status > 299) throw httpError(what, answer);
    const body = parseJson(what, answer) as { d?: { results?: unknown; __next?: unknown } } | null;
    const results = body?.d?.results;
    if (!Array.isArray(results)) throw new SapResponseError(what, 'it has no d.results array');
    return {
      results: results.map((entry, index) => {
        const parsed = item.safeParse(entry);
        if (!parsed.success)
          throw new SapResponseError(what, `d.results[${index}] ${issuesOf(parsed.error)}`);
        return parsed.data;
      }),
      next: this.#nextLink(what, body?.d?.__next),
    };
  }

  /** `d.__next`, checked to stay within the service: the credentials go with it. */
  #nextLink(what: string, next: unknown): URL | undefined {
    if (next === undefined || next === null || next === '') return undefined;
    let url: URL | undefined;
    try {
      url = typeof next === 'string' ? new URL(next, this.#service) : undefined;
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      url.origin !== this.#service.origin ||
      !url.pathname.startsWith(this.#service.pathname)
    ) {
      throw new SapResponseError(what, 'its d.__next is not a link within the service');
    }
    return url;
  }

  async #send(
    method: 'GET' | 'POST',
    path: string | URL,
    query: Record<string, string>,
    { credentials, signal }: SapCallOptions,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    signal.throwIfAborted();
    const url = new URL(path, this.#service);
    if (typeof path === 'string') {
      const parameters = {
        ...query,
        ...(this.#sapClient === undefined ? {} : { 'sap-client': this.#sapClient }),
      };
      // Keys go as they are ($filter, SAP__Origin); values are percent-encoded, their OData quotes included.
      url.search = Object.entries(parameters)
        .map(([key, value]) => `${key}=${encodeURIComponent(value)}`)
        .join('&');
    } else if (this.#sapClient !== undefined && !url.searchParams.has('sap-client')) {
      // A link SAP wrote (`d.__next`) is sent as it is, in the same client.
      url.searchParams.set('sap-client', this.#sapClient);
    }
    const basic = Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64');
    try {
      const response = await fetch(url, {
        method,
        headers: { ...headers, accept: 'application/json', authorization: `Basic ${basic}` },
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]),
        // A redirect (to a logon page, say) is SAP's answer: following it would read another page as that answer.
        redirect: 'manual',
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      throw signal.aborted ? signal.reason : connectionFailure(error);
    }
  }
}

/** The key of a task as one string, for comparing and remembering tasks. */
function keyOf(task: { SAP__Origin: string; InstanceID: string }): string {
  return `${task.SAP__Origin}\u0000${task.InstanceID}`;
}

function openTasksFilter(taskDefinitionIds: readonly string[] | undefined): string {
  const statuses = OPEN_STATUSES.map((status) => `Status eq ${quote(status)}`).join(' or ');
  if (taskDefinitionIds === undefined) return statuses;
  if (
    !Array.isArray(taskDefinitionIds) ||
    taskDefinitionIds.length === 0 ||
    !taskDefinitionIds.every((id) => typeof id === 'string' && id !== '')
  ) {
    throw new TypeError(
      `Expected \`taskDefinitionIds\` to be a non-empty array of non-empty strings, got ${describe(taskDefinitionIds)}`,
    );
  }
  const definitions = taskDefinitionIds.map((id) => `TaskDefinitionID eq ${quote(id)}`).join(' or ');
  return `(${statuses}) and (${definitions})`;
}

function httpError(what: string, answer: Answer): SapHttpError {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    // Not JSON (a logon page, a CSRF refusal in plain text): only the status tells.
  }
  const { code, message } = readODataError(body);
  return new SapHttpError(what, answer.status, {
    retryAfterMs: parseRetryAfter(answer.headers.get('retry-after') ?? undefined, Date.now()),
    sapCode: code,
    sapMessage: message,
  });
}

function parseJson(what: string, answer: Answer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch (error) {
    throw new SapResponseError(what, 'it is not JSON', { cause: error });
  }
}

function parseEntity<Entity extends z.ZodType>(
  what: string,
  answer: Answer,
  entity: Entity,
): z.output<Entity> {
  const body = parseJson(what, answer) as { d?: unknown } | null;
  const parsed = entity.safeParse(body?.d);
  if (!parsed.success) throw new SapResponseError(what, `d ${issuesOf(parsed.error)}`);
  return parsed.data;
}

function issuesOf(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length === 0 ? '' : `${issue.path.join('.')} `}${issue.message}`)
    .join('; ');
}

/**
 * `fetch` rejects every failed connection with the same `TypeError: fetch failed`; what failed (with the `code`,
 * such as `ECONNREFUSED`, that the kit's failure mapping reads) is its `cause`.
 */
function connectionFailure(error: unknown): unknown {
  return error instanceof TypeError && error.cause instanceof Error ? error.cause : error;
}

/**
 * The service root as the client uses it (a final `/` added); throws a `TypeError` naming `name` for a value that
 * cannot be one. The connector's factory checks its `SAP_SERVICE_URL` with it.
 */
export function serviceRoot(serviceUrl: string | URL, name = 'serviceUrl'): URL {
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    throw new TypeError(`Expected \`${name}\` to be an http(s) URL, got ${describe(serviceUrl)}`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new TypeError(
      `Expected \`${name}\` to be an http(s) URL without query or fragment, got ${describe(String(serviceUrl))}`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new TypeError(`Expected \`${name}\` without credentials in it: each call takes its own`);
  }
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url;
}

/** An SAP client number (`sap-client`): three digits; throws a `TypeError` naming `name` otherwise. */
export function sapClient(value: string, name = 'sapClient'): string {
  if (typeof value !== 'string' || !/^\d{3}$/.test(value)) {
    throw new TypeError(`Expected \`${name}\` to be three digits such as '100', got ${describe(value)}`);
  }
  return value;
}

function checkCredentials(credentials: SapCredentials): void {
  const { username, password } = (credentials ?? {}) as Partial<SapCredentials>;
  // Basic authentication cannot carry a user name with a colon; the password is never shown.
  if (typeof username !== 'string' || username === '' || username.includes(':')) {
    throw new TypeError(
      `Expected \`credentials.username\` to be a non-empty string without ':', got ${describe(username)}`,
    );
  }
  if (typeof password !== 'string' || password === '') {
    throw new TypeError('Expected `credentials.password` to be a non-empty string');
  }
}

function checkRef(ref: TaskRef): void {
  const { origin, instanceId } = (ref ?? {}) as Partial<TaskRef>;
  if (typeof origin !== 'string' || origin === '') {
    throw new TypeError(
      `Expected the task's \`origin\` (SAP__Origin) to be a non-empty string, got ${describe(origin)}`,
    );
  }
  if (typeof instanceId !== 'string' || instanceId === '') {
    throw new TypeError(
      `Expected the task's \`instanceId\` (InstanceID) to be a non-empty string, got ${describe(instanceId)}`,
    );
  }
}

function integerOption(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(
      `Expected \`${name}\` to be an integer from ${min} to ${max}, got ${describe(value)}`,
    );
  }
  return value;
}

function describe(value: unknown): string {
  return `\`${typeof value === 'string' ? value : String(JSON.stringify(value) ?? value)}\` (${typeof value})`;
}
