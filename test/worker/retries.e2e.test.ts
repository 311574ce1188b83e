import { request } from 'undici';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RetryEvent } from '../../src/client/index.js';
import { ValidationError } from '../../src/errors.js';
import type { TestHarness } from '../../src/testing/index.js';
import { ConnectorWorker } from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, type MemorySource } from './support/memory-source.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1'] })));

async function scrape(url: string): Promise<string> {
  const answer = await request(`${url}/metrics`, { reset: true });
  return answer.body.text();
}

describe('the retries of a connector’s client', () => {
  it('are counted by endpoint and reason on /metrics, logged at debug, and passed to service.onRetry', async () => {
    const lines: string[] = [];
    const heard: RetryEvent[] = [];
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
      logger: { level: 'debug', destination: { write: (line: string) => void lines.push(line) } },
      service: harness.serviceOptions({
        retry: { retries: 2, baseDelayMs: 1 },
        onRetry: (event) => void heard.push(event),
      }),
    });
    const url = worker.operationsUrl as string;
    expect(await scrape(url)).not.toMatch(/^approval_connector_client_retries_total\{/m);

    harness.faults.inject({
      method: 'PUT',
      path: '/v2/rawapprovals',
      times: 2,
      fault: { type: 'status', status: 503 },
    });
    harness.faults.inject({ method: 'PUT', path: '/v2/connector/state', fault: { type: 'drop' } });
    const report = await worker.syncNow();
    expect(report.pushed).toBe(1);

    const metrics = await scrape(url);
    expect(metrics).toMatch(
      /^approval_connector_client_retries_total\{endpoint="putApprovals",reason="server_error"\} 2$/m,
    );
    expect(metrics).toMatch(
      /^approval_connector_client_retries_total\{endpoint="putState",reason="network"\} 1$/m,
    );

    const retries = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'retrying a request');
    expect(retries).toHaveLength(3);
    expect(
      retries.map(({ level, component, endpoint, method, path, attempt, reason }) => ({
        level,
        component,
        endpoint,
        method,
        path,
        attempt,
        reason,
      })),
    ).toEqual([
      {
        level: 20,
        component: 'client',
        endpoint: 'putApprovals',
        method: 'PUT',
        path: '/v2/rawapprovals',
        attempt: 1,
        reason: 'server_error',
      },
      {
        level: 20,
        component: 'client',
        endpoint: 'putApprovals',
        method: 'PUT',
        path: '/v2/rawapprovals',
        attempt: 2,
        reason: 'server_error',
      },
      {
        level: 20,
        component: 'client',
        endpoint: 'putState',
        method: 'PUT',
        path: '/v2/connector/state',
        attempt: 1,
        reason: 'network',
      },
    ]);
    for (const line of retries) {
      expect(line.delayMs).toEqual(expect.any(Number));
      expect(line.err).toMatchObject({
        type: expect.any(String),
        message: expect.stringContaining('PUT /v2/'),
      });
    }
    expect(retries[0].err.message).toContain('answered 503');
    expect(lines.join('\n')).not.toContain(harness.tenant.connectorToken);
    expect(heard.map(({ endpoint, attempt }) => `${endpoint} ${attempt}`)).toEqual([
      'putApprovals 1',
      'putApprovals 2',
      'putState 1',
    ]);
  });

  it('of a poll for tasks are counted as getTask, not as endpoint "undefined"', async () => {
    // The poller leases with Get task under a looser answer schema: a copy of the endpoint, which the retries did not
    // recognise by identity.
    const heard: RetryEvent[] = [];
    harness.faults.inject({
      method: 'GET',
      path: '/v2/connector/tasks',
      times: 1,
      fault: { type: 'status', status: 503 },
    });
    const worker = await harness.start(new MemoryConnector(source), {
      operations: { port: 0 },
      poller: { idleMinMs: 5, idleMaxMs: 20 },
      service: harness.serviceOptions({
        retry: { retries: 2, baseDelayMs: 1 },
        onRetry: (event) => void heard.push(event),
      }),
    });
    await vi.waitFor(() => expect(heard).toHaveLength(1));
    expect(heard[0]).toMatchObject({ endpoint: 'getTask', method: 'GET', path: '/v2/connector/tasks' });
    const metrics = await scrape(worker.operationsUrl as string);
    expect(metrics).toMatch(
      /^approval_connector_client_retries_total\{endpoint="getTask",reason="server_error"\} 1$/m,
    );
    expect(metrics).not.toContain('endpoint="undefined"');
  });

  it('refuses a service.onRetry that is not a function when the worker is built', () => {
    const options = harness.connectorOptions({
      service: harness.serviceOptions({ onRetry: 'log' as unknown as () => void }),
    });
    expect(() => new ConnectorWorker(new MemoryConnector(source), options)).toThrow(ValidationError);
    expect(() => new ConnectorWorker(new MemoryConnector(source), options)).toThrow(/onRetry/);
  });
});
