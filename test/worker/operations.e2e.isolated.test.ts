import { request } from 'undici';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestHarness } from '../../src/testing/index.js';
import { ConnectorWorker } from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, type MemorySource } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1'] })));

async function get(url: string): Promise<{ status: number; text: string }> {
  const answer = await request(url, { reset: true });
  return { status: answer.statusCode, text: await answer.body.text() };
}

describe('the operations port of a connector', () => {
  it('is off unless asked for', async () => {
    const worker = await harness.start(new MemoryConnector(source));
    expect(worker.operationsUrl).toBeUndefined();
  });

  it('answers /healthz and /readyz with 200 while running, on the port it picked', async () => {
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
    });
    const url = worker.operationsUrl;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);
    expect(await get(`${url}/healthz`)).toEqual({
      status: 200,
      text: JSON.stringify({ status: 'ok', state: 'running' }),
    });
    const readiness = await get(`${url}/readyz`);
    expect(readiness.status).toBe(200);
    // Before any run: the sync's parts say so, the poller polls, and this connector has no key.
    expect(JSON.parse(readiness.text)).toEqual({
      status: 'ready',
      checks: {
        sync: { status: 'ok', lastRun: null, lastSuccess: null, failuresInARow: {} },
        cursor: {
          status: 'ok',
          lastModified: null,
          movedAt: null,
          ageSeconds: 0,
          frozenAfterSeconds: 3600,
        },
        poller: {
          status: 'ok',
          lastLeaseAgeSeconds: expect.any(Number),
          notLeasingAfterSeconds: 120,
          running: 0,
          concurrency: 4,
        },
        keys: { status: 'off' },
        push: { status: 'off' },
      },
    });
  });

  it('answers /healthz alive and /readyz not ready while the service cannot be reached at start, not refusing them', async () => {
    // Registration keeps failing with a 503: the worker keeps trying and never gets to running.
    harness.faults.inject({
      method: 'PATCH',
      path: '/v2/connector',
      fault: { type: 'status', status: 503 },
      times: 1_000,
    });
    const worker = new ConnectorWorker(
      new MemoryConnector(source),
      harness.connectorOptions({ operations: { port: 0 } }),
    );
    const starting = worker.start();
    await vi.waitFor(() => expect(worker.operationsUrl).toBeDefined());
    const url = worker.operationsUrl as string;
    await vi.waitFor(() => expect(harness.faults.list()[0]?.remaining).toBeLessThan(1_000));
    expect(worker.lifecycle).toBe('starting');
    expect(await get(`${url}/healthz`)).toEqual({
      status: 200,
      text: JSON.stringify({ status: 'ok', state: 'starting' }),
    });
    const readiness = await get(`${url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(JSON.parse(readiness.text)).toMatchObject({
      status: 'not ready',
      reason: 'starting',
      checks: { poller: { status: 'starting' }, sync: { status: 'ok', lastRun: null } },
    });
    await worker.stop();
    await starting;
    expect(worker.operationsUrl).toBeUndefined();
  });

  it('fails /readyz as soon as stop() begins, while a task still finishes, then closes the port', async () => {
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
    });
    const url = worker.operationsUrl as string;
    await worker.syncNow();
    const gate = Promise.withResolvers<void>();
    worker.connector.gate = gate.promise;
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    await worker.connector.atGate;
    expect((await get(`${url}/readyz`)).status).toBe(200);

    const stopping = worker.stop();
    const readiness = await get(`${url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(JSON.parse(readiness.text)).toMatchObject({ status: 'not ready', reason: 'stopping' });
    // Still alive: the worker is shutting down, not broken.
    expect((await get(`${url}/healthz`)).status).toBe(200);

    gate.resolve();
    await stopping;
    expect(harness.task(task.id)?.result).toEqual({ status: 'success' });
    expect(worker.operationsUrl).toBeUndefined();
    await expect(get(`${url}/readyz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('shows tasks_total on /metrics once a task has finished', async () => {
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
    });
    const url = worker.operationsUrl as string;
    const metricLine = /^approval_connector_tasks_total\{type="approve",status="success"\} (\d+)$/m;
    expect((await get(`${url}/metrics`)).text).not.toMatch(metricLine);

    await worker.syncNow();
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    await vi.waitFor(async () => {
      const metrics = await get(`${url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.text.match(metricLine)?.[1]).toBe('1');
    });
    const metrics = (await get(`${url}/metrics`)).text;
    expect(metrics).toMatch(/^approval_connector_approvals_pushed_total 1$/m);
    expect(metrics).toMatch(/^approval_connector_ready 1$/m);
  });

  it('fails /readyz and sets the ready gauge to 0 while task polling has stalled, and recovers both', async () => {
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
      poller: { watchdogMs: 300 },
    });
    const url = worker.operationsUrl as string;
    const gauge = async () =>
      /^approval_connector_ready (\d)$/m.exec((await get(`${url}/metrics`)).text)?.[1];
    expect(await gauge()).toBe('1');
    // Every Get task hangs: the watchdog finds polling stalled, cuts each poll short and polls again.
    const hang = harness.faults.inject({
      method: 'GET',
      path: '/v2/connector/tasks',
      fault: { type: 'delay', ms: 60_000 },
      times: 1_000,
    });
    await vi.waitFor(
      async () => {
        const readiness = await get(`${url}/readyz`);
        expect(readiness.status).toBe(503);
        expect(JSON.parse(readiness.text)).toMatchObject({
          status: 'not ready',
          reason: 'task polling stalled',
          checks: { poller: { status: 'stalled' } },
        });
      },
      { timeout: 10_000 },
    );
    expect(worker.lifecycle).toBe('running');
    expect(await gauge()).toBe('0');

    harness.faults.clear(hang.id);
    await vi.waitFor(async () => expect((await get(`${url}/readyz`)).status).toBe(200), { timeout: 10_000 });
    expect(await gauge()).toBe('1');
  });
});
