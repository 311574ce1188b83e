import { createRequire as nodeCreateRequire } from 'node:module';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';

// An application that has not installed @opentelemetry/api: requiring it fails, as it does in a project without it.
vi.mock('node:module', async (original) => {
  const actual = await original<typeof import('node:module')>();
  return {
    ...actual,
    createRequire: (from: string | URL) => {
      const require = nodeCreateRequire(from);
      return (id: string) => {
        if (id === '@opentelemetry/api') {
          throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
        }
        return require(id);
      };
    },
  };
});

const tracing = await import('../../src/internal/tracing.js');
const { createLogger } = await import('../../src/worker/operations/logger.js');

describe('without @opentelemetry/api', () => {
  it('loads, and every span is a no-op that runs what it wraps', async () => {
    expect(tracing.tracingAvailable).toBe(false);
    const span = tracing.startSpan('sync incremental', { attributes: { a: 1 } });
    expect(span).toBe(tracing.NOOP_SPAN);
    expect(span.context).toBeUndefined();
    expect(await tracing.inSpan('x', {}, async () => 42)).toBe(42);
    expect(tracing.withContext(undefined, () => 'ran')).toBe('ran');
    expect(tracing.traceHeaders()).toBeUndefined();
    expect(tracing.activeTraceIds()).toBeUndefined();
    expect(tracing.tracerProviderRegistered()).toBe(false);
    // The backend still reads a traceparent: it needs no API for that.
    expect(tracing.parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')?.traceId).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
  });

  it('writes log lines without trace fields', () => {
    let written = '';
    const destination = new Writable({
      write(chunk, _encoding, done) {
        written += String(chunk);
        done();
      },
    });
    createLogger({ destination }).info('hello');
    expect(JSON.parse(written)).not.toHaveProperty('trace_id');
  });
});
