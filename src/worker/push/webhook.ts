/**
 * The webhook's lifecycle in the source, as a job of the worker: the author writes the calls, the kit decides when
 * to make them (at start, before expiry, when the source has forgotten it, on a clean stop), retries them, and says
 * when they fail. See `docs/push.md`, "The webhook's lifecycle".
 * @module
 */
import { z } from 'zod';
import { DateTimeInput, JsonObjectInput } from '../../api/index.js';
import type { PushContext, WebhookLifecycle, WebhookRegistration } from '../../connector/index.js';
import { toIssues, ValidationError } from '../../errors.js';
import type { PinoLogger, PushMetrics, WebhookCall } from '../operations/index.js';
import { type SavedWebhook, SourceRetries, type SourceRetryParts } from '../sync/index.js';

/** The webhook as the worker reports it (`worker.pushHealth.webhook`). */
export interface WebhookReport {
  /**
   * `registering` until the first round ends; then `registered`, or `failed` until a later round succeeds; `no
   * address` when there is none to register (`push.publicUrl` unset while the ingress listens on every interface).
   */
  state: 'registering' | 'registered' | 'failed' | 'no address';
  /** The source's id of the webhook, once registered. */
  id: string | undefined;
  /** When the source forgets it unless refreshed (ISO 8601), if it does. */
  expiresAt: string | undefined;
}

/** What a {@link WebhookKeeper} needs. */
export interface WebhookKeeperParts {
  lifecycle: WebhookLifecycle<object>;
  /** Where the source is to deliver: `push.publicUrl`. */
  url: string;
  /** The context of the calls; its `signal` aborts when the worker begins to stop. */
  context: PushContext<object>;
  /** The registration kept in connector state. */
  store: {
    get(): SavedWebhook | undefined;
    set(webhook: SavedWebhook | undefined, signal: AbortSignal): Promise<void>;
  };
  refreshBeforeMs: number;
  checkIntervalMs: number;
  /** How a failed call is retried: the sync's `sourceRetry`, by the failure mapping. */
  retry: Pick<SourceRetryParts, 'sourceRetry' | 'classifyFailure' | 'random'>;
  metrics: PushMetrics;
  logger: PinoLogger;
  /** The wall clock: expiry is the source's. */
  now: () => number;
}

// The longest a timer waits (about 24.8 days): a later refresh is reconsidered then.
const MAX_TIMER_MS = 2 ** 31 - 1;
// The shortest time between rounds: a source that answers a registration already due is not asked again at once.
const MIN_ROUND_GAP_MS = 1_000;

const Registration = z.object({
  id: z.string().min(1),
  expiresAt: DateTimeInput.optional(),
  data: JsonObjectInput.optional(),
});

/** Keeps the source's webhook registered, in rounds: at start, when due, and when asked to check. */
export class WebhookKeeper {
  readonly #parts: WebhookKeeperParts;
  #state: WebhookReport['state'] = 'registering';
  #round: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(parts: WebhookKeeperParts) {
    this.#parts = parts;
  }

  get report(): WebhookReport {
    const saved = this.#state === 'registered' ? this.#parts.store.get() : undefined;
    return { state: this.#state, id: saved?.id, expiresAt: saved?.expiresAt };
  }

  /** Starts the first round: registration at start. */
  start(): void {
    this.check();
  }

  /** Starts a round now, unless one is going on (push turned degraded: the source may have forgotten it). */
  check(): void {
    if (this.#stopped || this.#round !== undefined) return;
    clearTimeout(this.#timer);
    this.#round = this.#keep().finally(() => {
      this.#round = undefined;
      this.#schedule();
    });
  }

  /**
   * Stops the rounds, waits for the one going on (the stopping signal cuts its calls short), and, where the source
   * wants it (`unregisterOnStop`), unregisters the webhook, within `signal`.
   */
  async stop(signal: AbortSignal): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#round;
    const { lifecycle, store, context, logger } = this.#parts;
    const saved = store.get();
    if (!lifecycle.unregisterOnStop || lifecycle.unregister === undefined || saved === undefined) return;
    try {
      await lifecycle.unregister(registrationOf(saved), { ...context, signal });
      this.#parts.metrics.webhookCall('unregister', 'success');
      await store.set(undefined, signal);
      logger.info({ webhookId: saved.id }, 'push webhook unregistered');
    } catch (error) {
      this.#parts.metrics.webhookCall('unregister', 'failure');
      logger.error({ err: error, webhookId: saved.id }, 'unregistering the push webhook failed');
    }
  }

  async #keep(): Promise<void> {
    try {
      await this.#ensure();
      this.#state = 'registered';
    } catch (error) {
      if (this.#parts.context.signal.aborted) return;
      this.#state = 'failed';
      this.#parts.logger.error(
        { err: error, retryInMs: this.#parts.checkIntervalMs },
        'keeping the push webhook registered failed; the schedule carries the changes until a later try succeeds',
      );
    }
  }

  /** One round: the saved webhook checked, refreshed when due, or registered when there is none (any more). */
  async #ensure(): Promise<void> {
    const { lifecycle, url, context, store, logger } = this.#parts;
    let saved = store.get();
    if (saved !== undefined && saved.url !== url) {
      logger.info({ webhookId: saved.id }, 'the push URL changed: registering the webhook at the new one');
      const previous = saved;
      if (lifecycle.unregister !== undefined) {
        await this.#call('unregister', () => lifecycle.unregister?.(registrationOf(previous), context)).catch(
          (error: unknown) =>
            logger.warn({ err: error }, 'unregistering the webhook at the old push URL failed'),
        );
      }
      saved = undefined;
    }
    if (saved !== undefined && lifecycle.exists !== undefined) {
      const registration = registrationOf(saved);
      if (!(await this.#call('exists', () => lifecycle.exists?.(registration, context)))) {
        logger.warn(
          { webhookId: saved.id },
          'the source no longer holds the push webhook: registering it again',
        );
        saved = undefined;
      }
    }
    if (saved !== undefined && this.#refreshAt(saved) <= this.#parts.now()) {
      const registration = registrationOf(saved);
      const refresh = lifecycle.refresh;
      saved =
        refresh === undefined
          ? undefined
          : this.#saved('refresh', await this.#call('refresh', () => refresh(registration, context)));
    }
    if (saved === undefined) {
      saved = this.#saved(
        'register',
        await this.#call('register', () => lifecycle.register({ url }, context)),
      );
      logger.info({ webhookId: saved.id, expiresAt: saved.expiresAt }, 'push webhook registered');
    }
    this.#parts.metrics.webhookExpiresAt(
      saved.expiresAt === undefined ? undefined : new Date(saved.expiresAt),
    );
    if (saved !== store.get()) {
      await store.set(saved, context.signal).catch((error: unknown) => {
        logger.warn(
          { err: error },
          'saving the push webhook in connector state failed; saved with the next write',
        );
      });
    }
  }

  /** Makes one call of the lifecycle, retried as a read of the source is (what may succeed later), and counts it. */
  async #call<T>(call: WebhookCall, run: () => Promise<T> | undefined): Promise<T> {
    const { retry, context, logger, metrics } = this.#parts;
    const retries = new SourceRetries({
      ...retry,
      signal: context.signal,
      logger,
      retryMessage: `the push webhook's ${call} call failed; calling it again`,
    });
    for (;;) {
      try {
        const value = (await run()) as T;
        metrics.webhookCall(call, 'success');
        return value;
      } catch (error) {
        try {
          await retries.wait(error);
        } catch {
          metrics.webhookCall(call, 'failure');
          throw error;
        }
      }
    }
  }

  /** What `register()` or `refresh()` answered, checked, as it is saved. */
  #saved(call: WebhookCall, answer: WebhookRegistration): SavedWebhook {
    const parsed = Registration.safeParse(answer);
    if (!parsed.success) throw new ValidationError(`webhook ${call}() answer`, toIssues(parsed.error));
    const { id, expiresAt, data } = parsed.data;
    return {
      url: this.#parts.url,
      id,
      ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
      ...(data === undefined ? {} : { data }),
      registeredAt: new Date(this.#parts.now()).toISOString(),
    };
  }

  /** When a webhook is refreshed: `refreshBeforeMs` before it expires, but never later than half way; never without expiry. */
  #refreshAt(saved: SavedWebhook): number {
    if (saved.expiresAt === undefined) return Number.POSITIVE_INFINITY;
    const expiresAt = Date.parse(saved.expiresAt);
    const life = Math.max(0, expiresAt - Date.parse(saved.registeredAt));
    return expiresAt - Math.min(this.#parts.refreshBeforeMs, life / 2);
  }

  /** Arms the next round: after a failure, or for `exists()`, `checkIntervalMs` on; a refresh when it is due. */
  #schedule(): void {
    if (this.#stopped) return;
    const { lifecycle, checkIntervalMs, store, now } = this.#parts;
    const saved = store.get();
    let delayMs = this.#state === 'failed' || lifecycle.exists !== undefined ? checkIntervalMs : Infinity;
    if (this.#state === 'registered' && saved !== undefined) {
      delayMs = Math.min(delayMs, Math.max(0, this.#refreshAt(saved) - now()));
    }
    if (!Number.isFinite(delayMs)) return;
    this.#timer = setTimeout(() => this.check(), Math.min(Math.max(delayMs, MIN_ROUND_GAP_MS), MAX_TIMER_MS));
    this.#timer.unref();
  }
}

function registrationOf(saved: SavedWebhook): WebhookRegistration {
  const { id, expiresAt, data } = saved;
  return { id, ...(expiresAt === undefined ? {} : { expiresAt }), ...(data === undefined ? {} : { data }) };
}
