import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, type PinoLogger } from '../../src/worker/operations/index.js';

// How a worker process turns traces on (src/worker/process/tracing-sdk.ts), with the Node SDK replaced by a stand-in:
// the process test of `connector run` starts the real one.

const started: unknown[] = [];

function logger(): { log: PinoLogger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), lines };
}

async function load(installed: boolean) {
  vi.resetModules();
  vi.doMock('@opentelemetry/sdk-node', () => {
    if (!installed) throw new Error("Cannot find package '@opentelemetry/sdk-node'");
    return {
      NodeSDK: class {
        constructor(readonly options: unknown) {}
        start() {
          started.push(this.options);
        }
        async shutdown() {}
      },
    };
  });
  return import('../../src/worker/process/tracing-sdk.js');
}

afterEach(() => {
  started.length = 0;
  trace.disable();
  vi.doUnmock('@opentelemetry/sdk-node');
});

describe('startTracingSdk', () => {
  it('starts the SDK, named approval-connector unless OTEL_* names the service, and says where traces go, without credentials', async () => {
    const { startTracingSdk } = await load(true);
    const { log, lines } = logger();
    const sdk = await startTracingSdk(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:secret@collector.example.com:4318/?key=secret' },
      log,
    );
    expect(sdk).toBeDefined();
    expect(started).toEqual([{ serviceName: 'approval-connector' }]);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'tracing with the OpenTelemetry SDK, configured by the OTEL_* variables',
        exporter: 'otlp',
        endpoint: 'https://collector.example.com:4318/',
        protocol: 'http/protobuf',
        serviceName: 'approval-connector',
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret');

    await startTracingSdk({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=jira,team=a' }, log);
    expect(started[1]).toEqual({});
  });

  it('starts nothing with OTEL_SDK_DISABLED=true, and says nothing', async () => {
    const { startTracingSdk } = await load(true);
    const { log, lines } = logger();
    expect(await startTracingSdk({ OTEL_SDK_DISABLED: 'true' }, log)).toBeUndefined();
    expect(started).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('keeps a tracer provider the application registered, and says so', async () => {
    const { startTracingSdk } = await load(true);
    trace.setGlobalTracerProvider(new TracerProvider());
    const { log, lines } = logger();
    expect(await startTracingSdk({}, log)).toBeUndefined();
    expect(started).toEqual([]);
    expect(lines.map((line) => line.msg)).toEqual([
      'tracing with the OpenTelemetry tracer provider the application registered',
    ]);
  });

  it('without the SDK installed, starts nothing and says so at debug', async () => {
    const { startTracingSdk } = await load(false);
    const { log, lines } = logger();
    expect(await startTracingSdk({}, log)).toBeUndefined();
    expect(lines).toEqual([
      expect.objectContaining({ level: 20, msg: 'traces off: @opentelemetry/sdk-node is not installed' }),
    ]);
  });
});
