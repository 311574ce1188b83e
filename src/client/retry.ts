import pRetry from 'p-retry';
import type { EndpointName } from '../api/index.js';
import { backoffDelay } from '../internal/backoff.js';
import { sleep } from '../internal/wait.js';
import { ApiError, NetworkError, RateLimitedError, ServerError, TimeoutError } from './errors.js';

/** How a client retries. Every field is required here; `ClientOptions.retry` documents the defaults. */
export interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryTimeMs: number;
  /** Source of randomness for the jitter, in [0, 1). */
  random: () => number;
}

/**
 * Which failures of a request may be retried:
 * - `safe`: the request can be repeated without effect (every endpoint but Add users);
 * - `unsent`: only when the request provably never reached the server.
 */
export type Repeatability = 'safe' | 'unsent';

/**
 * The failures a client retries: what can succeed later. An `ApiError` of code `api` is retried only for a 408
 * (Request Timeout) or a 425 (Too Early).
 */
export type RetryableError = NetworkError | TimeoutError | RateLimitedError | ServerError | ApiError<'api'>;

/**
 * Why a request is retried, by the code of its failure: names of their own, since they are a metric label
 * (`client_retries_total`'s `reason`) that dashboards and alerts select on, and a label does not follow a renamed
 * error code.
 */
const RETRY_REASONS = {
  network: 'network',
  timeout: 'timeout',
  rate_limited: 'rate_limited',
  server: 'server_error',
  api: 'http_error',
} as const satisfies Record<RetryableError['code'], string>;

/**
 * Why a request is retried: `network`, `timeout`, `rate_limited`, `server_error` (a 5xx), or `http_error` (a 408 or
 * a 425).
 */
export type RetryReason = (typeof RETRY_REASONS)[RetryableError['code']];

/** A retry {@link withRetry} is about to make. */
export interface RetryAttempt {
  /** The attempt that failed, from 1; the retry is attempt `attempt + 1`. */
  attempt: number;
  /** The wait before the retry, in milliseconds: the backoff, or what `Retry-After` asked for. */
  delayMs: number;
  /** Why: the kind of failure, named after its `code` ({@link RetryReason}). */
  reason: RetryReason;
  /** The failure. */
  error: RetryableError;
}

/** A retry a client is about to make, as `ClientOptions.onRetry` hears of it. */
export interface RetryEvent extends RetryAttempt {
  /**
   * The endpoint's name in the table of `src/api/endpoints.ts` (the client method's name, such as `putApprovals` or
   * `getApproval`), never a path with ids in it: fit for a metric label.
   */
  endpoint: EndpointName;
  /** The HTTP method, such as `PUT`. */
  method: string;
  /** The path and query as sent, without the base URL. */
  path: string;
}

/**
 * Whether a client retries a failure, for a request of the given repeatability: `safe` for a request that can be
 * repeated without effect (network errors, timeouts, 5xx, 429, 408 and 425: what can succeed later), `unsent` for
 * one that may be repeated only when it provably never reached the server. Any other 4xx is a refusal that the same
 * request would meet again.
 */
export function isRetryable(error: unknown, repeatability: Repeatability): error is RetryableError {
  if (error instanceof NetworkError) return repeatability === 'safe' || error.unsent;
  if (repeatability === 'unsent') return false;
  return (
    error instanceof TimeoutError ||
    error instanceof RateLimitedError ||
    error instanceof ServerError ||
    (error instanceof ApiError && error.code === 'api' && RETRYABLE_STATUSES.has(error.status))
  );
}

// 408 Request Timeout and 425 Too Early: the service asks for the same request again later.
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425]);

/** The wait a failure asks for before a retry, from its `Retry-After` header, when it said. */
function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RateLimitedError || error instanceof ServerError ? error.retryAfterMs : undefined;
}

/**
 * Reads a `Retry-After` header, in seconds or as an HTTP date, into milliseconds from `now`.
 * Returns `undefined` when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, `policy.retries` retries are spent, or the next wait
 * would pass `policy.maxRetryTimeMs`, counted on the monotonic clock. Rejects with the last failure, or with
 * `signal.reason` when aborted.
 * `onRetry` hears of each retry before its wait, never of a failure that ends the call.
 */
export async function withRetry<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  repeatability: Repeatability,
  signal: AbortSignal | undefined,
  onRetry?: (retry: RetryAttempt) => void,
): Promise<T> {
  // The monotonic clock: a step of the wall clock neither spends nor refills the budget.
  const startedAt = performance.now();
  // Most calls succeed at once, so p-retry (its options, checks and closures) is set up only for a call whose first
  // attempt failed and could be retried, or failed oddly; it replays that failure as its own first attempt, so every
  // rule below applies to it as to any other.
  let first: { error: unknown } | undefined;
  try {
    const result = await attempt();
    signal?.throwIfAborted();
    return result;
  } catch (error) {
    const final = policy.retries === 0 || !isRetryable(error, repeatability);
    if (final && error instanceof Error && !signal?.aborted) throw error;
    first = { error };
  }
  const replayed = first;
  const again = () => {
    if (first === undefined) return attempt();
    first = undefined;
    return Promise.reject(replayed.error);
  };
  return pRetry(again, {
    retries: policy.retries,
    // The waiting happens in onFailedAttempt (full jitter, Retry-After), so p-retry's own backoff is off.
    minTimeout: 0,
    maxTimeout: 0,
    factor: 1,
    ...(signal ? { signal } : {}),
    shouldRetry: ({ error }) => isRetryable(error, repeatability),
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      if (retriesLeft === 0 || !isRetryable(error, repeatability)) return;
      const delay =
        retryAfterOf(error) ??
        backoffDelay(attemptNumber - 1, {
          baseMs: policy.baseDelayMs,
          maxMs: policy.maxDelayMs,
          jitter: 'full',
          random: policy.random,
        });
      if (performance.now() - startedAt + delay > policy.maxRetryTimeMs) throw error;
      onRetry?.({ attempt: attemptNumber, delayMs: delay, reason: RETRY_REASONS[error.code], error });
      await sleep(delay, signal);
    },
  });
}
