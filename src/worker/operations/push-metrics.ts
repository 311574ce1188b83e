/**
 * The push path's Prometheus metrics, on the connector's registry: what its ingress received, the event-to-push
 * lag, the events it missed, whether it is degraded, and the webhook's calls. Listed in `docs/operations.md`.
 * @module
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * What became of a request to the push ingress: `accepted` (verified, and its approvals queued for a lookup),
 * `duplicate` (a delivery id seen within the dedupe window), `refused` (its signature did not verify), `malformed`
 * (verified, but `approvalIds()` threw or answered something other than ids), `too_large` (over the body limit),
 * `not_running` (the worker was starting or stopping: answered 503, for the source to deliver again).
 */
export type PushOutcome = 'accepted' | 'duplicate' | 'refused' | 'malformed' | 'too_large' | 'not_running';

/** Every outcome of a request to the push ingress, as `push_deliveries_total{outcome}` labels it. */
export const PUSH_OUTCOMES: readonly PushOutcome[] = [
  'accepted',
  'duplicate',
  'refused',
  'malformed',
  'too_large',
  'not_running',
];

/** A call of the webhook's lifecycle the kit makes. */
export type WebhookCall = 'register' | 'refresh' | 'exists' | 'unregister';

const WEBHOOK_CALLS: readonly WebhookCall[] = ['register', 'refresh', 'exists', 'unregister'];

/** Upper bounds, in seconds, of the buckets of `approval_connector_push_lag_seconds`. */
export const PUSH_LAG_BUCKETS: readonly number[] = Object.freeze([
  0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300,
]);

/** The names of the push path's metrics, without the prefix. */
export const PUSH_METRIC_NAMES: readonly string[] = [
  'push_deliveries_total',
  'push_overflows_total',
  'push_lag_seconds',
  'push_missed_total',
  'push_degraded',
  'push_webhook_calls_total',
  'push_webhook_expiry_seconds',
];

/** The push path's metrics, one small method per event. Recording never throws. */
export class PushMetrics {
  readonly #deliveries: Counter<'outcome'>;
  readonly #overflows: Counter;
  readonly #lag: Histogram;
  readonly #missed: Counter;
  readonly #degraded: Gauge;
  readonly #webhookCalls: Counter<'call' | 'outcome'>;
  readonly #webhookExpiry: Gauge;
  #webhookExpiresAt: number | undefined;

  constructor(registry: Registry, prefix: string, now: () => number) {
    const registers = [registry];
    this.#deliveries = new Counter({
      name: `${prefix}push_deliveries_total`,
      help: 'Requests to the push ingress, by what became of them.',
      labelNames: ['outcome'] as const,
      registers,
    });
    // Every outcome is shown from the start, so that an alert on its increase sees the first one.
    for (const outcome of PUSH_OUTCOMES) this.#deliveries.inc({ outcome }, 0);
    this.#overflows = new Counter({
      name: `${prefix}push_overflows_total`,
      help: 'Approvals a delivery named that the full lookup queue left to the scheduled sync.',
      registers,
    });
    this.#lag = new Histogram({
      name: `${prefix}push_lag_seconds`,
      help: 'Time from the receipt of a delivery to the service acknowledging the lookup of its approvals.',
      buckets: [...PUSH_LAG_BUCKETS],
      registers,
    });
    this.#missed = new Counter({
      name: `${prefix}push_missed_total`,
      help: 'Changes a sync run or reconciliation found that no event of the push path announced.',
      registers,
    });
    this.#degraded = new Gauge({
      name: `${prefix}push_degraded`,
      help: '1 while push is quiet and the sync keeps finding changes it never announced, 0 otherwise.',
      registers,
    });
    this.#degraded.set(0);
    this.#webhookCalls = new Counter({
      name: `${prefix}push_webhook_calls_total`,
      help: "Calls of the webhook's lifecycle, by call and outcome (after the kit's retries).",
      labelNames: ['call', 'outcome'] as const,
      registers,
    });
    for (const call of WEBHOOK_CALLS) {
      this.#webhookCalls.inc({ call, outcome: 'success' }, 0);
      this.#webhookCalls.inc({ call, outcome: 'failure' }, 0);
    }
    this.#webhookExpiry = new Gauge({
      name: `${prefix}push_webhook_expiry_seconds`,
      help: 'Seconds until the registered webhook expires in the source; absent without one, or one that does not.',
      registers,
      collect: () => {
        if (this.#webhookExpiresAt === undefined) this.#webhookExpiry.remove();
        else this.#webhookExpiry.set((this.#webhookExpiresAt - now()) / 1000);
      },
    });
  }

  /** Counts a request to the ingress by its outcome. */
  delivery(outcome: PushOutcome): void {
    this.#deliveries.inc({ outcome });
  }

  /** Counts approvals the lookup queue had no room for. */
  overflowed(count: number): void {
    if (count > 0) this.#overflows.inc(count);
  }

  /** Observes the time from a delivery's receipt to its lookup's push, in seconds. */
  lag(seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.#lag.observe(seconds);
  }

  /** Counts changes the sync found that no event announced. */
  missed(count: number): void {
    if (count > 0) this.#missed.inc(count);
  }

  /** Sets whether push is degraded. */
  degraded(isDegraded: boolean): void {
    this.#degraded.set(isDegraded ? 1 : 0);
  }

  /** Counts a call of the webhook's lifecycle that ended, after its retries. */
  webhookCall(call: WebhookCall, outcome: 'success' | 'failure'): void {
    this.#webhookCalls.inc({ call, outcome });
  }

  /** Records when the registered webhook expires; `undefined` without one, or one that does not. */
  webhookExpiresAt(expiresAt: Date | undefined): void {
    const time = expiresAt?.getTime();
    this.#webhookExpiresAt = time === undefined || Number.isNaN(time) ? undefined : time;
  }
}
