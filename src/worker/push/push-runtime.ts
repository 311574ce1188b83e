/**
 * The push path as a worker runs it: the ingress a source delivers to, what it answers (a verified delivery 2xx at
 * once, a forged one 401, a duplicate dropped), the lookups it asks for in the worker's one queue, push health and
 * the webhook's lifecycle. See `docs/push.md`.
 * @module
 */
import { z } from 'zod';
import { ApprovalId } from '../../api/index.js';
import {
  type Connector,
  type PushContext,
  type PushDeclaration,
  type PushDelivery,
  Secret,
  type StateAccess,
} from '../../connector/index.js';
import type { SavedPushHealth } from '../../internal/saved-push-health.js';
import type { SpanAttributes, TraceSpan } from '../../internal/tracing.js';
import { componentLogger, type PinoLogger, type PushMetrics, type PushOutcome } from '../operations/index.js';
import type { LookupQueue, LookupRequest, SourceRetryParts, StateStore } from '../sync/index.js';
import { DeliveryIds } from './delivery-ids.js';
import { PushHealth, type PushHealthReport } from './health.js';
import { type IngressAnswer, PushIngress } from './ingress.js';
import type { ResolvedPushOptions } from './options.js';
import { WebhookKeeper, type WebhookReport } from './webhook.js';

/** The push path as the worker reports it (`worker.pushHealth`): its health, its webhook, its queue. */
export interface PushReport extends PushHealthReport {
  /** Where the ingress takes deliveries (`http://127.0.0.1:9465/push`), while it listens. */
  url: string | undefined;
  /** The webhook, when the push path declares its lifecycle. */
  webhook: WebhookReport | undefined;
  /** Approvals waiting for a lookup, in the queue the push path shares with the runs after tasks. */
  queued: number;
}

/** What a {@link PushRuntime} needs of the worker. */
export interface PushRuntimeParts {
  declaration: PushDeclaration<object>;
  options: ResolvedPushOptions;
  appState: StateAccess<object>;
  /** Connector state: the webhook's registration is kept in the kit's part. */
  state: StateStore<object>;
  metrics: PushMetrics;
  logger: PinoLogger;
  /** Aborted when the worker begins to stop. */
  signal: AbortSignal;
  /** Whether the worker runs: before and after, a delivery is answered 503, for the source to deliver it again. */
  running: () => boolean;
  retry: Pick<SourceRetryParts, 'sourceRetry' | 'classifyFailure' | 'random'>;
  now: () => number;
}

// Delivery ids remembered at most, whatever the window: at 100 deliveries a second, half an hour of them.
const DELIVERY_IDS_LIMIT = 200_000;
// Addresses that are every interface: no address to give a source.
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);
// A refusal or an overflow is logged once, then at most once a minute, with the count since: a flood of forged
// requests must not flood the logs.
const REPEATED_LOG_MS = 60_000;

const ApprovalIds = z.array(ApprovalId).readonly();
const NO_ADDRESS: WebhookReport = { state: 'no address', id: undefined, expiresAt: undefined };

/** The push path of a worker that syncs: created with the worker, listening from {@link open} to {@link close}. */
export class PushRuntime {
  /** Whether the events announce what the sync finds changed: the sync runner's observer. */
  readonly health: PushHealth;
  readonly #parts: PushRuntimeParts;
  readonly #logger: PinoLogger;
  readonly #context: PushContext<object>;
  readonly #ids: DeliveryIds;
  readonly #ingress: PushIngress;
  /** What became of each delivery taken: settled once its lookup ran, or it was dropped. */
  readonly #pending = new Set<Promise<void>>();
  readonly #refusals = new RepeatedLog();
  readonly #overflows = new RepeatedLog();
  #queue: LookupQueue | undefined;
  #keeper: WebhookKeeper | undefined;
  #url: string | undefined;

  /**
   * The push path of a worker with these options, where the connector declares one, the worker syncs and `push` is
   * not `false`; `undefined` otherwise.
   */
  static of(
    connector: Connector<object>,
    settings: {
      push: ResolvedPushOptions | false;
      sync: { enabled: boolean; sourceRetry: SourceRetryParts['sourceRetry'] };
      random: () => number;
      now: () => number;
    },
    parts: Pick<PushRuntimeParts, 'state' | 'appState' | 'metrics' | 'logger' | 'signal' | 'running'>,
  ): PushRuntime | undefined {
    const { push: options, sync, random, now } = settings;
    const declaration = connector.source.push;
    if (!sync.enabled || declaration === undefined) return undefined;
    if (options === false) {
      componentLogger(parts.logger, 'push').info(
        'the connector has a push path, but its ingress is off: set PUSH_PORT (push.port) to take its events',
      );
      return undefined;
    }
    const classifyFailure = connector.classifyFailure?.bind(connector);
    const retry = { sourceRetry: sync.sourceRetry, classifyFailure, random };
    return new PushRuntime({ ...parts, declaration, options, retry, now });
  }

  constructor(parts: PushRuntimeParts) {
    this.#parts = parts;
    const { options, metrics, signal, appState } = parts;
    this.#logger = componentLogger(parts.logger, 'push');
    const secret = options.secret === undefined ? undefined : new Secret(options.secret);
    this.#context = { signal, logger: this.#logger, state: appState, secret };
    this.#ids = new DeliveryIds({ windowMs: options.dedupeWindowMs, limit: DELIVERY_IDS_LIMIT });
    this.health = new PushHealth({
      graceMs: options.missedGraceMs,
      degradedAfterMissed: options.degradedAfterMissed,
      metrics,
      logger: this.#logger,
      now: parts.now,
      onDegraded: () => this.#keeper?.check(),
      save: (health, writeNow) => this.#saveHealth(health, writeNow),
    });
    this.#ingress = new PushIngress({
      ...options,
      receive: (delivery, span) => this.#receive(delivery, span),
      tooLarge: (span) => this.#outcome(span, 'too_large'),
      logger: this.#logger,
    });
  }

  /** Where the ingress takes deliveries (`http://127.0.0.1:9465/push`), while it listens. */
  get url(): string | undefined {
    return this.#url;
  }

  get report(): PushReport {
    const queued = this.#queue?.waiting ?? 0;
    const webhook =
      this.#keeper?.report ??
      (this.#parts.declaration.webhook === undefined || this.#queue === undefined ? undefined : NO_ADDRESS);
    return { url: this.#url, ...this.health.report, webhook, queued };
  }

  /** Opens the ingress: it answers 503 until {@link begin}. A port in use is a `PortInUseError`. */
  async open(): Promise<void> {
    const { url } = await this.#ingress.start();
    this.#url = `${url}${this.#parts.options.path}`;
    this.#logger.info({ url: this.#url }, 'push ingress listening');
  }

  /** Takes deliveries from now on, into the worker's queue of lookups, and keeps the webhook registered. */
  begin(queue: LookupQueue): void {
    this.#queue = queue;
    // What the queue is asked to look up is known to the kit: the events' approvals, and those its tasks decided,
    // which a source need not announce.
    queue.observe((approvalIds) => this.health.announced(approvalIds));
    // Live with the ingress: a webhook the source will not register shows as missed changes, then degraded.
    this.health.live();
    const { declaration, options } = this.#parts;
    if (declaration.webhook === undefined) return;
    const url = options.publicUrl ?? (WILDCARD_HOSTS.has(options.host) ? undefined : this.#url);
    if (url === undefined) {
      this.#logger.warn(
        'the push webhook is not registered: set push.publicUrl (PUSH_PUBLIC_URL) to the address the source delivers to',
      );
      return;
    }
    const { state, metrics, retry, now } = this.#parts;
    const store = { get: () => state.webhook, set: state.setWebhook.bind(state) };
    const { refreshBeforeMs, checkIntervalMs } = options.webhook;
    this.#keeper = new WebhookKeeper({
      lifecycle: declaration.webhook,
      url,
      context: this.#context,
      store,
      refreshBeforeMs,
      checkIntervalMs,
      retry,
      metrics,
      logger: this.#logger,
      now,
    });
    this.#keeper.start();
  }

  /** Resolves once every delivery taken so far has been looked up, or dropped. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Stops the ingress at once; then the webhook's rounds (unregistering it where the source wants it), within `deadline`. */
  async close(deadline: AbortSignal): Promise<void> {
    const closed = this.#ingress.close();
    this.health.stop();
    await this.#keeper?.stop(deadline);
    await closed;
    this.#url = undefined;
  }

  /** Keeps push health in connector state, for the console; a failed write is written with the next one. */
  #saveHealth(health: SavedPushHealth, writeNow: boolean): void {
    const { state, signal } = this.#parts;
    state.setPushHealth(health);
    if (!writeNow) return;
    state.flush(signal).catch((error: unknown) => {
      if (signal.aborted) return;
      this.#logger.warn(
        { err: error },
        'saving push health in connector state failed; saved with the next write',
      );
    });
  }

  async #receive(delivery: PushDelivery, span: TraceSpan): Promise<IngressAnswer> {
    const queue = this.#queue;
    if (queue === undefined || !this.#parts.running()) {
      this.#outcome(span, 'not_running');
      return { status: 503, outcome: 'not running' };
    }
    if (!(await this.#verified(delivery))) {
      this.#outcome(span, 'refused');
      this.#refusals.log((count) =>
        this.#logger.warn({ refused: count }, 'push deliveries refused: their signature did not verify'),
      );
      return { status: 401, outcome: 'refused' };
    }
    this.health.delivered();
    const deliveryId = this.#deliveryId(delivery);
    span.set({ 'approval_connector.push.delivery_id': deliveryId });
    if (deliveryId !== undefined && this.#ids.seenBefore(deliveryId)) {
      this.#outcome(span, 'duplicate');
      this.#logger.debug({ deliveryId }, 'push delivery seen before: dropped');
      return { status: 200, outcome: 'duplicate' };
    }
    const receivedAt = performance.now();
    const queued = this.#queued(queue, delivery, deliveryId, span);
    const taken = queued.then(async (request) => {
      if (request !== undefined && (await request.served)) {
        this.#parts.metrics.lag((performance.now() - receivedAt) / 1000);
      }
    });
    this.#pending.add(taken);
    void taken.finally(() => this.#pending.delete(taken));
    return { status: 202, outcome: 'accepted', settled: queued.then(() => {}) };
  }

  /** Counts what became of a request to the ingress, and says it on its span. */
  #outcome(span: TraceSpan, outcome: PushOutcome, attributes: SpanAttributes = {}): void {
    this.#parts.metrics.delivery(outcome);
    span.set({ 'approval_connector.push.outcome': outcome, ...attributes });
  }

  /** Whether the author's `verify()` said `true`; a throw is a refusal. */
  async #verified(delivery: PushDelivery): Promise<boolean> {
    try {
      return (await this.#parts.declaration.verify(delivery, this.#context)) === true;
    } catch {
      return false;
    }
  }

  #deliveryId(delivery: PushDelivery): string | undefined {
    try {
      const id = this.#parts.declaration.deliveryId?.(delivery);
      return typeof id === 'string' && id !== '' ? id : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * After the answer: the approvals the delivery names, announced, then queued for a lookup, which links to the
   * delivery's span. Resolves with the queue's request, `undefined` when nothing was queued; never rejects.
   */
  async #queued(
    queue: LookupQueue,
    delivery: PushDelivery,
    deliveryId: string | undefined,
    span: TraceSpan,
  ): Promise<LookupRequest | undefined> {
    let approvalIds: readonly string[];
    try {
      approvalIds = ApprovalIds.parse(await this.#parts.declaration.approvalIds(delivery, this.#context));
    } catch (error) {
      this.#outcome(span, 'malformed');
      // Neither the error's message nor the body: a parser's message quotes the text it could not read.
      this.#logger.warn(
        { deliveryId, error: (error as Error | undefined)?.name },
        'a verified push delivery named no approvals that could be read: dropped',
      );
      return undefined;
    }
    this.#outcome(span, 'accepted', { 'approval_connector.push.approvals': approvalIds.length });
    this.#logger.debug({ deliveryId, approvals: approvalIds.length }, 'push delivery accepted');
    if (approvalIds.length === 0) return undefined;
    // The queue tells push health of the event's approvals, also of those it has no room for.
    const request = queue.request(approvalIds, this.#parts.options.delayMs, span.context);
    const { overflow } = request;
    if (overflow.length === 0) return request;
    span.set({ 'approval_connector.push.overflow': overflow.length });
    this.#parts.metrics.overflowed(overflow.length);
    this.#overflows.log(
      (count) =>
        this.#logger.warn(
          { overflow: count },
          'the lookup queue is full: approvals left to the scheduled sync',
        ),
      overflow.length,
    );
    return overflow.length < approvalIds.length ? request : undefined;
  }
}

/** A line logged at the first of a kind of event, then at most once every {@link REPEATED_LOG_MS}, with a count. */
class RepeatedLog {
  #count = 0;
  #loggedAt = Number.NEGATIVE_INFINITY;

  log(line: (count: number) => void, weight = 1): void {
    this.#count += weight;
    const now = performance.now();
    if (now - this.#loggedAt < REPEATED_LOG_MS) return;
    line(this.#count);
    this.#count = 0;
    this.#loggedAt = now;
  }
}
