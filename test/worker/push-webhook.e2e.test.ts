import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { WebhookLifecycle } from '../../src/connector/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import { openHarness } from './support/harness.js';
import { captureLogs } from './support/logs.js';
import type { MemorySource } from './support/memory-source.js';
import { PushConnector, WEBHOOK_SECRET } from './support/push-connector.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1'] })));

const PUBLIC_URL = 'https://connector.example.com/push';

/** A source's webhook API in memory: what it holds, and the calls it was made. */
function sourceWebhooks() {
  const calls: string[] = [];
  const held = new Set<string>();
  let next = 1;
  const lifecycle: WebhookLifecycle = {
    register: async ({ url }, { secret }) => {
      calls.push(`register ${url} ${secret === undefined ? 'unsigned' : 'signed'}`);
      const id = `W-${next++}`;
      held.add(id);
      return { id, expiresAt: new Date(Date.now() + 30 * 86_400_000) };
    },
    exists: async ({ id }) => {
      calls.push(`exists ${id}`);
      return held.has(id);
    },
  };
  return { calls, held, lifecycle };
}

const options = { push: { secret: WEBHOOK_SECRET, publicUrl: PUBLIC_URL } };

describe("a push path's webhook", () => {
  it('is registered at start for push.publicUrl and kept in connector state; a restarted worker registers none', async () => {
    const webhooks = sourceWebhooks();
    const first = await harness.start(new PushConnector(source, webhooks.lifecycle), options);
    await vi.waitFor(() => expect(first.pushHealth?.webhook?.state).toBe('registered'));
    expect(webhooks.calls).toEqual([`register ${PUBLIC_URL} signed`]);
    expect(harness.state().state).toMatchObject({
      kit: { push: { webhook: { id: 'W-1', url: PUBLIC_URL } } },
    });
    await first.stop();

    const second = await harness.start(new PushConnector(source, webhooks.lifecycle), options);
    await vi.waitFor(() => expect(second.pushHealth?.webhook?.state).toBe('registered'));
    expect(webhooks.calls).toEqual([`register ${PUBLIC_URL} signed`, 'exists W-1']);
    expect(second.pushHealth?.webhook?.id).toBe('W-1');
  });

  it('is registered again at start when the source has forgotten it', async () => {
    const webhooks = sourceWebhooks();
    const first = await harness.start(new PushConnector(source, webhooks.lifecycle), options);
    await vi.waitFor(() => expect(first.pushHealth?.webhook?.state).toBe('registered'));
    await first.stop();
    webhooks.held.clear();
    const second = await harness.start(new PushConnector(source, webhooks.lifecycle), options);
    await vi.waitFor(() => expect(second.pushHealth?.webhook?.id).toBe('W-2'));
    expect(harness.state().state).toMatchObject({ kit: { push: { webhook: { id: 'W-2' } } } });
  });

  it('that the source refuses to register fails in the report, a metric and a log line, and the worker runs on', async () => {
    const { lines, destination } = captureLogs();
    const refusing: WebhookLifecycle = {
      register: async () => {
        throw Object.assign(new Error('OAuth 2.0 or Connect apps only'), { status: 403 });
      },
    };
    const worker = await harness.start(new PushConnector(source, refusing), {
      ...options,
      logger: { level: 'info', destination },
    });
    await vi.waitFor(() => expect(worker.pushHealth?.webhook?.state).toBe('failed'));
    expect(worker.lifecycle).toBe('running');
    const { body } = await worker.metrics.render();
    expect(body).toContain(
      'approval_connector_push_webhook_calls_total{call="register",outcome="failure"} 1',
    );
    expect(lines.find((line) => line.level === 50)?.msg).toBe(
      'keeping the push webhook registered failed; the schedule carries the changes until a later try succeeds',
    );
  });

  it("without push.publicUrl, is registered for the ingress's own address, and on every interface not at all", async () => {
    const webhooks = sourceWebhooks();
    const local = await harness.start(new PushConnector(source, webhooks.lifecycle), {
      push: { secret: WEBHOOK_SECRET },
    });
    await vi.waitFor(() => expect(local.pushHealth?.webhook?.state).toBe('registered'));
    expect(webhooks.calls).toEqual([`register ${local.pushHealth?.url} signed`]);
    await local.stop();

    const { lines, destination } = captureLogs();
    const everywhere = await harness.start(new PushConnector(source, webhooks.lifecycle), {
      push: { secret: WEBHOOK_SECRET, host: '0.0.0.0' },
      logger: { level: 'info', destination },
    });
    expect(everywhere.pushHealth?.webhook).toEqual({
      state: 'no address',
      id: undefined,
      expiresAt: undefined,
    });
    expect(lines.map((line) => line.msg)).toContain(
      'the push webhook is not registered: set push.publicUrl (PUSH_PUBLIC_URL) to the address the source delivers to',
    );
    expect(webhooks.calls).toHaveLength(1);
  });
});
