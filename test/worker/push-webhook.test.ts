import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PushContext, WebhookLifecycle, WebhookRegistration } from '../../src/connector/index.js';
import { ConnectorMetrics, createLogger } from '../../src/worker/operations/index.js';
import { WebhookKeeper } from '../../src/worker/push/webhook.js';
import type { SavedWebhook } from '../../src/worker/sync/index.js';

const DAY = 86_400_000;
const URL_A = 'https://connector.example.com/push';

/** The connector state a keeper saves its webhook in, as the worker's state store holds it. */
class Store {
  saved: SavedWebhook | undefined;
  writes = 0;
  get = () => this.saved;
  set = async (webhook: SavedWebhook | undefined) => {
    this.writes += 1;
    this.saved = webhook;
  };
}

/** A source's webhooks, as its API holds them: ids that expire unless refreshed, and every call recorded. */
class SourceWebhooks {
  readonly calls: string[] = [];
  readonly held = new Map<string, number>();
  /** Fails the next calls with these errors, in order. */
  failures: unknown[] = [];
  #next = 1;

  lifecycle(
    options: { refresh?: boolean; exists?: boolean; unregisterOnStop?: boolean } = {},
  ): WebhookLifecycle {
    const { refresh = true, exists = true, unregisterOnStop = false } = options;
    const call = async <T>(name: string, answer: () => T): Promise<T> => {
      this.calls.push(name);
      const failure = this.failures.shift();
      if (failure !== undefined) throw failure;
      return answer();
    };
    const registered = (id: string): WebhookRegistration => ({
      id,
      expiresAt: new Date(this.held.get(id) as number),
      data: { jql: 'project = PO' },
    });
    return {
      register: (target) =>
        call(`register ${target.url}`, () => {
          const id = String(this.#next++);
          this.held.set(id, Date.now() + 30 * DAY);
          return registered(id);
        }),
      ...(refresh && {
        refresh: (registration) =>
          call(`refresh ${registration.id}`, () => {
            this.held.set(registration.id, Date.now() + 30 * DAY);
            return registered(registration.id);
          }),
      }),
      ...(exists && {
        exists: (registration) => call(`exists ${registration.id}`, () => this.held.has(registration.id)),
      }),
      unregister: (registration) =>
        call(`unregister ${registration.id}`, () => {
          this.held.delete(registration.id);
        }),
      unregisterOnStop,
    };
  }
}

let stopping: AbortController;
let metrics: ConnectorMetrics;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 4, 1) });
  stopping = new AbortController();
  metrics = new ConnectorMetrics();
});
afterEach(() => {
  vi.useRealTimers();
});

function keeper(lifecycle: WebhookLifecycle, store: Store, url = URL_A) {
  const context = { signal: stopping.signal } as PushContext<object>;
  return new WebhookKeeper({
    lifecycle,
    url,
    context,
    store,
    refreshBeforeMs: 7 * DAY,
    checkIntervalMs: 3_600_000,
    retry: {
      sourceRetry: { retries: 3, baseDelayMs: 1_000, maxDelayMs: 1_000, maxRetryTimeMs: 60_000 },
      classifyFailure: undefined,
      random: () => 0.5,
    },
    metrics: metrics.push,
    logger: createLogger({ level: 'silent' }),
    now: Date.now,
  });
}

const status = (code: number) => Object.assign(new Error(`the source answered ${code}`), { status: code });

async function calls(metric: string): Promise<string[]> {
  const { body } = await metrics.render();
  return body
    .split('\n')
    .filter((line) => line.startsWith(`approval_connector_${metric}{`) && !line.endsWith(' 0'));
}

describe('the webhook keeper', () => {
  it('registers at start and saves the registration; a restart finds it held and registers nothing', async () => {
    const source = new SourceWebhooks();
    const store = new Store();
    const first = keeper(source.lifecycle(), store);
    first.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(source.calls).toEqual([`register ${URL_A}`]);
    expect(store.saved).toMatchObject({ id: '1', url: URL_A, data: { jql: 'project = PO' } });
    expect(first.report).toMatchObject({ state: 'registered', id: '1' });
    await first.stop(new AbortController().signal);

    const second = keeper(source.lifecycle(), store);
    second.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(source.calls).toEqual([`register ${URL_A}`, 'exists 1']);
    expect(second.report.state).toBe('registered');
    await second.stop(new AbortController().signal);
  });

  it('refreshes the webhook before it expires, and registers it again where the source cannot refresh', async () => {
    const source = new SourceWebhooks();
    const kept = keeper(source.lifecycle({ exists: false }), new Store());
    kept.start();
    await vi.advanceTimersByTimeAsync(0);
    // 30-day webhooks, refreshed 7 days before: after 23 days, not before.
    await vi.advanceTimersByTimeAsync(23 * DAY - 1_000);
    expect(source.calls).toEqual([`register ${URL_A}`]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(source.calls).toEqual([`register ${URL_A}`, 'refresh 1']);
    await vi.advanceTimersByTimeAsync(23 * DAY);
    expect(source.calls).toEqual([`register ${URL_A}`, 'refresh 1', 'refresh 1']);
    await kept.stop(new AbortController().signal);

    const plain = new SourceWebhooks();
    const registering = keeper(plain.lifecycle({ exists: false, refresh: false }), new Store());
    registering.start();
    await vi.advanceTimersByTimeAsync(23 * DAY);
    expect(plain.calls).toEqual([`register ${URL_A}`, `register ${URL_A}`]);
    await registering.stop(new AbortController().signal);
  });

  it('registers again when the source has forgotten the webhook, at the next check or when asked', async () => {
    const source = new SourceWebhooks();
    const kept = keeper(source.lifecycle(), new Store());
    kept.start();
    await vi.advanceTimersByTimeAsync(0);
    source.held.clear();
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(source.calls).toEqual([`register ${URL_A}`, 'exists 1', `register ${URL_A}`]);
    source.held.clear();
    // Push turned degraded: checked at once.
    kept.check();
    await vi.advanceTimersByTimeAsync(0);
    expect(source.calls.slice(3)).toEqual(['exists 2', `register ${URL_A}`]);
    await kept.stop(new AbortController().signal);
  });

  it('retries a call that may succeed later, and says when one fails for good, then tries again later', async () => {
    const source = new SourceWebhooks();
    source.failures = [status(503), status(503)];
    const kept = keeper(source.lifecycle(), new Store());
    kept.start();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(source.calls).toHaveLength(3);
    expect(kept.report.state).toBe('registered');

    const refused = new SourceWebhooks();
    // An API token's user may not register dynamic webhooks: a 403 is not retried.
    refused.failures = [status(403)];
    const failing = keeper(refused.lifecycle(), new Store());
    failing.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(refused.calls).toEqual([`register ${URL_A}`]);
    expect(failing.report.state).toBe('failed');
    expect(await calls('push_webhook_calls_total')).toEqual([
      'approval_connector_push_webhook_calls_total{call="register",outcome="success"} 1',
      'approval_connector_push_webhook_calls_total{call="register",outcome="failure"} 1',
    ]);
    // An hour on, the next round succeeds.
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(failing.report.state).toBe('registered');
    await Promise.all([kept.stop(stopping.signal), failing.stop(stopping.signal)]);
  });

  it('refuses an answer of register() that is not a registration', async () => {
    const lifecycle: WebhookLifecycle = { register: async () => ({ id: '' }) };
    const kept = keeper(lifecycle, new Store());
    kept.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(kept.report.state).toBe('failed');
    await kept.stop(stopping.signal);
  });

  it('unregisters on a clean stop only where the source wants it', async () => {
    for (const unregisterOnStop of [false, true]) {
      const source = new SourceWebhooks();
      const store = new Store();
      const kept = keeper(source.lifecycle({ unregisterOnStop }), store);
      kept.start();
      await vi.advanceTimersByTimeAsync(0);
      await kept.stop(new AbortController().signal);
      expect(source.calls.at(-1)).toBe(unregisterOnStop ? 'unregister 1' : `register ${URL_A}`);
      expect(store.saved === undefined).toBe(unregisterOnStop);
    }
  });

  it('moves the webhook when the push URL changed: unregisters the old one, registers at the new', async () => {
    const source = new SourceWebhooks();
    const store = new Store();
    const first = keeper(source.lifecycle(), store);
    first.start();
    await vi.advanceTimersByTimeAsync(0);
    await first.stop(new AbortController().signal);
    const moved = keeper(source.lifecycle(), store, 'https://elsewhere.example.com/push');
    moved.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(source.calls).toEqual([
      `register ${URL_A}`,
      'unregister 1',
      'register https://elsewhere.example.com/push',
    ]);
    expect(store.saved).toMatchObject({ id: '2', url: 'https://elsewhere.example.com/push' });
    await moved.stop(new AbortController().signal);
  });
});
