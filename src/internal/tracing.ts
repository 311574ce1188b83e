/**
 * The kit's spans, through the OpenTelemetry API (`@opentelemetry/api`), an optional peer dependency: the
 * application installs it with the SDK of its choice, and the kit's spans join its traces. Loaded once, here, as the
 * kit loads, by a guarded `require`: an application without it gets spans that do nothing, and pays one check per
 * span. With the API but no SDK registered, and no span to carry on, a span costs a check too: the tracer is not
 * asked. Why it is loaded so is in docs/tracing.md.
 *
 * What a span carries is decided here too: attributes only (no events, no status message), each string among them
 * {@link bounded}, so that no free text of an error (which may quote a secret) and no long text from the network
 * reaches a span.
 * @module
 */
import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@opentelemetry/api';
import { bounded } from './bounded.js';

/**
 * The API, when the application installed it. Required, not imported: a static import fails to load where it is
 * missing, and a dynamic one would need a top-level await, which a bundle of the kit in CommonJS cannot hold. The
 * API keeps what the application registers (its SDK) in a global, so that its CommonJS build, required here, and
 * its ES module build, which the application may import, share it.
 */
const api = loadApi();

function loadApi(): typeof OpenTelemetry | undefined {
  try {
    // In a CommonJS bundle of the kit, `import.meta.url` is gone and `require` is the bundle's own.
    const from: unknown = import.meta.url;
    const load = typeof from === 'string' ? createRequire(from) : require;
    return load('@opentelemetry/api') as typeof OpenTelemetry;
  } catch {
    return undefined;
  }
}

/** The instrumentation scope of every span of the kit. */
export const TRACER_NAME = 'approval-connector-kit';

/** Whether the OpenTelemetry API could be loaded: without it, every span is a no-op. */
export const tracingAvailable = api !== undefined;

/** A trace context: what a span's children start under. Opaque outside this module. */
export interface TraceContext {
  readonly traceContext: unique symbol;
}

export type SpanKindName = 'internal' | 'client' | 'server' | 'consumer';

/** A span's attributes; an `undefined` value is left out. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface SpanOptions {
  kind?: SpanKindName;
  /**
   * Given to the tracer as the span starts, so that a sampler sees them. A function is called only when the span
   * is recorded or carries a context: what costs a string or two to compute is then free while nothing traces.
   */
  attributes?: SpanAttributes | (() => SpanAttributes);
  /** What the span starts under; the active context when omitted. */
  parent?: TraceContext | undefined;
  /** Starts a trace of its own, whatever context is active. */
  root?: boolean;
  /** When it started, in milliseconds since the epoch, for a span recorded after the fact; now when omitted. */
  startTime?: number;
  /**
   * Spans it links to: what it was started by without being their child, each span's context (those that carry no
   * span are left out). OpenTelemetry's way for a batch that serves several requests, each of its own trace.
   */
  links?: readonly (TraceContext | undefined)[];
}

/** Links a span starts with, at most: the SDK's own default limit (`OTEL_SPAN_LINK_COUNT_LIMIT`). */
export const SPAN_LINK_LIMIT = 128;

/** A span of the kit. */
export interface TraceSpan {
  /** Whether anything records it: attributes are worth computing only then. */
  readonly recording: boolean;
  /** The context in which this span is the active one: the parent of what it starts. */
  readonly context: TraceContext | undefined;
  /** Its trace's id, 32 hexadecimal digits; `undefined` when there is none. */
  readonly traceId: string | undefined;
  set(attributes: SpanAttributes): void;
  /** Marks it failed: `error.type` and the error status, with no message. */
  fail(errorType: string): void;
  /** Ends it; `endTime` in milliseconds since the epoch, now when omitted. Idempotent. */
  end(endTime?: number): void;
}

/** The span of what is not traced: it records nothing and carries no context. */
export const NOOP_SPAN: TraceSpan = Object.freeze({
  recording: false,
  context: undefined,
  traceId: undefined,
  set: () => {},
  fail: () => {},
  end: () => {},
});

let tracer: { provider: OpenTelemetry.TracerProvider; tracer: OpenTelemetry.Tracer } | undefined;

/**
 * The kit's tracer, got again only when the global provider changed: the API's proxy delegates to a provider
 * registered after the tracer was got, but `trace.disable()` puts a new proxy in its place, to which a tracer got
 * before never delegates.
 */
function kitTracer(provider: OpenTelemetry.TracerProvider): OpenTelemetry.Tracer {
  if (tracer?.provider !== provider) tracer = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return tracer.tracer;
}

class ApiSpan implements TraceSpan {
  readonly #otel: typeof OpenTelemetry;
  readonly #span: OpenTelemetry.Span;
  readonly context: TraceContext;
  readonly recording: boolean;
  readonly traceId: string;
  #ended = false;

  constructor(otel: typeof OpenTelemetry, span: OpenTelemetry.Span, parent: OpenTelemetry.Context) {
    this.#otel = otel;
    this.#span = span;
    this.context = otel.trace.setSpan(parent, span) as unknown as TraceContext;
    this.recording = span.isRecording();
    this.traceId = span.spanContext().traceId;
  }

  set(attributes: SpanAttributes): void {
    if (!this.recording) return;
    const kept = boundedAttributes(attributes);
    if (kept !== undefined) this.#span.setAttributes(kept);
  }

  fail(errorType: string): void {
    if (!this.recording) return;
    this.#span.setAttribute('error.type', bounded(errorType));
    this.#span.setStatus({ code: this.#otel.SpanStatusCode.ERROR });
  }

  end(endTime?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span.end(endTime);
  }
}

const KINDS = { internal: 0, server: 1, client: 2, consumer: 4 } as const satisfies Record<
  SpanKindName,
  number
>;

/**
 * Starts a span. It is not made active: give its `context` as the `parent` of its children, or run code under it
 * with {@link withContext} ({@link inSpan} does both).
 */
export function startSpan(name: string, options: SpanOptions = {}): TraceSpan {
  if (api === undefined) return NOOP_SPAN;
  const parent = options.root
    ? api.ROOT_CONTEXT
    : ((options.parent as OpenTelemetry.Context | undefined) ?? api.context.active());
  const provider = api.trace.getTracerProvider();
  // No SDK, and no span to carry on: the API's no-op tracer would answer with a span of no context, so none is
  // asked for. This is the path of every span of a kit whose application traces nothing.
  if (api.trace.getSpan(parent) === undefined && !isRegistered(provider)) return NOOP_SPAN;
  const links = linksOf(api, options.links);
  const attributes = boundedAttributes(
    typeof options.attributes === 'function' ? options.attributes() : options.attributes,
  );
  const span = kitTracer(provider).startSpan(
    name,
    {
      kind: KINDS[options.kind ?? 'internal'],
      ...(attributes === undefined ? {} : { attributes }),
      ...(options.startTime === undefined ? {} : { startTime: options.startTime }),
      ...(links.length === 0 ? {} : { links }),
    },
    parent,
  );
  // Without an SDK, or outside any trace: nothing to record, and no context to carry on.
  if (!span.isRecording() && !api.isSpanContextValid(span.spanContext())) return NOOP_SPAN;
  return new ApiSpan(api, span, parent);
}

/** `attributes` as a span takes them: without the `undefined` ones, each string {@link bounded}. */
function boundedAttributes(attributes: SpanAttributes | undefined): OpenTelemetry.Attributes | undefined {
  if (attributes === undefined) return undefined;
  const kept: OpenTelemetry.Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) kept[key] = typeof value === 'string' ? bounded(value) : value;
  }
  return kept;
}

/** The span contexts of `contexts` that carry a valid span, at most {@link SPAN_LINK_LIMIT}. */
function linksOf(otel: typeof OpenTelemetry, contexts: SpanOptions['links']): OpenTelemetry.Link[] {
  const links: OpenTelemetry.Link[] = [];
  for (const context of contexts ?? []) {
    if (links.length === SPAN_LINK_LIMIT) break;
    const spanContext =
      context === undefined
        ? undefined
        : otel.trace.getSpanContext(context as unknown as OpenTelemetry.Context);
    if (spanContext !== undefined && otel.isSpanContextValid(spanContext))
      links.push({ context: spanContext });
  }
  return links;
}

/**
 * Runs `run` in a new span, active while it runs, and ends the span when it settles. A failure marks the span
 * failed with {@link errorTypeOf}, and is thrown on.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  run: (span: TraceSpan) => Promise<T>,
): Promise<T> {
  const span = startSpan(name, options);
  if (span !== NOOP_SPAN) return inRecordedSpan(span, run);
  // Not an async function, so that what nothing traces costs no promise of its own; a throw still rejects.
  try {
    return run(span);
  } catch (error) {
    return Promise.reject(error);
  }
}

async function inRecordedSpan<T>(span: TraceSpan, run: (span: TraceSpan) => Promise<T>): Promise<T> {
  try {
    return await withContext(span.context, () => run(span));
  } catch (error) {
    span.fail(errorTypeOf(error));
    throw error;
  } finally {
    span.end();
  }
}

/** Runs `run` with `context` active (the API's context manager carries it into what `run` starts). */
export function withContext<T>(context: TraceContext | undefined, run: () => T): T {
  if (api === undefined || context === undefined) return run();
  return api.context.with(context as unknown as OpenTelemetry.Context, run);
}

/**
 * Whether the application has registered a tracer provider (an SDK) with the API already: then it is used as it
 * is, and none is started.
 */
export function tracerProviderRegistered(): boolean {
  return api !== undefined && isRegistered(api.trace.getTracerProvider());
}

/** Whether the API's global `provider` delegates to a provider registered with it, rather than to its no-op. */
function isRegistered(provider: Partial<OpenTelemetry.ProxyTracerProvider>): boolean {
  // Another copy of the API registered it (its proxy delegates to a no-op of its own), or not a proxy: as if an
  // SDK were there, which costs the API's no-op path at worst.
  if (typeof provider.getDelegate !== 'function') return true;
  return provider.getDelegate() !== NOOP_PROVIDER;
}

/** What the API's proxy delegates to while nothing is registered: its no-op provider, one per copy of the API. */
const NOOP_PROVIDER = api === undefined ? undefined : new api.ProxyTracerProvider().getDelegate();

/** The active context, to start spans under it later, from elsewhere. */
export function activeContext(): TraceContext | undefined {
  return api?.context.active() as TraceContext | undefined;
}

/**
 * The headers that carry `context` (the active one when omitted) to the next service, by the propagators the
 * application registered (the SDK's default: W3C `traceparent`, `tracestate` and `baggage`); `undefined` when
 * there is nothing to carry.
 */
export function traceHeaders(context?: TraceContext): Record<string, string> | undefined {
  if (api === undefined) return undefined;
  const carrier: Record<string, string> = {};
  api.propagation.inject((context as OpenTelemetry.Context | undefined) ?? api.context.active(), carrier);
  return Object.keys(carrier).length === 0 ? undefined : carrier;
}

/** The ids of the active span, as a log line carries them; `undefined` outside a span. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
  trace_flags: string;
}

/** The ids of the span active now, for a log line; `undefined` when none is, or without the API. */
export function activeTraceIds(): TraceIds | undefined {
  if (api === undefined) return undefined;
  const span = api.trace.getSpan(api.context.active());
  if (span === undefined) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!api.isSpanContextValid(span.spanContext())) return undefined;
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) };
}

/** What a W3C `traceparent` header says: the caller's trace and span. */
export interface RemoteParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
  /** The `tracestate` header that came with it, as it came. */
  traceState?: string | undefined;
}

// version "-" trace-id "-" parent-id "-" trace-flags; an all-zero trace id or parent id is invalid, and so is
// version ff. A later version may add fields after a dash (https://www.w3.org/TR/trace-context/#versioning-of-traceparent).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Reads a W3C `traceparent` header (https://www.w3.org/TR/trace-context/#traceparent-header), without the API:
 * `undefined` when it is absent or malformed, as the recommendation says to treat it.
 */
export function parseTraceparent(header: unknown, traceState?: unknown): RemoteParent | undefined {
  if (typeof header !== 'string' || header.length > 512) return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return {
    traceId,
    spanId,
    sampled: (Number.parseInt(flags, 16) & 1) === 1,
    traceState: typeof traceState === 'string' && traceState.length <= 512 ? traceState : undefined,
  };
}

/** A context whose parent is the remote span `parent` names, to start a server span under. */
export function remoteContext(parent: RemoteParent): TraceContext | undefined {
  if (api === undefined) return undefined;
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.sampled ? 1 : 0,
    isRemote: true,
    ...(parent.traceState === undefined ? {} : { traceState: api.createTraceState(parent.traceState) }),
  }) as unknown as TraceContext;
}

/**
 * What a span's `error.type` says of a failure: the kit's error code (`timeout`, `network`, `rate_limited`), else
 * the error's class name, else `_OTHER`, as the semantic conventions say when nothing better is known. Never the
 * message, which may quote a secret.
 */
export function errorTypeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '' && name !== 'Error') return name;
  }
  return '_OTHER';
}

/** Milliseconds since the epoch, on the clock spans are timed with, for a span recorded after the fact. */
export function spanClock(): number {
  return performance.timeOrigin + performance.now();
}
