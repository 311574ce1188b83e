import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeEach } from 'vitest';

/**
 * Registers an OpenTelemetry SDK for the test file, as an application would (a tracer provider, the async-hooks
 * context manager, the W3C propagator), with an in-memory exporter that each test starts empty. Only in an
 * `*.isolated.test.ts`: the registration is global.
 */
export function installTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  beforeEach(() => exporter.reset());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });
  return exporter;
}

/** A finished span as the tests read it: its name, ids, its parent's id, kind and attributes. */
export interface SpanSummary {
  name: string;
  traceId: string;
  spanId: string;
  parentId: string | undefined;
  kind: number;
  attributes: Record<string, unknown>;
  status: number;
}

export function summarize(span: ReadableSpan): SpanSummary {
  const { traceId, spanId } = span.spanContext();
  return {
    name: span.name,
    traceId,
    spanId,
    parentId: span.parentSpanContext?.spanId,
    kind: span.kind,
    attributes: { ...span.attributes },
    status: span.status.code,
  };
}

/** The finished spans, summarized. */
export function finished(exporter: InMemorySpanExporter): SpanSummary[] {
  return exporter.getFinishedSpans().map(summarize);
}

/** The one finished span of this name (and, when given, this parent); throws when there is none or several. */
export function one(spans: SpanSummary[], name: string, parent?: SpanSummary): SpanSummary {
  const found = spans.filter(
    (span) => span.name === name && (parent === undefined || span.parentId === parent.spanId),
  );
  if (found.length !== 1) {
    throw new Error(
      `Expected one span "${name}", found ${found.length}: ${spans.map((s) => s.name).join(', ')}`,
    );
  }
  return found[0] as SpanSummary;
}

/** The names of the children of `parent`, sorted. */
export function childrenOf(spans: SpanSummary[], parent: SpanSummary): string[] {
  return spans
    .filter((span) => span.parentId === parent.spanId)
    .map((span) => span.name)
    .sort();
}
