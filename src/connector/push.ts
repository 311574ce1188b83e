/**
 * The push path beside the source, as the author declares it: how the kit checks that a delivery of the source is
 * genuine, which approvals it names, and, optionally, the calls that keep the source's webhook registered. An event
 * is a hint, never the state: the kit re-reads the approvals it names through the source's `lookup()`, in the one
 * queue of lookups the runs after tasks use, and pushes what the source says now. See `docs/push.md`.
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { Secret } from './secret.js';
import type { SourceContext } from './source-context.js';

/** A delivery of the source, as the push ingress received it, before anything parsed it. */
export interface PushDelivery {
  /** The request's body, byte for byte as it came: what a signature is computed over. */
  readonly body: Buffer;
  /**
   * The request's headers, their names in lower case (`x-hub-signature`). A header sent more than once is joined
   * with `, `.
   */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** What the push path's methods get besides their arguments: a source's context, and the webhook secret. */
export interface PushContext<AppState extends object = Record<string, unknown>>
  extends SourceContext<AppState> {
  /**
   * The webhook secret the worker was given (`push.secret`, `PUSH_SECRET`), or `undefined` without one: what a
   * signature is checked with, and what a registration gives the source to sign with.
   */
  readonly secret: Secret | undefined;
}

/** Where the source is to deliver, as the kit gives it to `webhook.register()`. */
export interface WebhookTarget {
  /** The push ingress's address as the source reaches it: the worker's `push.publicUrl`. */
  readonly url: string;
}

/**
 * A webhook as the source registered it: what `register()` and `refresh()` answer. The kit keeps it in its part of
 * connector state, so that a restart finds it rather than registering another, and gives it back to `refresh()`,
 * `exists()` and `unregister()`. It is saved as JSON and logged: never put a secret in it.
 */
export interface WebhookRegistration {
  /** The source's id of the webhook. */
  readonly id: string;
  /**
   * When the source forgets the webhook unless it is refreshed (Jira's dynamic webhooks: 30 days); `undefined`
   * when it keeps it. The kit refreshes it before then.
   */
  readonly expiresAt?: Date | string;
  /** Anything else the other calls need, as JSON. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/**
 * The calls that keep the source's webhook: the author writes them, the kit decides when to make them (at start,
 * before expiry, when the source has forgotten it, on a clean stop), retries them, and says when they fail.
 */
export interface WebhookLifecycle<AppState extends object = Record<string, unknown>> {
  /**
   * Registers a webhook delivering to `target.url`, or answers the one the source holds for it already: the kit
   * calls it at start when no registration is saved, or when the saved one is gone, so with several workers, or a
   * worker killed before it saved, it may be called twice for one target.
   */
  register(target: WebhookTarget, context: PushContext<AppState>): Promise<WebhookRegistration>;
  /**
   * Extends a webhook's life, answering its new `expiresAt`. Called before `expiresAt` passes (see
   * `push.webhook.refreshBeforeMs`). Without it, an expiring webhook is registered again.
   */
  refresh?(registration: WebhookRegistration, context: PushContext<AppState>): Promise<WebhookRegistration>;
  /**
   * Whether the source still holds the webhook. Called at start for a saved registration, every
   * `push.webhook.checkIntervalMs`, and when push goes quiet while the schedule finds changes; `false` registers
   * it again. Without it, the kit trusts the saved registration until its `expiresAt`.
   */
  exists?(registration: WebhookRegistration, context: PushContext<AppState>): Promise<boolean>;
  /**
   * Deletes the webhook in the source: when the worker's `push.publicUrl` changed (before registering at the new
   * address), and on a clean stop when `unregisterOnStop` says so.
   */
  unregister?(registration: WebhookRegistration, context: PushContext<AppState>): Promise<void>;
  /**
   * Unregister on a clean stop: only for a source that wants it (a restart then registers again, and the events
   * of the time between are left to the schedule).
   * @default false
   */
  readonly unregisterOnStop?: boolean;
}

/** A push path, as {@link push} declares it: a source's `push`. */
export interface PushDeclaration<AppState extends object = Record<string, unknown>> {
  /**
   * Whether the delivery is genuine: its signature checked over the raw body, before anything parses it, in
   * constant time ({@link verifyHmacSignature} does that). Required: a delivery it refuses (or when it throws) is
   * answered 401 and changes nothing.
   */
  verify(delivery: PushDelivery, context: PushContext<AppState>): boolean | Promise<boolean>;
  /**
   * The ids of the approvals a verified delivery concerns, which the kit then looks up; `[]` when it concerns
   * none. Called after the delivery was answered. A throw marks the delivery malformed: it is counted and dropped.
   */
  approvalIds(
    delivery: PushDelivery,
    context: PushContext<AppState>,
  ): readonly string[] | Promise<readonly string[]>;
  /**
   * The source's id of the delivery, the same on each retry of it (Jira's `x-atlassian-webhook-identifier`): a
   * delivery whose id came within `push.dedupeWindowMs` is answered and dropped. Without it, or when it answers
   * `undefined`, every delivery is taken: a duplicate costs a lookup, never a wrong state.
   */
  deliveryId?(delivery: PushDelivery): string | undefined;
  /** The webhook's lifecycle in the source, when the connector registers it (rather than an administrator). */
  readonly webhook?: WebhookLifecycle<AppState>;
}

/**
 * Declares a source's push path: `verify` (required: a push path without one does not compile), `approvalIds`,
 * and optionally `deliveryId` and the `webhook` calls. It goes beside `lookup()` in `incremental({...})` or
 * `snapshot({...})`, which require `lookup()` with it: the kit reads what an event names through `lookup()`.
 *
 * @example
 * <!-- example: typecheck, because the source delivers to a worker's push port -->
 * ```ts
 * import { incremental, push, verifyHmacSignature } from 'approval-connector-kit';
 *
 * const changes = incremental({
 *   changes: ({ since }) => source.changedSince(since),
 *   lookup: (ids) => source.lookup(ids),
 *   push: push({
 *     verify: ({ body, headers }, { secret }) =>
 *       secret !== undefined &&
 *       verifyHmacSignature({ secret, body, signature: headers['x-hub-signature'], prefix: 'sha256=' }),
 *     approvalIds: ({ body }) => [String(JSON.parse(body.toString('utf8')).issue.key)],
 *     deliveryId: ({ headers }) => headers['x-atlassian-webhook-identifier'],
 *   }),
 * });
 * ```
 */
export function push<AppState extends object = Record<string, unknown>>(
  declaration: PushDeclaration<AppState>,
): PushDeclaration<AppState> {
  return declaration;
}

/** The digests {@link verifyHmacSignature} computes. */
export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** What {@link verifyHmacSignature} checks. */
export interface HmacSignatureCheck {
  /** The shared secret: a `Secret` (the push context's `secret`), a string or bytes. */
  secret: Secret | string | Buffer;
  /** The raw body, as the delivery's `body` holds it. */
  body: Buffer | string;
  /** The signature as the delivery carried it, a header's value; missing or empty, it is refused. */
  signature: string | undefined;
  /**
   * The digest.
   * @default 'sha256'
   */
  algorithm?: HmacAlgorithm;
  /**
   * How the signature writes the digest; `hex` is read in either case.
   * @default 'hex'
   */
  encoding?: 'hex' | 'base64' | 'base64url';
  /**
   * What comes before the digest in the signature, and must be there: `sha256=` in `X-Hub-Signature`.
   * @default ''
   */
  prefix?: string;
}

/**
 * Whether `signature` is the HMAC of `body` under `secret`: computed over the raw bytes and compared in constant
 * time, so that how long a refusal takes says nothing of how much of a forged signature was right. A missing or
 * malformed signature is `false`; an empty secret, a `ValidationError` (a configuration problem, not a forgery).
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { createHmac } from 'node:crypto';
 * import { verifyHmacSignature } from 'approval-connector-kit';
 *
 * const body = Buffer.from('{"webhookEvent":"jira:issue_updated"}');
 * const signature = `sha256=${createHmac('sha256', 'a-shared-secret-0123').update(body).digest('hex')}`;
 * verifyHmacSignature({ secret: 'a-shared-secret-0123', body, signature, prefix: 'sha256=' }); // true
 * ```
 */
export function verifyHmacSignature(check: HmacSignatureCheck): boolean {
  const { body, signature, algorithm = 'sha256', encoding = 'hex', prefix = '' } = check;
  const key =
    typeof check.secret === 'string' || Buffer.isBuffer(check.secret) ? check.secret : check.secret.reveal();
  if (key.length === 0) {
    throw new ValidationError('HMAC signature check', [
      { path: ['secret'], message: 'Expected a secret that is not empty', code: 'too_small' },
    ]);
  }
  if (typeof signature !== 'string' || !signature.startsWith(prefix)) return false;
  const digest = createHmac(algorithm, key).update(body).digest(encoding);
  const given = signature.slice(prefix.length);
  const expected = Buffer.from(digest, 'utf8');
  const presented = Buffer.from(encoding === 'hex' ? given.toLowerCase() : given, 'utf8');
  // timingSafeEqual needs equal lengths; a presented signature of another length is compared with the expected one
  // itself, so that a refusal for length takes as long as one for content.
  if (presented.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(presented, expected);
}
