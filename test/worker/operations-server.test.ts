import { createServer } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConnectorMetrics,
  createLogger,
  type HealthReport,
  OperationsServer,
  type OperationsServerOptions,
  type ReadinessReport,
} from '../../src/worker/index.js';

const servers: OperationsServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface Probe {
  health: HealthReport;
  readiness: ReadinessReport;
}

async function startServer(overrides: Partial<OperationsServerOptions> = {}) {
  const probe: Probe = { health: { healthy: true, state: 'running' }, readiness: { ready: true } };
  const metrics = new ConnectorMetrics();
  const server = new OperationsServer({
    port: 0,
    health: () => probe.health,
    isReady: () => probe.readiness,
    metrics,
    ...overrides,
  });
  servers.push(server);
  const { url } = await server.start();
  return { server, url, probe, metrics };
}

async function get(url: string, method: 'GET' | 'HEAD' | 'POST' | 'DELETE' = 'GET') {
  const answer = await request(url, { method });
  const text = await answer.body.text();
  return {
    status: answer.statusCode,
    headers: answer.headers,
    text,
    json: () => JSON.parse(text) as unknown,
  };
}

describe('OperationsServer', () => {
  it('listens on 127.0.0.1 by default, on a free port with port 0', async () => {
    const { url } = await startServer();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);
  });

  it('answers /healthz 200 with the state while healthy, 503 once failed', async () => {
    const { url, probe } = await startServer();
    let answer = await get(`${url}/healthz`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json()).toEqual({ status: 'ok', state: 'running' });

    probe.health = { healthy: false, state: 'failed' };
    answer = await get(`${url}/healthz`);
    expect(answer.status).toBe(503);
    expect(answer.json()).toEqual({ status: 'unhealthy', state: 'failed' });
  });

  it('answers /readyz 200 when ready and 503 with the reason when not', async () => {
    const { url, probe } = await startServer();
    let answer = await get(`${url}/readyz`);
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual({ status: 'ready' });

    probe.readiness = { ready: false, reason: 'stopping' };
    answer = await get(`${url}/readyz`);
    expect(answer.status).toBe(503);
    expect(answer.json()).toEqual({ status: 'not ready', reason: 'stopping' });
  });

  it("shows the report's checks in both answers, beside the fields the probes read", async () => {
    const { url, probe } = await startServer();
    const checks = {
      sync: { status: 'failing', failuresInARow: { incremental: 3 } },
      keys: { status: 'off' },
    };
    probe.readiness = { ready: true, checks };
    let answer = await get(`${url}/readyz`);
    expect(answer.status).toBe(200);
    expect(answer.json()).toEqual({ status: 'ready', checks });

    probe.readiness = { ready: false, reason: 'task polling stalled', checks };
    answer = await get(`${url}/readyz`);
    expect(answer.status).toBe(503);
    expect(answer.json()).toEqual({ status: 'not ready', reason: 'task polling stalled', checks });
  });

  it('answers 503 when a probe callback throws or rejects', async () => {
    const { url } = await startServer({
      health: () => {
        throw new Error('boom');
      },
      isReady: () => Promise.reject(new Error('boom')),
    });
    expect((await get(`${url}/healthz`)).status).toBe(503);
    const answer = await get(`${url}/readyz`);
    expect(answer.status).toBe(503);
    expect(answer.json()).toEqual({ status: 'not ready', reason: 'readiness check failed' });
  });

  it('logs a probe callback that throws, through the logger given', async () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => lines.push(line) } });
    const { url } = await startServer({
      logger,
      health: () => {
        throw new Error('state unreadable');
      },
    });
    expect((await get(`${url}/healthz`)).status).toBe(503);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: 40,
        path: '/healthz',
        err: expect.objectContaining({ message: 'state unreadable' }),
      }),
    ]);
  });

  it('serves the metrics in the Prometheus text format', async () => {
    const { url, metrics } = await startServer();
    metrics.approvalsPushed(12);
    metrics.taskFinished('approve', 'systemError', 1.5);
    const answer = await get(`${url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(answer.text).toContain('approval_connector_approvals_pushed_total 12\n');
    expect(answer.text).toContain('approval_connector_tasks_total{type="approve",status="systemError"} 1\n');
  });

  it('ignores a query string, and answers HEAD without a body', async () => {
    const { url } = await startServer();
    expect((await get(`${url}/healthz?verbose=1`)).status).toBe(200);
    const head = await get(`${url}/readyz`, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('answers 404 for another path and 405 for another method', async () => {
    const { url } = await startServer();
    expect((await get(`${url}/`)).status).toBe(404);
    expect((await get(`${url}/health`)).status).toBe(404);
    const answer = await get(`${url}/metrics`, 'POST');
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD');
    expect((await get(`${url}/healthz`, 'DELETE')).status).toBe(405);
  });

  it('closes idempotently, and does not start again once closed', async () => {
    const { server, url } = await startServer();
    await Promise.all([server.close(), server.close()]);
    await server.close();
    await expect(get(`${url}/healthz`)).rejects.toThrow();
    await expect(server.start()).rejects.toMatchObject({ code: 'operations_server_closed' });
  });

  it('closes before it was started', async () => {
    const server = new OperationsServer({
      port: 0,
      health: () => ({ healthy: true, state: 'idle' }),
      isReady: () => ({ ready: false }),
      metrics: new ConnectorMetrics(),
    });
    await server.close();
    await expect(server.start()).rejects.toMatchObject({ code: 'operations_server_closed' });
  });

  it('rejects start() with a kit error when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const server = new OperationsServer({
        port,
        health: () => ({ healthy: true, state: 'idle' }),
        isReady: () => ({ ready: true }),
        metrics: new ConnectorMetrics(),
      });
      servers.push(server);
      await expect(server.start()).rejects.toMatchObject({ code: 'operations_server_listen' });
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('refuses an invalid port, naming it', () => {
    expect(
      () =>
        new OperationsServer({
          port: 70_000,
          health: () => ({ healthy: true, state: 'idle' }),
          isReady: () => ({ ready: true }),
          metrics: new ConnectorMetrics(),
        }),
    ).toThrow(
      expect.objectContaining({ code: 'validation', issues: [expect.objectContaining({ path: ['port'] })] }),
    );
  });
});
