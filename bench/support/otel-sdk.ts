/**
 * Imported first (`--import`) by a connector process of the benchmarks that traces: an OpenTelemetry SDK registered
 * as an application would (tracer provider with a batch processor, async-hooks context manager, W3C propagator),
 * recording every span and dropping it at export, so that what is measured is the kit's spans and not a collector.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';

const dropped: SpanExporter = {
  export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
  shutdown: async () => {},
};
trace.setGlobalTracerProvider(
  new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: dropped })] }),
);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
