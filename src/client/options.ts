import type { Dispatcher } from 'undici';
import { z } from 'zod';
import {
  func,
  integer,
  nonEmptyString,
  type OptionsShape,
  parseOptions,
  type Resolved,
  withMethods,
} from '../internal/options.js';
import type { RetryEvent, RetryPolicy } from './retry.js';

/**
 * The default of `ClientOptions.maxResponseBytes`: 32 MiB. Room for Get approvals' 50 full approvals of over 600 KiB
 * each, or a connector state 32 times the reference backend's limit of 1 MiB; reading an answer takes a few times its
 * size in memory, so a worker stays within a few hundred MB whatever the service sends.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** A credential, or a function that returns the current one (for tokens that rotate). */
export type TokenSource = string | (() => string | Promise<string>);

/** Options of {@link IntegrationClient} and {@link ManagementClient}. */
export interface ClientOptions {
  /** Base URL of the service, such as `https://approvals.example.com`. A path prefix is kept (`https://host/api`). */
  baseUrl: string | URL;
  /** The credential: a connector token for the Integration API, a management token for the Management API. */
  token: TokenSource;
  /**
   * How the credential is sent. The spec does not show it; see `docs/api-contract.md`.
   * @default {} (`Authorization: Bearer <token>`)
   */
  auth?: {
    /**
     * Header that carries the credential.
     * @default 'authorization'
     */
    header?: string;
    /**
     * Word before the credential in the header's value; `null` sends the bare credential.
     * @default 'Bearer'
     */
    scheme?: string | null;
  };
  /**
   * How long one attempt may take, from sending to the end of the answer's body, in milliseconds.
   * @default 30000
   */
  timeoutMs?: number;
  /**
   * The largest answer body the client reads, in bytes. A larger answer is refused with a `ResponseTooLargeError`
   * (code `response_too_large`) as soon as that is known: at once when its `Content-Length` says so, otherwise when
   * the bytes read pass the limit, whatever `Content-Length` said. The request is aborted there, and not retried.
   * See `docs/api-contract.md`, "Answer size".
   * @default 33554432 (32 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Retries of network errors, timeouts, 5xx, 429, 408 and 425. See `docs/api-contract.md`, "Retries".
   * @default {} (4 retries within 60 s)
   */
  retry?: {
    /**
     * Retries after the first attempt. `0` turns retries off.
     * @default 4
     */
    retries?: number;
    /**
     * The backoff's ceiling before the first retry; it doubles for each later retry (full jitter below it).
     * @default 250
     */
    baseDelayMs?: number;
    /**
     * The backoff's largest ceiling. A `Retry-After` from the service is honoured even when longer.
     * @default 10000
     */
    maxDelayMs?: number;
    /**
     * Time budget of all attempts and waits of one call. A wait that would pass it is not started.
     * @default 60000
     */
    maxRetryTimeMs?: number;
    /**
     * Source of randomness for the jitter, returning a number in [0, 1).
     * @default Math.random
     */
    random?: () => number;
  };
  /**
   * Called before each retry, with the endpoint's name, the request, the attempt that failed, the wait and the reason
   * (see {@link RetryEvent}): to count retries or log them, since the client itself does not log. Called synchronously;
   * an error it throws, or a promise it rejects, is ignored, so observing a retry never changes the call.
   * A `Connector` counts them in its metrics and logs each at debug, then calls this one.
   * @default none
   */
  onRetry?: (event: RetryEvent) => void;
  /**
   * undici dispatcher to send requests with (a `MockAgent` in tests, a `ProxyAgent`, a shared `Agent`).
   * A dispatcher passed here is not closed by the client's `close()`.
   * @default a keep-alive `Pool` for the base URL's origin, owned and closed by the client
   */
  dispatcher?: Dispatcher;
  /**
   * Connections of the default pool.
   * @default 16
   */
  connections?: number;
  /**
   * Extra headers sent with every request (never use it for the credential: it would not be redacted).
   * @default {}
   */
  headers?: Record<string, string>;
}

/**
 * Client options as their schema compiles them, every default applied (but those in `Undefaulted`): still client
 * options (the connector builds its client from its `service` option compiled so), before the transport's form,
 * {@link ResolvedClientOptions}.
 */
export type CompiledClientOptions<Undefaulted extends keyof ClientOptions = never> = Resolved<
  ClientOptions,
  'onRetry' | 'dispatcher' | Undefaulted,
  {
    auth: Resolved<NonNullable<ClientOptions['auth']>>;
    retry: Resolved<NonNullable<ClientOptions['retry']>>;
  }
>;

/** Options of one call. */
export interface RequestOptions {
  /** Aborts the call, including its retries and waits. The call rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Overrides `ClientOptions.timeoutMs` for this call. */
  timeoutMs?: number;
}

/** Client options with every default applied, as the transport uses them. */
export interface ResolvedClientOptions {
  baseUrl: URL;
  token: TokenSource;
  authHeader: string;
  authScheme: string | null;
  timeoutMs: number;
  maxResponseBytes: number;
  retry: RetryPolicy;
  onRetry: ((event: RetryEvent) => void) | undefined;
  dispatcher: Dispatcher | undefined;
  connections: number;
  headers: Record<string, string>;
}

const HEADER_NAME = /^[A-Za-z0-9-]+$/;
const TOKEN = 'a non-empty string or a function that returns one';

/**
 * The client options' schema: it checks them and applies every default. The connector checks its `service` option
 * with it too. Its output is itself valid client options.
 */
export const clientOptionsSchema = z.strictObject({
  // z.custom, not z.instanceof: this schema's type is in the built declarations, and ZodInstanceOf exists only from
  // zod 4.6, above the lowest zod the kit supports.
  baseUrl: z
    .union([z.custom<URL>((value) => value instanceof URL), z.string()], {
      error: 'an absolute http or https URL',
    })
    .refine(
      (value) => {
        const url = URL.parse(String(value));
        return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
      },
      { error: 'an absolute http or https URL' },
    ),
  token: z.union(
    [z.string({ error: TOKEN }).min(1, { error: TOKEN }), func<() => string | Promise<string>>()],
    { error: TOKEN },
  ),
  auth: z
    .strictObject({
      header: z
        .string({ error: 'a header name' })
        .regex(HEADER_NAME, { error: 'a header name' })
        .default('authorization'),
      scheme: nonEmptyString().nullable().default('Bearer'),
    } satisfies OptionsShape<NonNullable<ClientOptions['auth']>, CompiledClientOptions['auth']>)
    .prefault({}),
  timeoutMs: integer(1).default(30_000),
  maxResponseBytes: integer(1).default(DEFAULT_MAX_RESPONSE_BYTES),
  retry: z
    .strictObject({
      retries: integer(0).default(4),
      baseDelayMs: integer(0).default(250),
      maxDelayMs: integer(0).default(10_000),
      maxRetryTimeMs: integer(0).default(60_000),
      random: func<() => number>().default(() => Math.random),
    } satisfies OptionsShape<NonNullable<ClientOptions['retry']>, CompiledClientOptions['retry']>)
    .prefault({}),
  onRetry: func<(event: RetryEvent) => void>().optional(),
  dispatcher: withMethods<Dispatcher>('an undici Dispatcher', 'dispatch').optional(),
  connections: integer(1).default(16),
  headers: z
    .record(z.string(), z.string(), { error: 'an object of header names and string values' })
    .default(() => ({})),
} satisfies OptionsShape<ClientOptions, CompiledClientOptions>);

/** The options that are secrets: their values are never shown in an error. */
export const CLIENT_SECRET_OPTIONS: readonly string[] = ['token', 'headers'];

/**
 * Validates client options and applies the defaults, in one place. A bad option is a `ValidationError` naming
 * the option and what was received; the values of the token and the headers are never shown.
 */
export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  const compiled: CompiledClientOptions = parseOptions(
    clientOptionsSchema,
    options,
    'client options',
    CLIENT_SECRET_OPTIONS,
  );
  const baseUrl = new URL(String(compiled.baseUrl));
  if (!baseUrl.pathname.endsWith('/')) baseUrl.pathname += '/';
  return {
    baseUrl,
    token: compiled.token,
    authHeader: compiled.auth.header.toLowerCase(),
    authScheme: compiled.auth.scheme,
    timeoutMs: compiled.timeoutMs,
    maxResponseBytes: compiled.maxResponseBytes,
    retry: compiled.retry,
    onRetry: compiled.onRetry,
    dispatcher: compiled.dispatcher,
    connections: compiled.connections,
    headers: compiled.headers,
  };
}
