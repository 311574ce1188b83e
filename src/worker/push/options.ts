/**
 * The options of the push path's runtime: the ingress, the queue it feeds, push health and the webhook's
 * lifecycle. Part of the worker's options (`push`), checked with them.
 * @module
 */
import { z } from 'zod';
import { host, integer, port } from '../../internal/options.js';

/** Options of the webhook's lifecycle, when the connector's push path declares one. */
export interface WebhookOptions {
  /**
   * How long before a registration's `expiresAt` it is refreshed (or registered again), in milliseconds; never
   * later than half way through its life. Jira's dynamic webhooks live 30 days: refreshed after 23.
   * @default 604800000 (7 days)
   */
  refreshBeforeMs?: number;
  /**
   * How often the kit asks the source whether it still holds the webhook (with `exists()`), and tries again after
   * a call that failed for good, in milliseconds.
   * @default 3600000 (1 hour)
   */
  checkIntervalMs?: number;
}

/**
 * Options of the push path: the ingress a source delivers to, in the worker that syncs, when the connector
 * declares a push path. See `docs/push.md`.
 */
export interface PushOptions {
  /**
   * TCP port of the ingress, its own: never the operations port, which stays off the network the source reaches.
   * `0` picks a free one; read it from the worker's `pushUrl`.
   * @default 9465
   */
  port?: number;
  /**
   * Interface to listen on. In a container, `'0.0.0.0'`, behind the Service and Ingress the source reaches.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * The path deliveries are posted to; any other answers 404.
   * @default '/push'
   */
  path?: string;
  /**
   * The ingress's address as the source reaches it (`https://connector.example.com/push`): what the webhook is
   * registered for, when the push path declares `webhook`. Without it, the ingress's own address
   * (`http://127.0.0.1:9465/push`), which reaches it from the same machine only; listening on every interface
   * (`0.0.0.0`), none: the webhook is then not registered, and a warning says so.
   * @default none
   */
  publicUrl?: string;
  /**
   * The webhook secret: given to the push path's methods as `context.secret` (a `Secret`), to verify deliveries
   * with and to register the webhook with. At least 16 characters; never logged.
   * @default none
   */
  secret?: string;
  /**
   * Bytes of a delivery's body, at most: a larger one is answered 413, unread.
   * @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * How long after a delivery its lookup starts, in milliseconds: the deliveries in between are looked up
   * together, in the queue the runs after tasks use.
   * @default 200
   */
  delayMs?: number;
  /**
   * Approvals that may wait for a lookup, at most: what a full queue cannot take is left to the scheduled sync, and
   * counted (`approval_connector_push_overflows_total`).
   * @default 10000
   */
  queueSize?: number;
  /**
   * How long a delivery id is remembered, in milliseconds: a delivery with the same id within it is answered and
   * dropped. Atlassian retries a delivery for up to 30 minutes.
   * @default 3600000 (1 hour)
   */
  dedupeWindowMs?: number;
  /**
   * How long after a sync run found a change an event may still announce it before it counts as missed, in
   * milliseconds (an event in flight as the run read the source).
   * @default 60000
   */
  missedGraceMs?: number;
  /**
   * Changes missed in a row, with no verified delivery since the first of them, that make push degraded.
   * @default 3
   */
  degradedAfterMissed?: number;
  /**
   * The webhook's lifecycle.
   * @default {}
   */
  webhook?: WebhookOptions;
}

/** An absolute http(s) URL, as a source is given it. */
const publicUrl = z
  .string({ error: 'an absolute http or https URL' })
  .refine((text) => /^https?:$/.test(URL.parse(text)?.protocol ?? ''), {
    error: 'an absolute http or https URL',
  });

/** The schema of {@link PushOptions}: checks them and applies every default. */
export const pushOptionsSchema = z.strictObject({
  port: port().default(9465),
  host: host().default('127.0.0.1'),
  path: z
    .string({ error: 'a path that starts with /' })
    .regex(/^\/[^\s?#]*$/, { error: 'a path that starts with /' })
    .default('/push'),
  publicUrl: publicUrl.optional(),
  secret: z
    .string({ error: 'a string of at least 16 characters' })
    .min(16, { error: 'a string of at least 16 characters' })
    .optional(),
  maxBodyBytes: integer(1, 64 * 1024 * 1024).default(1024 * 1024),
  delayMs: integer(0).default(200),
  queueSize: integer(1).default(10_000),
  dedupeWindowMs: integer(0).default(3_600_000),
  missedGraceMs: integer(0).default(60_000),
  degradedAfterMissed: integer(1).default(3),
  webhook: z
    .strictObject({
      refreshBeforeMs: integer(0).default(7 * 86_400_000),
      checkIntervalMs: integer(1).default(3_600_000),
    })
    .prefault({}),
});

/** Push options with every default applied. */
export type ResolvedPushOptions = z.output<typeof pushOptionsSchema>;

/** The options that are secrets: never shown in a message. */
export const PUSH_SECRET_OPTIONS: readonly string[] = ['secret'];
