import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { parseOptions } from '../internal/options.js';
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
  /** How the credential is sent. The spec does not show it; see `docs/api-contract.md`. */
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
  /** Retries of network errors, timeouts, 5xx and 429. See `docs/api-contract.md`, "Retries". */
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

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

const OptionsSchema = z.object({
  baseUrl: z.union([
    z.instanceof(URL),
    z.string().refine((value) => URL.canParse(value), { message: 'must be an absolute URL' }),
  ]),
  token: z.union([z.string().min(1, 'must not be empty'), z.function()]),
  auth: z
    .object({
      header: z
        .string()
        .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
        .optional(),
      scheme: z.string().min(1).nullable().optional(),
    })
    .optional(),
  timeoutMs: positiveInt.optional(),
  maxResponseBytes: positiveInt.optional(),
  retry: z
    .object({
      retries: nonNegativeInt.optional(),
      baseDelayMs: nonNegativeInt.optional(),
      maxDelayMs: nonNegativeInt.optional(),
      maxRetryTimeMs: nonNegativeInt.optional(),
      random: z.function().optional(),
    })
    .optional(),
  onRetry: z.function().optional(),
  dispatcher: z.custom<Dispatcher>((value) => typeof value === 'object' && value !== null).optional(),
  connections: positiveInt.optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

/**
 * Validates client options and applies the defaults, in one place. A bad option is a {@link ValidationError} naming
 * the option and what was received; the token's value is never echoed.
 */
export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  // The token is a secret: its value is never echoed.
  parseOptions(OptionsSchema, options, 'client options', ['token']);
  const baseUrl = new URL(String(options.baseUrl));
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') {
    throw new ValidationError('client options', [
      {
        path: ['baseUrl'],
        message: `must be an http or https URL, got \`${baseUrl.protocol}\``,
        code: 'invalid_format',
      },
    ]);
  }
  if (!baseUrl.pathname.endsWith('/')) baseUrl.pathname += '/';
  return {
    baseUrl,
    token: options.token,
    authHeader: (options.auth?.header ?? 'authorization').toLowerCase(),
    authScheme: options.auth?.scheme === undefined ? 'Bearer' : options.auth.scheme,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    retry: {
      retries: options.retry?.retries ?? 4,
      baseDelayMs: options.retry?.baseDelayMs ?? 250,
      maxDelayMs: options.retry?.maxDelayMs ?? 10_000,
      maxRetryTimeMs: options.retry?.maxRetryTimeMs ?? 60_000,
      random: options.retry?.random ?? Math.random,
    },
    onRetry: options.onRetry,
    dispatcher: options.dispatcher,
    connections: options.connections ?? 16,
    headers: options.headers ?? {},
  };
}
