/**
 * A small client of ServiceNow's Table API (`/api/now/table/{tableName}`), with exactly the calls the connector
 * makes: a page of a table's records for an encoded query, the pages its `Link` header leads to, one record by its
 * sys_id, and an update of one record (`PATCH`).
 *
 * It signs in with basic authentication and sends each call with Node's global `fetch`, asking for
 * `sysparm_display_value=all` (each field's value and its display value) without reference links. A read (`GET`)
 * that the instance rate-limits (`429` with `Retry-After`) waits as long as it says and is sent again, a bounded
 * number of times within a bounded wait (`rateLimitRetries`, `rateLimitWaitMs`), so that a sync run goes on; an
 * update is sent once. Any other answer that is not a success, a redirect included (it is not followed), is a
 * {@link ServiceNowHttpError} with its `status`.
 *
 * @example
 * ```ts
 * const now = new ServiceNowClient({ instanceUrl: 'https://example.service-now.com', username, password });
 * const page = await now.page({ table: 'sysapproval_approver', query: 'state=requested', fields, limit: 100 }, ApproverRecord, { signal });
 * await now.withCredentials(approver).update('sysapproval_approver', sysId, { state: 'approved' }, ApproverRecord, { signal });
 * ```
 * @module
 */
import type { z } from 'zod';
import {
  checkInstanceUrl,
  checkPassword,
  checkUsername,
  fieldList,
  tableName,
  wholeNumber,
} from './checks.js';
import {
  type CallTarget,
  orThrow,
  ServiceNowArgumentError,
  ServiceNowHttpError,
  ServiceNowResponseError,
} from './errors.js';
import type { ServiceNowCredentials } from './model.js';

/** Options of {@link ServiceNowClient}. */
export interface ServiceNowClientOptions extends ServiceNowCredentials {
  /** The instance, such as `https://example.service-now.com`; a path after the host is kept as a prefix. */
  instanceUrl: string;
  /**
   * The most time one call may take, answer included; then it rejects with the deadline's `TimeoutError`.
   * @default 30_000
   */
  timeoutMs?: number;
  /**
   * How many times a read is sent again after a `429` (or a `503` with `Retry-After`), once the wait the instance
   * asked for has passed. `0` throws the first one; so is an answer that says no wait, and an update's.
   * @default 4
   */
  rateLimitRetries?: number;
  /**
   * The most time one read waits in all for those retries: a wait that would go past it is thrown at once (a
   * {@link ServiceNowHttpError} with its `retryAfterMs`), and the sync reads again later. ServiceNow's rate limits
   * count requests per hour, so a wait can be long.
   * @default 30_000
   */
  rateLimitWaitMs?: number;
}

/** What every call accepts. */
export interface CallOptions {
  /** Stops the call: it rejects with `signal.reason`. */
  signal?: AbortSignal | undefined;
}

/** One page to read: `GET /api/now/table/{table}?sysparm_query=…&sysparm_fields=…&sysparm_limit=…&sysparm_offset=0`. */
export interface TableQuery {
  table: string;
  /** An encoded query, such as `state=requested^ORDERBYsys_updated_on`. */
  query: string;
  /** The fields to answer (`sysparm_fields`). */
  fields: readonly string[];
  /** Records per page (`sysparm_limit`); the instance may answer fewer. */
  limit: number;
}

/** A page of records, and the next page's URL when the answer's `Link` header names one (`rel="next"`). */
export interface Page<T> {
  records: T[];
  next: URL | undefined;
  /**
   * The instance's clock when it answered, from the answer's `Date` header (HTTP dates have one-second precision),
   * in milliseconds; `undefined` when the answer carried none.
   */
  at: number | undefined;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RATE_LIMIT_RETRIES = 4;
const DEFAULT_RATE_LIMIT_WAIT_MS = 30_000;
const SYS_ID = /^[0-9a-f]{32}$/;

/** A typed client of the Table API calls the connector makes; see the module's documentation. */
export class ServiceNowClient {
  readonly #instance: URL;
  readonly #username: string;
  readonly #authorization: string;
  readonly #timeoutMs: number;
  readonly #rateLimitRetries: number;
  readonly #rateLimitWaitMs: number;

  constructor(options: ServiceNowClientOptions) {
    const { instanceUrl, username, password } = options ?? {};
    this.#instance = orThrow('instanceUrl', checkInstanceUrl(instanceUrl));
    this.#username = orThrow('username', checkUsername(username));
    const basic = Buffer.from(`${this.#username}:${orThrow('password', checkPassword(password))}`);
    this.#authorization = `Basic ${basic.toString('base64')}`;
    this.#timeoutMs = wholeNumber('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 1);
    this.#rateLimitRetries = wholeNumber(
      'rateLimitRetries',
      options.rateLimitRetries ?? DEFAULT_RATE_LIMIT_RETRIES,
      0,
    );
    this.#rateLimitWaitMs = wholeNumber(
      'rateLimitWaitMs',
      options.rateLimitWaitMs ?? DEFAULT_RATE_LIMIT_WAIT_MS,
      0,
    );
  }

  /** The instance's URL, as the client calls it. */
  get instanceUrl(): string {
    return this.#instance.href;
  }

  /** The user the client signs in as. */
  get username(): string {
    return this.#username;
  }

  /** The same client signed in as someone else: the approver, whose credentials a task carries. */
  withCredentials(credentials: ServiceNowCredentials): ServiceNowClient {
    return new ServiceNowClient({
      instanceUrl: this.#instance.href,
      username: orThrow('username', checkUsername(credentials?.username)),
      password: orThrow('password', checkPassword(credentials?.password)),
      timeoutMs: this.#timeoutMs,
      rateLimitRetries: this.#rateLimitRetries,
      rateLimitWaitMs: this.#rateLimitWaitMs,
    });
  }

  /**
   * One page of a table: the first for `request` (`sysparm_offset=0`), or the page a `Link` header named. The
   * answer's `rel="next"` link, when there is one, is where the records go on; a page shorter than asked, or empty,
   * says nothing of the end (the instance applies `sysparm_limit` before its ACLs).
   */
  async page<Schema extends z.ZodType>(
    request: TableQuery | URL,
    schema: Schema,
    options: CallOptions = {},
  ): Promise<Page<z.output<Schema>>> {
    const url = request instanceof URL ? this.#ownLink(request) : this.#queryUrl(request);
    const table = tableOf(url) ?? '';
    const target = { method: 'GET', path: `/api/now/table/${table}` };
    const answer = await this.#call(target, url, undefined, options.signal);
    const body = parseBody(target, answer);
    if (!Array.isArray(body))
      throw new ServiceNowResponseError(target, `${answer.status} without a result array`);
    return {
      records: body.map((record, index) => parseRecord(target, schema, record, `result[${index}]`)),
      next: nextLink(answer.headers.get('link'), this.#instance, table),
      at: dateOf(answer.headers.get('date')),
    };
  }

  /** Every record of `request`: its first page and each page its `Link` header leads to, until none does. */
  async *records<Schema extends z.ZodType>(
    request: TableQuery,
    schema: Schema,
    options: CallOptions = {},
  ): AsyncIterable<z.output<Schema>> {
    const followed = new Set<string>();
    let page = await this.page(request, schema, options);
    for (;;) {
      yield* page.records;
      if (page.next === undefined) return;
      // A link that comes back would page forever.
      if (followed.has(page.next.href)) {
        throw new ServiceNowResponseError(
          { method: 'GET', path: `/api/now/table/${request.table}` },
          'a Link to a page it had linked to already',
        );
      }
      followed.add(page.next.href);
      page = await this.page(page.next, schema, options);
    }
  }

  /**
   * `GET /api/now/table/{table}/{sys_id}`: one record, or `undefined` when the instance answers `404` (the record
   * does not exist, or an ACL keeps it from the signed-in user: the Table API does not say which).
   */
  async get<Schema extends z.ZodType>(
    table: string,
    sysId: string,
    fields: readonly string[],
    schema: Schema,
    options: CallOptions = {},
  ): Promise<z.output<Schema> | undefined> {
    const { url, target } = this.#recordUrl('GET', table, sysId, fields);
    try {
      const answer = await this.#call(target, url, undefined, options.signal);
      return parseRecord(target, schema, parseBody(target, answer), 'result');
    } catch (error) {
      if (error instanceof ServiceNowHttpError && error.status === 404) return undefined;
      throw error;
    }
  }

  /**
   * `PATCH /api/now/table/{table}/{sys_id}` with the fields to set: updates one record as the signed-in user and
   * returns it as the instance answers (the `fields` asked for). Sent once, whatever the answer.
   */
  async update<Schema extends z.ZodType>(
    table: string,
    sysId: string,
    changes: Readonly<Record<string, string>>,
    fields: readonly string[],
    schema: Schema,
    options: CallOptions = {},
  ): Promise<z.output<Schema>> {
    const { url, target } = this.#recordUrl('PATCH', table, sysId, fields);
    const answer = await this.#call(target, url, changes, options.signal);
    return parseRecord(target, schema, parseBody(target, answer), 'result');
  }

  #queryUrl({ table, query, fields, limit }: TableQuery): URL {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) {
      throw new ServiceNowArgumentError(`limit must be a whole number from 1 to 10000, got ${String(limit)}`);
    }
    return this.#url(`/api/now/table/${tableName(table)}`, {
      sysparm_query: query,
      sysparm_fields: fieldList(fields),
      sysparm_limit: String(limit),
      sysparm_offset: '0',
      sysparm_exclude_reference_link: 'true',
    });
  }

  #recordUrl(method: string, table: string, sysId: string, fields: readonly string[]) {
    if (typeof sysId !== 'string' || !SYS_ID.test(sysId)) {
      throw new ServiceNowArgumentError(
        `sysId must be a sys_id (32 hexadecimal digits), got ${JSON.stringify(sysId)}`,
      );
    }
    const path = `/api/now/table/${tableName(table)}/${sysId}`;
    // The Table API documents no sysparm_exclude_reference_link for PATCH: its references come with their links.
    const links: Record<string, string> =
      method === 'PATCH' ? {} : { sysparm_exclude_reference_link: 'true' };
    return {
      url: this.#url(path, { sysparm_fields: fieldList(fields), ...links }),
      target: { method, path },
    };
  }

  /** A Table API URL with `parameters`, asking for each field's value and display value. */
  #url(path: string, parameters: Record<string, string>): URL {
    const url = new URL(`${this.#instance.pathname.replace(/\/$/, '')}${path}`, this.#instance);
    for (const [name, value] of Object.entries({ ...parameters, sysparm_display_value: 'all' })) {
      url.searchParams.set(name, value);
    }
    return url;
  }

  /**
   * A `Link` the instance wrote, checked to stay on it (the credentials go with it), asking for what every read asks
   * for, whether the link kept it or not.
   */
  #ownLink(link: URL): URL {
    if (link.origin !== this.#instance.origin || tableOf(link) === undefined) {
      throw new ServiceNowArgumentError('a page link must be a Table API URL of the same instance');
    }
    const url = new URL(link);
    url.searchParams.set('sysparm_display_value', 'all');
    url.searchParams.set('sysparm_exclude_reference_link', 'true');
    return url;
  }

  /** Sends a call; a read the instance asks to wait for waits, within `rateLimitRetries` and `rateLimitWaitMs`. */
  async #call(
    target: CallTarget,
    url: URL,
    body: Readonly<Record<string, string>> | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const started = performance.now();
    for (let retries = 0; ; retries += 1) {
      const answer = await this.#send(target, url, body, signal);
      if (answer.status >= 200 && answer.status <= 299) return answer;
      const error = httpError(target, answer);
      const wait = target.method === 'GET' && retries < this.#rateLimitRetries ? waitAsked(error) : undefined;
      if (wait === undefined || performance.now() - started + wait > this.#rateLimitWaitMs) throw error;
      await sleep(wait, signal);
    }
  }

  async #send(
    target: CallTarget,
    url: URL,
    body: Readonly<Record<string, string>> | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    signal?.throwIfAborted();
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await fetch(url, {
        method: target.method,
        headers: {
          authorization: this.#authorization,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: signal === undefined ? deadline : AbortSignal.any([signal, deadline]),
        // A redirect is a sign-in page or a moved instance: an answer to report, not a call to repeat elsewhere.
        redirect: 'manual',
      });
      return { status: response.status, headers: response.headers, text: await response.text() };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted) throw deadline.reason;
      // `fetch` rejects every failed connection with `TypeError: fetch failed`; what failed (with the `code` the
      // kit's failure mapping reads, such as ECONNREFUSED) is its cause.
      throw error instanceof TypeError && error.cause instanceof Error ? error.cause : error;
    }
  }
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

function httpError(target: CallTarget, answer: Answer): ServiceNowHttpError {
  let said: { message?: string; detail?: string } = {};
  try {
    const error = (JSON.parse(answer.text) as { error?: { message?: unknown; detail?: unknown } } | null)
      ?.error;
    said = {
      ...(typeof error?.message === 'string' ? { message: error.message } : {}),
      ...(typeof error?.detail === 'string' ? { detail: error.detail } : {}),
    };
  } catch {
    // Not JSON (a sign-in page, a proxy's answer): the status says enough.
  }
  return new ServiceNowHttpError(
    target,
    answer.status,
    said,
    parseRetryAfter(answer.headers.get('retry-after')),
  );
}

/** How long the instance asked to wait before a read is sent again: a `429`'s, or a `503`'s with `Retry-After`. */
function waitAsked(error: ServiceNowHttpError): number | undefined {
  return error.status === 429 || error.status === 503 ? error.retryAfterMs : undefined;
}

/** `Retry-After` in whole seconds (what ServiceNow's rate limiting sends), or an HTTP date, as milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return text === '' || Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function parseBody(target: CallTarget, answer: Answer): unknown {
  try {
    const body = JSON.parse(answer.text) as { result?: unknown } | null;
    if (typeof body === 'object' && body !== null && 'result' in body) return body.result;
  } catch {
    // reported below
  }
  throw new ServiceNowResponseError(target, `${answer.status} without a JSON body holding "result"`);
}

function parseRecord<Schema extends z.ZodType>(
  target: CallTarget,
  schema: Schema,
  record: unknown,
  where: string,
): z.output<Schema> {
  const parsed = schema.safeParse(record);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [where, ...(issue?.path ?? [])].join('.');
  throw new ServiceNowResponseError(
    target,
    `a record not understood: ${path} ${issue?.message ?? ''}`.trim(),
  );
}

/**
 * The `rel="next"` URL of a `Link` header (`<https://…?sysparm_offset=100&…>;rel="next",<…>;rel="last"`), when
 * it is a page of the same table on the same instance.
 */
export function nextLink(header: string | null, instance: URL, table: string | undefined): URL | undefined {
  // Links are separated by commas, which a link's own query may hold too (`sysparm_fields=sys_id,state`): a comma
  // separates only where a URL follows it.
  for (const part of (header ?? '').split(/,(?=\s*<?\s*(?:https?:|\/))/)) {
    const match = /^\s*<?\s*([^<>\s]+?)\s*>?\s*;\s*rel="?([\w-]+)"?/.exec(part);
    if (match?.[2]?.toLowerCase() !== 'next') continue;
    let url: URL;
    try {
      url = new URL(match[1] ?? '', instance);
    } catch {
      return undefined;
    }
    return url.origin === instance.origin && tableOf(url) === table ? url : undefined;
  }
  return undefined;
}

/** The table a Table API URL reads (`/api/now/table/{table}` or `/api/now/v2/table/{table}`). */
function tableOf(url: URL): string | undefined {
  return /\/api\/now\/(?:v\d+\/)?table\/([a-z][a-z0-9_]*)$/.exec(url.pathname)?.[1];
}

/** An HTTP date (`Mon, 02 Mar 2026 09:00:05 GMT`) in milliseconds; `undefined` when absent or unreadable. */
function dateOf(value: string | null): number | undefined {
  const at = value === null ? Number.NaN : Date.parse(value);
  return Number.isNaN(at) ? undefined : at;
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}
