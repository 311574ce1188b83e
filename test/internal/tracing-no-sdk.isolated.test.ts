import { type Attributes, context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  type Sampler,
  SamplingDecision,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NOOP_SPAN,
  remoteContext,
  startSpan,
  traceHeaders,
  tracerProviderRegistered,
} from '../../src/internal/tracing.js';

afterEach(() => {
  trace.disable();
  context.disable();
});

describe('the kit’s spans with the API installed and no SDK (traces off)', () => {
  it('starts no span and computes no attribute: what the application does not trace costs a check', () => {
    expect(tracerProviderRegistered()).toBe(false);
    let computed = 0;
    const span = startSpan('GET /v2/connector/state', {
      kind: 'client',
      attributes: () => {
        computed += 1;
        return { 'url.full': 'http://service.example/v2/connector/state' };
      },
    });
    expect(span).toBe(NOOP_SPAN);
    expect(computed).toBe(0);
    expect(traceHeaders(span.context)).toBeUndefined();
  });

  it('still carries a caller’s trace on, as the API’s no-op tracer does: a span under a remote parent has its context', () => {
    const parent = remoteContext({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
    });
    const span = startSpan('GET /v2/connector/state', { kind: 'client', parent });
    expect(span).not.toBe(NOOP_SPAN);
    expect(span.recording).toBe(false);
    expect(span.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });
});

describe('the kit’s spans once an SDK is registered', () => {
  it('are recorded from then on, also after the API was disabled and an SDK registered again, and give their attributes to the sampler as they start', () => {
    const sampled: Attributes[] = [];
    const sampler: Sampler = {
      shouldSample: (_context, _traceId, _name, _kind, attributes) => {
        sampled.push({ ...attributes });
        return { decision: SamplingDecision.RECORD_AND_SAMPLED };
      },
      toString: () => 'recording sampler',
    };
    // A span under a remote parent while nothing is registered gets the kit its tracer; disabling the API then puts
    // a new proxy in place of the one that tracer delegates to.
    startSpan('before', {
      parent: remoteContext({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), sampled: true }),
    });
    trace.disable();
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new TracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    );
    expect(tracerProviderRegistered()).toBe(true);
    startSpan('PATCH /v2/connector/tasks/{taskId}', {
      kind: 'client',
      parent: ROOT_CONTEXT as never,
      attributes: () => ({ 'http.request.method': 'PATCH', 'http.request.resend_count': undefined }),
    }).end();
    expect(sampled).toEqual([{ 'http.request.method': 'PATCH' }]);
    expect(exporter.getFinishedSpans().map((span) => span.attributes)).toEqual([
      { 'http.request.method': 'PATCH' },
    ]);
    trace.disable();
    expect(tracerProviderRegistered()).toBe(false);
  });
});
