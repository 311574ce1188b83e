import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NETWORK_TEXT_LIMIT } from '../../src/internal/bounded.js';
import {
  errorTypeOf,
  inSpan,
  NOOP_SPAN,
  parseTraceparent,
  SPAN_LINK_LIMIT,
  startSpan,
  traceHeaders,
  tracingAvailable,
} from '../../src/internal/tracing.js';
import { createLogger } from '../../src/worker/operations/logger.js';
import { finished, installTracing, one } from '../worker/support/tracing.js';

const exporter = installTracing();

describe('the kit’s spans, with an SDK registered', () => {
  it('loads the API, and carries the active span to the next service as a W3C traceparent', async () => {
    expect(tracingAvailable).toBe(true);
    await inSpan('outer', {}, async (span) => {
      const headers = traceHeaders();
      expect(headers?.traceparent).toMatch(new RegExp(`^00-${span.traceId}-[0-9a-f]{16}-01$`));
    });
    expect(traceHeaders()).toBeUndefined();
  });

  it('bounds every string attribute at NETWORK_TEXT_LIMIT, as it bounds a log line', () => {
    const id = 'x'.repeat(20_000);
    startSpan('task', { attributes: { 'approval_connector.task.id': id, count: 3 } }).end();
    const { attributes } = one(finished(exporter), 'task');
    expect(attributes).toEqual({
      'approval_connector.task.id': `${'x'.repeat(NETWORK_TEXT_LIMIT)}…(+${20_000 - NETWORK_TEXT_LIMIT} characters)`,
      count: 3,
    });
  });

  it('marks a failure with its code, never its message, and throws it on', async () => {
    const failure = Object.assign(new Error('token abc123 refused'), { code: 'unauthorized' });
    await expect(
      inSpan('call', {}, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    const [span] = exporter.getFinishedSpans();
    expect(span?.attributes).toEqual({ 'error.type': 'unauthorized' });
    expect(span?.status).toEqual({ code: 2 });
    expect(span?.events).toEqual([]);
    expect(errorTypeOf(new TypeError('x'))).toBe('TypeError');
    expect(errorTypeOf('a string')).toBe('_OTHER');
  });

  it('starts a root span outside whatever span is active', () => {
    trace.getTracer('test').startActiveSpan('outer', (outer) => {
      startSpan('own trace', { root: true }).end();
      outer.end();
    });
    const spans = finished(exporter);
    expect(one(spans, 'own trace').parentId).toBeUndefined();
    expect(one(spans, 'own trace').traceId).not.toBe(one(spans, 'outer').traceId);
  });

  it('links a span to the spans given, each of its own trace, leaving out what carries no span, at most 128', () => {
    const requests = Array.from({ length: SPAN_LINK_LIMIT + 2 }, () => startSpan('request', { root: true }));
    for (const request of requests) request.end();
    startSpan('batch', {
      root: true,
      links: [undefined, NOOP_SPAN.context, ...requests.map((r) => r.context)],
    }).end();
    const spans = exporter.getFinishedSpans();
    const requested = spans.filter((span) => span.name === 'request').map((span) => span.spanContext());
    const batch = spans.find((span) => span.name === 'batch');
    expect(batch?.links.map((link) => link.context)).toEqual(requested.slice(0, SPAN_LINK_LIMIT));
    expect(batch?.spanContext().traceId).not.toBe(requested[0]?.traceId);
  });
});

describe('the kit’s log lines, with an SDK registered', () => {
  it('carry the active span’s ids, beside what an injected logger’s own mixin adds', () => {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const application = pino({ mixin: () => ({ app: 'mine' }) }, destination);
    const logger = createLogger({ logger: application });
    logger.info('outside');
    trace.getTracer('test').startActiveSpan('work', (span) => {
      logger.info('inside');
      span.end();
    });
    const work = one(finished(exporter), 'work');
    expect(lines[0]).toMatchObject({ msg: 'outside', app: 'mine' });
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[1]).toMatchObject({
      msg: 'inside',
      app: 'mine',
      trace_id: work.traceId,
      span_id: work.spanId,
      trace_flags: '01',
    });
  });
});

describe('parseTraceparent (W3C Trace Context)', () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const spanId = '00f067aa0ba902b7';

  it('reads the trace, the parent span and the sampled flag, and keeps tracestate as it came', () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`, 'vendor=x')).toEqual({
      traceId,
      spanId,
      sampled: true,
      traceState: 'vendor=x',
    });
    expect(parseTraceparent(`00-${traceId}-${spanId}-00`)?.sampled).toBe(false);
    // A later version may add fields.
    expect(parseTraceparent(`01-${traceId}-${spanId}-01-more`)?.traceId).toBe(traceId);
  });

  it.each([
    ['absent', undefined],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${spanId}-01`],
    ['an all-zero parent id', `00-${traceId}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${traceId}-${spanId}-01`],
    ['version 00 with more fields', `00-${traceId}-${spanId}-01-more`],
    ['upper case', `00-${traceId.toUpperCase()}-${spanId}-01`],
    ['too short', `00-${traceId.slice(1)}-${spanId}-01`],
    ['several headers', [`00-${traceId}-${spanId}-01`]],
    ['20,000 characters', `00-${traceId}-${spanId}-01-${'x'.repeat(20_000)}`],
  ])('ignores one that is %s', (_, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});
