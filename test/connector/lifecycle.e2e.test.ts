import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UnauthorizedError } from '../../src/client/index.js';
import {
  type ChangeWindow,
  Connector,
  type ConnectorOptions,
  LifecycleError,
  type SourceApproval,
  type SourceContext,
  type TaskHandlers,
} from '../../src/connector/index.js';
import { ApprovalKitError } from '../../src/errors.js';
import { createTestHarness, type TestHarness } from '../../src/testing/index.js';
import { MemoryConnector, MemorySource, taskSchemas } from './support/memory-source.js';
import { recordingDispatcher } from './support/recording-dispatcher.js';

let harness: TestHarness;
let source: MemorySource;
let recorder: ReturnType<typeof recordingDispatcher>;
const ownConnectors: Connector[] = [];

beforeEach(async () => {
  harness = await createTestHarness();
  source = new MemorySource();
  source.put('PO-1', '2026-05-01T10:00:00.000Z');
  recorder = recordingDispatcher();
});
afterEach(async () => {
  await Promise.all(ownConnectors.splice(0).map((connector) => connector.stop()));
  await harness.close();
  await recorder.close();
});

/** A connector not started by the harness, sending through the recorder; stopped after the test. */
function connector(overrides: Partial<ConnectorOptions> = {}): MemoryConnector {
  const built = new MemoryConnector(
    harness.connectorOptions({
      service: harness.serviceOptions({ dispatcher: recorder.dispatcher }),
      ...overrides,
    }),
    source,
  );
  ownConnectors.push(built);
  return built;
}

/** Log lines written at warn and above, parsed. */
function capturedLogs() {
  const lines: { level: number; msg: string; attempt?: number; [key: string]: unknown }[] = [];
  let raw = '';
  const destination = new Writable({
    write(chunk, _encoding, done) {
      raw += String(chunk);
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination, raw: () => raw };
}

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe('start', () => {
  it('moves from idle through starting to running', async () => {
    const built = connector();
    expect(built.lifecycle).toBe('idle');
    const started = built.start();
    expect(built.lifecycle).toBe('starting');
    await started;
    expect(built.lifecycle).toBe('running');
    expect(built.ready).toBe(true);
  });

  it('refuses a second start with a LifecycleError, while starting and once running', async () => {
    const built = connector();
    const started = built.start();
    await expect(async () => built.start()).rejects.toMatchObject({
      code: 'lifecycle',
      message: 'Cannot start a connector that is starting',
    });
    await started;
    await expect(async () => built.start()).rejects.toThrow(LifecycleError);
    await expect(async () => built.start()).rejects.toMatchObject({
      code: 'lifecycle',
      message: 'Cannot start a connector that is running',
    });
    expect(built.lifecycle).toBe('running');
  });

  it('fails with a clear error, sending nothing, when the connector implements neither changes() nor snapshot()', async () => {
    class Sourceless extends Connector<typeof taskSchemas> {
      readonly tasks = taskSchemas;
      readonly handlers: TaskHandlers<typeof taskSchemas> = {
        approve: async () => {},
        reject: async () => {},
      };
    }
    const built = new Sourceless(
      harness.connectorOptions({ service: harness.serviceOptions({ dispatcher: recorder.dispatcher }) }),
    );
    ownConnectors.push(built);
    const failure = await built.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApprovalKitError);
    expect(failure).toMatchObject({
      code: 'invalid_connector',
      message: 'A connector implements changes() or snapshot() to read its source',
    });
    expect(built.lifecycle).toBe('failed');
    expect(built.ready).toBe(false);
    expect(recorder.requests).toEqual([]);
    await built.stop();
    expect(built.lifecycle).toBe('stopped');
  });

  it('fails when the service rejects the token, after one request, without retrying', async () => {
    const logs = capturedLogs();
    const built = connector({
      service: harness.serviceOptions({ token: 'not-the-connector-token', dispatcher: recorder.dispatcher }),
      logger: { level: 'warn', destination: logs.destination },
    });
    await expect(built.start()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(built.lifecycle).toBe('failed');
    expect(recorder.requests).toHaveLength(1);
    // Nothing is retried later either.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(recorder.requests).toHaveLength(1);
    expect(logs.lines.map((line) => line.msg)).toEqual(['the connector failed to start']);
    expect(logs.raw()).not.toContain('not-the-connector-token');
  });

  it('keeps trying, and says so, while the service cannot be reached; stop() ends it', async () => {
    const logs = capturedLogs();
    const built = connector({
      service: { baseUrl: await closedPortUrl(), token: 'connector-token', retry: { retries: 0 } },
      logger: { level: 'warn', destination: logs.destination },
      random: () => 0,
    });
    let settled = false;
    const started = built.start().finally(() => {
      settled = true;
    });
    await vi.waitFor(
      () =>
        expect(
          logs.lines.filter((line) => line.msg === 'cannot load the connector state yet; retrying'),
        ).toEqual([
          expect.objectContaining({ level: 40, attempt: 0, retryInMs: 500 }),
          expect.objectContaining({ level: 40, attempt: 1, retryInMs: 1_000 }),
        ]),
      { timeout: 5_000 },
    );
    expect(settled).toBe(false);
    expect(built.lifecycle).toBe('starting');
    expect(built.ready).toBe(false);

    await built.stop();
    await expect(started).resolves.toBeUndefined();
    expect(built.lifecycle).toBe('stopped');
    expect(logs.raw()).not.toContain('connector-token');
    expect(logs.lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});

describe('stop', () => {
  it('during start, while the operations port opens, keeps the connector from running or scheduling work', async () => {
    const logs = capturedLogs();
    let stopping: Promise<void> | undefined;
    const built: MemoryConnector = connector({
      logger: {
        level: 'info',
        // Stops the connector at the moment its operations port has opened: the last step of start().
        destination: {
          write(line: string) {
            logs.destination.write(line);
            if (line.includes('"msg":"operations endpoints listening"')) stopping ??= built.stop();
          },
        },
      },
      sync: { runOnStart: true, schedule: 1 },
      operations: { port: 0 },
    });
    await built.start();
    expect(stopping).toBeDefined();
    expect(built.lifecycle).not.toBe('running');
    expect(built.ready).toBe(false);
    await stopping;
    expect(built.lifecycle).toBe('stopped');
    const before = recorder.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(recorder.requests).toHaveLength(before);
    const messages = logs.lines.map((line) => line.msg);
    expect(messages).not.toContain('connector running');
    expect(messages).not.toContain('sync run finished');
    expect(messages.at(-1)).toBe('connector stopped');
  });

  it('returns the same promise to every call, and a second call is harmless', async () => {
    const built = connector();
    await built.start();
    const first = built.stop();
    const second = built.stop();
    expect(second).toBe(first);
    expect(built.lifecycle).toBe('stopping');
    expect(built.ready).toBe(false);
    await first;
    expect(built.lifecycle).toBe('stopped');
    expect(built.stop()).toBe(first);
    await built.stop();
    expect(built.lifecycle).toBe('stopped');
  });

  it('stops an idle connector without sending anything, and it cannot start afterwards', async () => {
    const built = connector();
    await built.stop();
    expect(built.lifecycle).toBe('stopped');
    expect(recorder.requests).toEqual([]);
    await expect(async () => built.start()).rejects.toMatchObject({
      code: 'lifecycle',
      message: 'Cannot start a connector that is stopped',
    });
  });

  it('makes syncNow() and resync() reject once stopping', async () => {
    const built = connector();
    await built.start();
    await built.syncNow();
    const stopping = built.stop();
    await expect(built.syncNow()).rejects.toMatchObject({ code: 'lifecycle' });
    await stopping;
    const requestsAfterStop = recorder.requests.length;
    await expect(built.syncNow()).rejects.toBeInstanceOf(LifecycleError);
    await expect(built.syncNow('reconcile')).rejects.toBeInstanceOf(LifecycleError);
    await expect(built.resync()).rejects.toBeInstanceOf(LifecycleError);
    expect(recorder.requests).toHaveLength(requestsAfterStop);
  });

  it('interrupts a sync in progress quietly, keeping the cursor of what the service acknowledged', async () => {
    for (let n = 10; n < 60; n += 1) source.put(`PO-${n}`, `2026-05-01T10:00:${n}.000Z`);
    // A source that stalls after eleven records (two full batches sent, one record waiting) until the connector stops.
    class Stalling extends MemoryConnector {
      // The kit always passes the context; MemoryConnector's own signature leaves it out.
      override async *changes(window: ChangeWindow, context?: SourceContext): AsyncIterable<SourceApproval> {
        if (context === undefined) throw new Error('changes() called without its context');
        const { signal } = context;
        let count = 0;
        for await (const record of this.source.changes(window)) {
          if (count++ === 11) {
            await new Promise((_, reject) =>
              signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
            );
          }
          yield record;
        }
      }
    }
    const logs = capturedLogs();
    const built = new Stalling(
      harness.connectorOptions({
        sync: { batchSize: 5, concurrency: 1, ordered: true },
        logger: { level: 'warn', destination: logs.destination },
      }),
      source,
    );
    ownConnectors.push(built);
    await built.start();
    const run = built.syncNow();
    const first = ['PO-1', ...Array.from({ length: 9 }, (_, n) => `PO-${n + 10}`)];
    await vi.waitFor(() => {
      expect(harness.approvals().map((approval) => approval.id)).toEqual(first);
      expect(harness.state().state).toMatchObject({ kit: { sync: { cursor: { id: 'PO-18' } } } });
    });
    await built.stop();
    await expect(run).rejects.toMatchObject({ code: 'stopping' });
    expect(built.lifecycle).toBe('stopped');
    expect(logs.lines).toEqual([]);
    expect(harness.approvals().map((approval) => approval.id)).toEqual(first);
    expect(harness.state().state).toMatchObject({
      kit: { sync: { cursor: { lastModified: '2026-05-01T10:00:18.000Z', id: 'PO-18' } } },
    });
  });
});
