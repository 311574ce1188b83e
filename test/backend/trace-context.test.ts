import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend } from '../../src/backend/index.js';
import { call, registerTenant, start } from './helpers.js';

// The reference backend reads a W3C traceparent without any OpenTelemetry SDK in its process: its request log lines
// carry the caller's trace id, and a task remembers the traces of its creation and of its result.

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER = '0af7651916cd43dd8448eb211c80319c';
const traceparent = (traceId: string) => `00-${traceId}-00f067aa0ba902b7-01`;

let backend: ReferenceBackend;
const lines: Record<string, unknown>[] = [];
const adminToken = 'trace-context-admin-token';

beforeAll(async () => {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  ({ backend } = await start({ logger: pino({ level: 'debug' }, destination), adminToken }));
});
afterAll(() => backend.close());

describe('a request’s traceparent', () => {
  it('puts its trace id on every log line of the request, from the first', async () => {
    const tenant = backend.createTenant();
    await call(backend, 'GET', '/v2/connector/state', {
      token: tenant.connectorToken,
      headers: { traceparent: traceparent(TRACE), tracestate: 'vendor=x' },
    });
    const logged = lines.filter((line) => line.trace_id === TRACE).map((line) => line.msg);
    expect(logged).toEqual(['incoming request', 'request completed']);
  });

  it('is ignored when malformed, and a request without one is logged without a trace id', async () => {
    const tenant = backend.createTenant();
    lines.length = 0;
    await call(backend, 'GET', '/v2/connector/state', {
      token: tenant.connectorToken,
      headers: { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` },
    });
    await call(backend, 'GET', '/v2/connector/state', { token: tenant.connectorToken });
    expect(lines.filter((line) => line.msg === 'request completed')).toHaveLength(2);
    expect(lines.some((line) => 'trace_id' in line)).toBe(false);
  });
});

describe('a task', () => {
  it('remembers the trace of the request that created it and of the one that reported its result', async () => {
    const tenant = await registerTenant(backend, [{ id: 'PO-1', schemaId: 'po', approver: 'u' }]);
    const created = await call(backend, 'POST', '/admin/tasks', {
      token: adminToken,
      headers: { traceparent: traceparent(OTHER) },
      body: { systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' },
    });
    expect(created).toMatchObject({ status: 200, body: { createdTraceId: OTHER } });
    const leased = await call(backend, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
    const taskId = leased.body.data.task.id as string;
    await call(backend, 'PATCH', `/v2/connector/tasks/${taskId}`, {
      token: tenant.connectorToken,
      headers: { traceparent: traceparent(TRACE) },
      body: { taskResult: { status: 'success' } },
    });
    expect(backend.getTask(taskId)).toMatchObject({ createdTraceId: OTHER, resultTraceId: TRACE });
  });

  it('created without a trace has none', async () => {
    const tenant = await registerTenant(backend, [{ id: 'PO-1', schemaId: 'po', approver: 'u' }]);
    const task = backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'PO-1' });
    expect(task).not.toHaveProperty('createdTraceId');
    expect(task).not.toHaveProperty('resultTraceId');
  });
});
