import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { request } from 'undici';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Connector, incremental, type SourceApproval, task } from '../../src/connector/index.js';
import type { TestHarness } from '../../src/testing/index.js';
import { ConnectorWorker, MemoryKeyStore } from '../../src/worker/index.js';
import { at, openHarness } from './support/harness.js';
import { captureLogs } from './support/logs.js';
import type { MemorySource } from './support/memory-source.js';
import { PushConnector, signed, WEBHOOK_SECRET } from './support/push-connector.js';
import { childrenOf, finished, installTracing, one, type SpanSummary } from './support/tracing.js';

// With an OpenTelemetry SDK registered as an application would, one approval's journey (source read → push → the
// service) and one task's (lease → handler → report → the service) are each one trace; the reference backend, in
// this process, adds its server spans under the client's. A push delivery is a trace of its own, which the lookup
// it leads to links to.

const exporter = installTracing();
const tracer = trace.getTracer('the-author');

/** A connector whose source and handler call an instrumented client of their own: a span each, where they run. */
class TracedConnector extends Connector {
  failWith: Error | undefined;
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }) }),
      run: async (_input, context) => {
        tracer.startSpan('POST /source/decisions').end();
        context.logger.info('decided in the source');
        if (this.failWith !== undefined) throw this.failWith;
      },
    }),
  };
  readonly source = incremental({
    ordered: true,
    async *changes(): AsyncIterable<SourceApproval> {
      tracer.startSpan('GET /source/changes').end();
      for (const id of ['PO-1', 'PO-2']) {
        yield {
          id,
          schemaId: 'po',
          approver: 'ada',
          resolved: false,
          lastModified: at(id === 'PO-1' ? 0 : 1),
          data: {},
        };
      }
    },
  });
}

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1', 'PO-2'] })));

describe('a sync run, traced', () => {
  it('is one trace: the run, its read of the source (the source’s own call under it), its push and the service’s span, its cursor save', async () => {
    const worker = await harness.start(new TracedConnector(), { sync: { batchSize: 10 } });
    exporter.reset();
    await worker.syncNow();
    await worker.stop();
    const spans = finished(exporter);
    const run = one(spans, 'sync incremental');
    expect(run.parentId).toBeUndefined();
    expect(run.attributes).toMatchObject({
      'approval_connector.sync.mode': 'incremental',
      'approval_connector.sync.outcome': 'success',
      'approval_connector.sync.pushed': 2,
      'approval_connector.sync.changed': 2,
    });
    const trip = spans.filter((span) => span.traceId === run.traceId);
    expect(childrenOf(trip, run)).toEqual(['push approvals', 'save cursor', 'source.changes']);

    const read = one(trip, 'source.changes', run);
    expect(read.attributes).toMatchObject({ 'approval_connector.source.records': 2 });
    expect(one(trip, 'GET /source/changes').parentId).toBe(read.spanId);

    const push = one(trip, 'push approvals', run);
    expect(push.attributes).toMatchObject({
      'approval_connector.push.size': 2,
      'approval_connector.push.acknowledged': true,
    });
    const put = one(trip, 'PUT /v2/rawapprovals', push);
    const url = new URL(harness.backend.url);
    expect(put).toMatchObject({
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'PUT',
        'server.address': url.hostname,
        'server.port': Number(url.port),
        'url.full': `${url.origin}/v2/rawapprovals`,
        'url.template': '/v2/rawapprovals',
        'http.response.status_code': 200,
      },
    });
    // Across the wire: the reference backend's span is the child of the client's.
    const served = one(trip, 'PUT /v2/rawapprovals', put);
    expect(served).toMatchObject({
      kind: SpanKind.SERVER,
      attributes: { 'http.route': '/v2/rawapprovals', 'http.response.status_code': 200 },
    });
    expect(one(trip, 'save cursor', run).attributes).toMatchObject({
      'approval_connector.sync.cursor': at(1),
      'approval_connector.sync.written': true,
    });
  });

  it('marks a run whose source fails failed, with the error’s code and no message', async () => {
    const connector = new TracedConnector();
    const worker = await harness.start(connector, { sync: { sourceRetry: { retries: 0 } } });
    const changes = connector.source.changes;
    connector.source.changes = async function* (window, context) {
      yield* changes.call(this, window, context);
      throw Object.assign(new Error('the source said: secret-in-message'), { code: 'source_down' });
    };
    exporter.reset();
    await expect(worker.syncNow()).rejects.toThrow('secret-in-message');
    await worker.stop();
    const spans = finished(exporter);
    const run = one(spans, 'sync incremental');
    expect(run).toMatchObject({
      status: SpanStatusCode.ERROR,
      attributes: { 'approval_connector.sync.outcome': 'failure', 'error.type': 'source_down' },
    });
    expect(one(spans, 'source.changes', run)).toMatchObject({
      status: SpanStatusCode.ERROR,
      attributes: { 'error.type': 'source_down', 'approval_connector.source.records': 2 },
    });
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes))).not.toContain(
      'secret-in-message',
    );
  });
});

describe('a worker’s polls for tasks', () => {
  it('are not traced: no client span per poll, only the backend’s own server spans', async () => {
    // The poller leases with a copy of Get task (a looser answer schema), which the client did not recognise as Get
    // task: every poll, a task or none, was a trace of its own.
    const worker = await harness.start(new TracedConnector(), { poller: { idleMinMs: 5, idleMaxMs: 20 } });
    exporter.reset();
    const served = () => finished(exporter).filter((span) => span.name === 'GET /v2/connector/tasks');
    await vi.waitFor(() => expect(served().length).toBeGreaterThanOrEqual(3));
    await worker.stop();
    expect(served().map((span) => span.kind)).not.toContain(SpanKind.CLIENT);
    expect(served().every((span) => span.kind === SpanKind.SERVER && span.parentId === undefined)).toBe(true);
  });
});

describe('a task, traced', () => {
  it('is one trace: lease, handler (the handler’s own call under it), report and the service’s span; the backend remembers it', async () => {
    const logs = captureLogs();
    const worker = await harness.start(new TracedConnector(), {
      logger: { level: 'info', destination: logs.destination },
      poller: { idleMinMs: 5, idleMaxMs: 20 },
    });
    await worker.syncNow();
    // The task is created inside a span of the test's: the backend remembers that trace as the task's creation.
    const created = tracer.startActiveSpan('approver clicks approve', (span) => {
      try {
        return { task: harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' }), span };
      } finally {
        span.end();
      }
    });
    expect(await harness.awaitResult(created.task)).toEqual({ status: 'success' });
    await vi.waitFor(() => one(finished(exporter), 'task approve'));
    await worker.stop();

    const spans = finished(exporter);
    const root = one(spans, 'task approve');
    expect(root).toMatchObject({
      parentId: undefined,
      kind: SpanKind.CONSUMER,
      attributes: {
        'approval_connector.task.id': created.task.id,
        'approval_connector.task.type': 'approve',
        'approval_connector.task.status': 'success',
        'approval_connector.task.deliveries': 1,
      },
    });
    const trip = spans.filter((span) => span.traceId === root.traceId);
    expect(childrenOf(trip, root)).toEqual(['handler', 'lease', 'report result']);
    const handler = one(trip, 'handler', root);
    expect(one(trip, 'POST /source/decisions').parentId).toBe(handler.spanId);

    const report = one(trip, 'report result', root);
    expect(report.attributes).toMatchObject({
      'approval_connector.report.outcome': 'acknowledged',
      'approval_connector.report.attempts': 1,
    });
    const patch = one(trip, 'PATCH /v2/connector/tasks/{taskId}', report);
    expect(patch.attributes).toMatchObject({
      'url.template': '/v2/connector/tasks/{taskId}',
      'http.response.status_code': 200,
    });
    // The backend's span is the child of the client's, and the backend recorded the client's trace.
    expect(one(trip, 'PATCH /v2/connector/tasks/:taskId', patch).kind).toBe(SpanKind.SERVER);
    const info = harness.backend.getTask(created.task.id);
    expect(info?.resultTraceId).toBe(root.traceId);
    expect(info?.createdTraceId).toBe(created.span.spanContext().traceId);

    // The handler's log line carries its span's ids.
    expect(logs.lines).toContainEqual(
      expect.objectContaining({
        msg: 'decided in the source',
        trace_id: root.traceId,
        span_id: handler.spanId,
        trace_flags: '01',
      }),
    );
  });

  it('marks a failed task with its result status, and carries none of the secrets used', async () => {
    const password = 'hunter2-in-a-span';
    const logs = captureLogs();
    class Sealed extends TracedConnector {
      override readonly authRequired = true;
    }
    const connector = new Sealed();
    const worker = await harness.start(connector, {
      logger: { level: 'trace', destination: logs.destination },
      keyStore: new MemoryKeyStore(),
      poller: { idleMinMs: 5, idleMaxMs: 20 },
    });
    await worker.syncNow();
    connector.failWith = Object.assign(new Error(`login failed for password ${password}`), { status: 401 });
    const created = harness.createTask(worker, {
      type: 'approve',
      approvalId: 'PO-1',
      credentials: { username: 'ada', password },
    });
    expect(await harness.awaitResult(created)).toMatchObject({ status: 'authenticationError' });
    await vi.waitFor(() => one(finished(exporter), 'task approve'));
    await worker.stop();

    const spans = finished(exporter);
    const root = one(spans, 'task approve');
    expect(root).toMatchObject({
      status: SpanStatusCode.ERROR,
      attributes: {
        'approval_connector.task.status': 'authenticationError',
        'error.type': 'authenticationError',
      },
    });
    expect(one(spans, 'handler', root).status).toBe(SpanStatusCode.ERROR);
    // Names, attributes, events and statuses of every span: no password, no token.
    const everything = JSON.stringify(
      exporter.getFinishedSpans().map(({ name, attributes, events, status, links }) => ({
        name,
        attributes,
        events,
        status,
        links,
      })),
    );
    expect(everything).not.toContain(password);
    expect(everything).not.toContain(harness.tenant.connectorToken);
    expect(logs.raw.join('\n')).not.toContain(password);
  });
});

describe('a push delivery, traced', () => {
  /** Posts a delivery to the worker's ingress as the source would; its status. */
  async function deliver(url: string, { body, headers }: { body: string; headers: Record<string, string> }) {
    const answer = await request(url, { method: 'POST', body, headers, reset: true });
    await answer.body.dump();
    return answer.statusCode;
  }

  it('is a span of its own, which the lookup it leads to links to: delivery → lookup → push to the service', async () => {
    const worker = await harness.start(new PushConnector(source), {
      push: { secret: WEBHOOK_SECRET, delayMs: 500 },
    });
    await worker.syncNow();
    source.put('PO-1', at(30), { resolved: true });
    source.put('PO-2', at(31), { data: { title: 'Changed in the source' } });
    const url = worker.pushHealth?.url as string;
    exporter.reset();

    // Two deliveries that come together: one lookup reads what both name.
    const first = signed({ ids: ['PO-1'] }, 'D-1');
    const second = signed({ ids: ['PO-1', 'PO-2'] }, 'D-2');
    expect(await Promise.all([deliver(url, first), deliver(url, second)])).toEqual([202, 202]);
    await worker.pushSettled();
    expect(await deliver(url, first)).toBe(200);
    const forged = signed({ ids: ['PO-2'] }, 'D-3', 'a-secret-that-is-not-the-one');
    expect(await deliver(url, forged)).toBe(401);
    expect(await deliver(url, signed('not json', 'D-4'))).toBe(202);
    await worker.pushSettled();
    await worker.stop();

    const spans = finished(exporter);
    const deliveries = spans.filter((span) => span.name === 'push delivery');
    expect(deliveries).toHaveLength(5);
    for (const span of deliveries) {
      // Each a trace of its own, as a server span with the HTTP server span's attributes.
      expect(span).toMatchObject({
        parentId: undefined,
        kind: SpanKind.SERVER,
        status: SpanStatusCode.UNSET,
        attributes: {
          'http.request.method': 'POST',
          'http.route': '/push',
          'url.path': '/push',
          'url.scheme': 'http',
          'server.port': Number(new URL(url).port),
          'network.protocol.version': '1.1',
        },
      });
    }
    expect(new Set(deliveries.map((span) => span.traceId)).size).toBe(5);
    const byId = (id: string | undefined) =>
      deliveries.filter((span) => span.attributes['approval_connector.push.delivery_id'] === id);
    const outcomeOf = (span: SpanSummary) => span.attributes['approval_connector.push.outcome'];
    const [taken, duplicate] = ['accepted', 'duplicate'].map((outcome) =>
      byId('D-1').find((span) => outcomeOf(span) === outcome),
    );
    const [alsoTaken] = byId('D-2');
    expect(taken?.attributes).toMatchObject({
      'approval_connector.push.approvals': 1,
      'http.request.body.size': first.body.length,
      'http.response.status_code': 202,
    });
    expect(alsoTaken?.attributes).toMatchObject({
      'approval_connector.push.outcome': 'accepted',
      'approval_connector.push.approvals': 2,
      'http.response.status_code': 202,
    });
    expect(duplicate?.attributes).toMatchObject({ 'http.response.status_code': 200 });
    // Refused before anything read it: no delivery id, nothing it names.
    expect(byId(undefined)).toMatchObject([
      {
        attributes: { 'approval_connector.push.outcome': 'refused', 'http.response.status_code': 401 },
      },
    ]);
    expect(byId(undefined)[0]?.attributes).not.toHaveProperty('approval_connector.push.approvals');
    expect(byId('D-4')).toMatchObject([
      { attributes: { 'approval_connector.push.outcome': 'malformed', 'http.response.status_code': 202 } },
    ]);

    // One lookup, a trace of its own, linked to both deliveries it serves.
    const lookup = one(spans, 'sync lookup');
    expect(lookup).toMatchObject({
      parentId: undefined,
      attributes: {
        'approval_connector.sync.outcome': 'success',
        'approval_connector.sync.pushed': 2,
        'approval_connector.lookup.deliveries': 2,
      },
    });
    const linked = exporter
      .getFinishedSpans()
      .find((span) => span.name === 'sync lookup')
      ?.links.map((link) => link.context.spanId);
    expect(linked?.sort()).toEqual([taken?.spanId, alsoTaken?.spanId].sort());
    const trip = spans.filter((span) => span.traceId === lookup.traceId);
    expect(childrenOf(trip, lookup)).toEqual(['push approvals', 'source.lookup']);
    const push = one(trip, 'push approvals', lookup);
    const put = one(trip, 'PUT /v2/rawapprovals', push);
    expect(put.attributes).toMatchObject({ 'http.response.status_code': 200 });
    expect(one(trip, 'PUT /v2/rawapprovals', put).kind).toBe(SpanKind.SERVER);
    expect(harness.approvals().find((approval) => approval.id === 'PO-1')).toMatchObject({ resolved: true });

    // Nothing of a delivery's body or signature, nor the secret, in any span.
    const everything = JSON.stringify(
      exporter.getFinishedSpans().map(({ name, attributes, events, status, links }) => ({
        name,
        attributes,
        events,
        status,
        links,
      })),
    );
    for (const { body, headers } of [first, second, forged]) {
      expect(everything).not.toContain(JSON.stringify(body).slice(1, -1));
      expect(everything).not.toContain(headers['x-signature']?.slice('sha256='.length));
    }
    expect(everything).not.toContain('not json');
    expect(everything).not.toContain(WEBHOOK_SECRET);
  });

  it('tells on its span what the ingress answered unread, and what a full queue left; it follows no traceparent', async () => {
    // Registration keeps failing at first: the worker is not running yet, and answers 503.
    harness.faults.inject({
      method: 'PATCH',
      path: '/v2/connector',
      fault: { type: 'status', status: 503 },
      times: 1_000,
    });
    const worker = new ConnectorWorker(
      new PushConnector(source),
      harness.connectorOptions({ push: { secret: WEBHOOK_SECRET, maxBodyBytes: 64, queueSize: 1 } }),
    );
    const starting = worker.start();
    await vi.waitFor(() => expect(worker.pushHealth?.url).toBeDefined());
    const url = worker.pushHealth?.url as string;
    expect(await deliver(url, signed({ ids: ['PO-1'] }, 'D-1'))).toBe(503);
    harness.faults.clear();
    await starting;

    const callers = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const { body, headers } = signed({ ids: ['PO-1', 'PO-2'] }, 'D-2');
    expect(await deliver(url, { body, headers: { ...headers, traceparent: callers } })).toBe(202);
    await worker.pushSettled();
    const large = signed({ ids: Array.from({ length: 20 }, (_, n) => `PO-${n}`) }, 'D-3');
    expect(await deliver(url, large)).toBe(413);
    // Not deliveries: another path, another method.
    const other = await request(`${url}/else`, { method: 'POST', body: '{}', reset: true });
    await other.body.dump();
    const got = await request(url, { method: 'GET', reset: true });
    await got.body.dump();
    expect([other.statusCode, got.statusCode]).toEqual([404, 405]);
    await worker.stop();

    const deliveries = finished(exporter).filter((span) => span.name === 'push delivery');
    expect(deliveries.map(({ status, attributes }) => ({ status, attributes }))).toMatchObject([
      {
        status: SpanStatusCode.ERROR,
        attributes: {
          'approval_connector.push.outcome': 'not_running',
          'http.response.status_code': 503,
          'error.type': '503',
        },
      },
      {
        status: SpanStatusCode.UNSET,
        attributes: {
          'approval_connector.push.outcome': 'accepted',
          'approval_connector.push.approvals': 2,
          'approval_connector.push.overflow': 1,
        },
      },
      {
        status: SpanStatusCode.UNSET,
        attributes: { 'approval_connector.push.outcome': 'too_large', 'http.response.status_code': 413 },
      },
    ]);
    expect(deliveries[2]?.attributes).not.toHaveProperty('http.request.body.size');
    // The caller's traceparent is not followed: a trace of the kit's own.
    expect(deliveries[1]).toMatchObject({ parentId: undefined });
    expect(deliveries[1]?.traceId).not.toBe(callers.split('-')[1]);
  });
});
