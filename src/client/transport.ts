import { type Dispatcher, Pool } from 'undici';
import type { z } from 'zod';
import { buildPath, type Endpoint, type EndpointName, endpoints, parseOrThrow } from '../api/index.js';
import { ApprovalKitError, toIssues } from '../errors.js';
import { causeChain, property } from '../internal/causes.js';
import { isNetworkCode, UNSENT_CODES } from '../internal/network-codes.js';
import { errorTypeOf, NOOP_SPAN, startSpan, type TraceSpan, traceHeaders } from '../internal/tracing.js';
import {
  ApiError,
  ClientClosedError,
  errorForStatus,
  errorForV1Body,
  InvalidResponseError,
  isV1Error,
  NetworkError,
  NotFoundError,
  type RequestTarget,
  ResponseTooLargeError,
  TimeoutError,
} from './errors.js';
import {
  type ClientOptions,
  type RequestOptions,
  type ResolvedClientOptions,
  resolveClientOptions,
} from './options.js';
import { parseRetryAfter, type Repeatability, type RetryAttempt, withRetry } from './retry.js';
import { TlsMismatchCheck } from './tls-mismatch.js';

/** What a call sends besides the endpoint: path parameters, query and body, validated before sending. */
export interface CallInput {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
}

export interface Prepared {
  endpoint: Endpoint;
  target: RequestTarget;
  /** The path as the request line carries it: the base URL's path, then the target's path and query. */
  requestPath: string;
  body: string | undefined;
}

// Retries are reported by the endpoint's name, which a path with ids in it would not give.
// By number: a client may send an endpoint of the table with a schema of its own (`leaseTask` is Get task, endpoint
// 13, with a looser answer), and it is still that endpoint.
const ENDPOINT_NAMES: ReadonlyMap<number, EndpointName> = new Map(
  Object.entries(endpoints).map(([name, endpoint]) => [(endpoint as Endpoint).number, name as EndpointName]),
);

/**
 * Sends the endpoints of the table in `src/api/endpoints.ts` over undici: validation, authentication, timeout,
 * abort, retries and error mapping. Shared by both clients; not part of the public API.
 */
export class Transport {
  readonly options: ResolvedClientOptions;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  /** The headers of a request without a body and with one, built once when the token is a fixed string. */
  readonly #fixedHeaders: readonly [Record<string, string>, Record<string, string>] | undefined;
  readonly #tlsMismatch: TlsMismatchCheck;
  readonly #templates = new Map<Endpoint, { template: string; spanName: string }>();
  #closing: Promise<void> | undefined;

  constructor(options: ClientOptions) {
    this.options = resolveClientOptions(options);
    this.#ownsDispatcher = this.options.dispatcher === undefined;
    this.#dispatcher =
      this.options.dispatcher ??
      new Pool(this.options.baseUrl.origin, { connections: this.options.connections });
    // A dispatcher of the caller's may reach the server otherwise (a proxy): only its own is checked by a handshake.
    this.#tlsMismatch = new TlsMismatchCheck(this.options.baseUrl, { probe: this.#ownsDispatcher });
    const { token } = this.options;
    this.#fixedHeaders =
      typeof token === 'string'
        ? [this.#headersWith(token, false), this.#headersWith(token, true)]
        : undefined;
  }

  /** Validates the input, sends it (with retries) and validates the answer, which must not be empty. */
  async call<E extends Endpoint>(
    endpoint: E,
    input: CallInput,
    options: RequestOptions = {},
  ): Promise<z.output<E['response']>> {
    return this.send(endpoint, this.prepare(endpoint, input), options, { allowEmpty: false });
  }

  /** Like {@link call}, but an empty success answer resolves to `undefined` (writes, and reads the spec leaves open). */
  async callOptional<E extends Endpoint>(
    endpoint: E,
    input: CallInput,
    options: RequestOptions = {},
  ): Promise<z.output<E['response']> | undefined> {
    return this.send(endpoint, this.prepare(endpoint, input), options, { allowEmpty: true });
  }

  /**
   * For reads whose "nothing there" the spec does not show: an empty answer or a 404 resolves to `undefined`, and
   * the caller reads a `null` inside the answer the same way.
   */
  async callIfPresent<E extends Endpoint>(
    endpoint: E,
    input: CallInput,
    options: RequestOptions = {},
  ): Promise<z.output<E['response']> | undefined> {
    try {
      return await this.callOptional(endpoint, input, options);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /** Validates a call's input and builds its request, without sending anything. */
  prepare(endpoint: Endpoint, input: CallInput): Prepared {
    if (input.query === undefined && endpoint.acceptsInput?.(input.params, input.body)) {
      const path = buildPath(endpoint.path, input.params as Record<string, string>);
      return this.#request(endpoint, path, JSON.stringify(input.body));
    }
    const subject = `${endpoint.summary} request`;
    const params = endpoint.params ? parseOrThrow(endpoint.params, input.params ?? {}, subject) : {};
    const query = endpoint.query ? parseOrThrow(endpoint.query, input.query ?? {}, subject) : undefined;
    const body = endpoint.body ? parseOrThrow(endpoint.body, input.body, subject) : undefined;
    const path = buildPath(endpoint.path, params as Record<string, string>) + searchOf(query);
    return this.#request(endpoint, path, body === undefined ? undefined : JSON.stringify(body));
  }

  /**
   * Builds the request of an endpoint without path parameters or query from a body its caller has already
   * validated against the endpoint's schema and serialized: it is sent as it is.
   */
  prepareSerialized(endpoint: Endpoint, body: string): Prepared {
    return this.#request(endpoint, endpoint.path, body);
  }

  #request(endpoint: Endpoint, path: string, body: string | undefined): Prepared {
    // As `new URL(path.slice(1), baseUrl)` would resolve it: the path's parameters and query are already encoded,
    // and neither can be `.` or `..`.
    return {
      endpoint,
      target: { method: endpoint.method, path },
      requestPath: this.options.baseUrl.pathname + path.slice(1),
      body,
    };
  }

  /** Sends a prepared request with the retry policy and validates the answer against the endpoint's schema. */
  async send<E extends Endpoint>(
    endpoint: E,
    prepared: Prepared,
    options: RequestOptions,
    behaviour: { allowEmpty: false; repeatability?: Repeatability },
  ): Promise<z.output<E['response']>>;
  async send<E extends Endpoint>(
    endpoint: E,
    prepared: Prepared,
    options: RequestOptions,
    behaviour: { allowEmpty: boolean; repeatability?: Repeatability },
  ): Promise<z.output<E['response']> | undefined>;
  async send<E extends Endpoint>(
    endpoint: E,
    prepared: Prepared,
    options: RequestOptions,
    { allowEmpty, repeatability = 'safe' }: { allowEmpty: boolean; repeatability?: Repeatability },
  ): Promise<z.output<E['response']> | undefined> {
    if (this.#closing) throw new ClientClosedError();
    options.signal?.throwIfAborted();
    let attempt = 0;
    const { status, body } = await withRetry(
      () => this.#attempt(prepared, options, attempt++),
      this.options.retry,
      repeatability,
      options.signal,
      (retry) => this.#reportRetry(prepared, retry),
    );
    if (body === undefined) {
      if (allowEmpty) return undefined;
      throw new InvalidResponseError(prepared.target, status, [
        { path: [], message: 'empty body', code: 'invalid_type' },
      ]);
    }
    if (endpoint.accepts?.(body) === true) return body as z.output<E['response']>;
    const parsed = endpoint.response.safeParse(body);
    if (!parsed.success) throw new InvalidResponseError(prepared.target, status, toIssues(parsed.error));
    return parsed.data as z.output<E['response']>;
  }

  /** Lets requests in flight finish, then closes the pool. Idempotent. A dispatcher passed in is left open. */
  close(): Promise<void> {
    this.#closing ??= this.#ownsDispatcher ? this.#dispatcher.close() : Promise.resolve();
    return this.#closing;
  }

  /** Aborts requests in flight and closes the pool at once. Idempotent. */
  destroy(): Promise<void> {
    const destroyed = this.#ownsDispatcher ? this.#dispatcher.destroy() : Promise.resolve();
    this.#closing ??= destroyed;
    return destroyed;
  }

  async #attempt(
    prepared: Prepared,
    options: RequestOptions,
    attempt: number,
  ): Promise<{ status: number; body: unknown }> {
    const { target } = prepared;
    const span = this.#clientSpan(prepared, attempt);
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const hasBody = prepared.body !== undefined;
      const headers = this.#fixedHeaders?.[hasBody ? 1 : 0] ?? (await this.#headers(hasBody));
      const propagated = span.context === undefined ? undefined : traceHeaders(span.context);
      const response = await this.#dispatcher.request({
        origin: this.options.baseUrl.origin,
        path: prepared.requestPath,
        method: target.method as Dispatcher.HttpMethod,
        headers: propagated === undefined ? headers : { ...headers, ...propagated },
        body: prepared.body,
        signal: controller.signal,
      });
      span.set({ 'http.response.status_code': response.statusCode });
      if (response.statusCode >= 400) span.fail(String(response.statusCode));
      const text = await readBody(response, this.options.maxResponseBytes, target);
      const body = parseBody(text);
      const retryAfter = () => parseRetryAfter(headerOf(response.headers['retry-after']), Date.now());
      if (response.statusCode >= 200 && response.statusCode < 300) {
        if (body.invalidJson) {
          throw new InvalidResponseError(target, response.statusCode, [
            { path: [], message: 'not JSON', code: 'invalid_format' },
          ]);
        }
        // The spec shows no status codes, so the v1 error shape is the signal, as `{"status":"failure"}` is in v2.
        if (prepared.endpoint.api === 'v1' && isV1Error(body.value)) {
          throw errorForV1Body(target, response.statusCode, body.value, retryAfter());
        }
        return { status: response.statusCode, body: body.value };
      }
      throw errorForStatus(target, response.statusCode, body.value, retryAfter());
    } catch (error) {
      const failure = await this.#failure(error, target, options, timedOut ? timeoutMs : undefined);
      // A status of 400 and up already named the failure; a v1 error body in a 200 did not.
      if (!(failure instanceof ApiError) || failure.status < 400) span.fail(errorTypeOf(failure));
      throw failure;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      span.end();
    }
  }

  /** What a failed attempt throws: the caller's abort, a timeout, the kit's error, or the network failure named. */
  async #failure(
    error: unknown,
    target: RequestTarget,
    options: RequestOptions,
    timedOutAfterMs: number | undefined,
  ): Promise<unknown> {
    if (options.signal?.aborted) return options.signal.reason;
    if (timedOutAfterMs !== undefined) return new TimeoutError(target, timedOutAfterMs, { cause: error });
    if (error instanceof ApprovalKitError) return error;
    const mismatch = await this.#tlsMismatch.of(error);
    if (mismatch !== undefined) return mismatch;
    const code = networkCode(error);
    if (code !== undefined) return new NetworkError(target, code, UNSENT_CODES.has(code), error);
    return error;
  }

  /**
   * The HTTP client span of one attempt, as OpenTelemetry's semantic conventions for HTTP client spans name it and
   * its attributes. Get task is not traced: an idle worker asks about once a second, and a trace per empty answer
   * would drown the others (the worker records the lease of a task it gets in that task's trace).
   */
  #clientSpan(prepared: Prepared, attempt: number): TraceSpan {
    if (prepared.endpoint.number === endpoints.getTask.number) return NOOP_SPAN;
    const { baseUrl } = this.options;
    const method = prepared.target.method;
    const { template, spanName } = this.#urlTemplate(prepared.endpoint);
    return startSpan(spanName, {
      kind: 'client',
      attributes: () => ({
        'http.request.method': method,
        'server.address': baseUrl.hostname.replace(/^\[(.*)\]$/, '$1'),
        'server.port': Number(baseUrl.port) || (baseUrl.protocol === 'https:' ? 443 : 80),
        'url.full': baseUrl.origin + prepared.requestPath,
        'url.template': template,
        'http.request.resend_count': attempt === 0 ? undefined : attempt,
      }),
    });
  }

  /**
   * The path of an endpoint as `url.template` gives it, `/v2/connector/tasks/{taskId}` under the base URL's path,
   * and the name of its spans, `PATCH /v2/connector/tasks/{taskId}`; built once an endpoint.
   */
  #urlTemplate(endpoint: Endpoint): { template: string; spanName: string } {
    let named = this.#templates.get(endpoint);
    if (named === undefined) {
      const template =
        this.options.baseUrl.pathname.replace(/\/$/, '') + endpoint.path.replace(/:(\w+)/g, '{$1}');
      named = { template, spanName: `${endpoint.method} ${template}` };
      this.#templates.set(endpoint, named);
    }
    return named;
  }

  #reportRetry({ endpoint, target }: Prepared, retry: RetryAttempt): void {
    const { onRetry } = this.options;
    if (onRetry === undefined) return;
    // An observer must not change the call it observes: what it throws or rejects is dropped.
    try {
      const returned: unknown = onRetry({
        // Every endpoint a transport sends comes from the table.
        endpoint: ENDPOINT_NAMES.get(endpoint.number) as EndpointName,
        method: target.method,
        path: target.path,
        ...retry,
      });
      if (returned instanceof Promise) returned.catch(() => {});
    } catch {}
  }

  async #headers(hasBody: boolean): Promise<Record<string, string>> {
    const { token } = this.options;
    return this.#headersWith(typeof token === 'function' ? await token() : token, hasBody);
  }

  #headersWith(credential: string, hasBody: boolean): Record<string, string> {
    const { authHeader, authScheme, headers } = this.options;
    return {
      ...headers,
      accept: 'application/json',
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      [authHeader]: authScheme === null ? credential : `${authScheme} ${credential}`,
    };
  }
}

function searchOf(query: unknown): string {
  if (query === undefined || query === null) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query as Record<string, unknown>)) {
    if (value !== undefined) search.append(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

// As undici's own text(): UTF-8, a byte order mark dropped. Without `stream`, each decode() starts afresh, so one
// decoder serves every answer.
const UTF8 = new TextDecoder();

/**
 * Reads an answer's body as text, refusing it as soon as it is known to pass `limit` bytes: by its `Content-Length`
 * before reading anything, and by counting, whatever that header said, while reading. A refused body is destroyed,
 * which aborts the request and closes its connection. Read with events rather than an async iterator, which costs
 * several promises per answer.
 */
function readBody(response: Dispatcher.ResponseData, limit: number, target: RequestTarget): Promise<string> {
  const tooLarge = () => new ResponseTooLargeError(target, response.statusCode, limit);
  const { body } = response;
  const announced = Number(headerOf(response.headers['content-length']));
  if (announced > limit) {
    body.destroy();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      body.destroy();
      reject(tooLarge());
    });
    body.once('end', () => resolve(UTF8.decode(Buffer.concat(chunks, size))));
    body.once('error', reject);
  });
}

function parseBody(text: string): { value: unknown; invalidJson: boolean } {
  // A search that stops at the first non-space character, where `trim()` would scan from both ends.
  if (!/\S/.test(text)) return { value: undefined, invalidJson: false };
  try {
    return { value: JSON.parse(text), invalidJson: false };
  } catch {
    return { value: text, invalidJson: true };
  }
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The code of a network failure, looking through undici's and Node's wrappers; `undefined` for other errors. */
function networkCode(error: unknown): string | undefined {
  for (const link of causeChain(error)) {
    const code = property(link, 'code');
    if (isNetworkCode(code)) return code;
  }
  return undefined;
}
