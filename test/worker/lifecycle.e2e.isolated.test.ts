import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UnauthorizedError } from '../../src/client/index.js';
import {
  type ChangeWindow,
  type Connector,
  type ConnectorSource,
  incremental,
  type SourceApproval,
  type SourceContext,
} from '../../src/connector/index.js';
import { ValidationError } from '../../src/errors.js';
import type { TestHarness } from '../../src/testing/index.js';
import {
  type ConnectorOptions,
  ConnectorTokenRejectedError,
  ConnectorWorker,
  LifecycleError,
} from '../../src/worker/index.js';
import { openHarness } from './support/harness.js';
import { MemoryConnector, type MemorySource } from './support/memory-source.js';
import { recordingDispatcher } from './support/recording-dispatcher.js';

let harness: TestHarness;
let source: MemorySource;
let recorder: ReturnType<typeof recordingDispatcher>;
const ownWorkers: ConnectorWorker<Connector<object>>[] = [];

beforeEach(async () => {
  ({ harness, source } = await openHarness({ approvals: ['PO-1'] }));
  recorder = recordingDispatcher();
});
afterEach(async () => {
  await Promise.all(ownWorkers.splice(0).map((worker) => worker.stop()));
  await harness.close(); // before the dispatcher its workers may send through
  await recorder.close();
});

/** A worker not started by the harness, sending through the recorder; stopped after the test. */
function worker<C extends Connector<object>>(
  connector: C,
  overrides: Partial<ConnectorOptions> = {},
): ConnectorWorker<C> {
  const built = new ConnectorWorker(
    connector,
    harness.connectorOptions({
      service: harness.serviceOptions({ dispatcher: recorder.dispatcher }),
      ...overrides,
    }),
  );
  ownWorkers.push(built);
  return built;
}

/** A worker of a {@link MemoryConnector} over the test's source. */
const connector = (overrides: Partial<ConnectorOptions> = {}) =>
  worker(new MemoryConnector(source), overrides);

/** The log lines the worker writes (at the level its logger is given), parsed. */
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

  it('refuses a connector that declares no source when the worker is built, sending nothing', async () => {
    // What the compiler refuses (see connector-types.test-d.ts), from code it did not check.
    class Sourceless extends MemoryConnector {
      override readonly source = undefined as unknown as ConnectorSource;
    }
    const failure = (() => {
      try {
        worker(new Sourceless(source));
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(ValidationError);
    expect(failure).toMatchObject({
      code: 'validation',
      issues: [expect.objectContaining({ path: ['source'] })],
      message:
        'Invalid connector: Expected `source` to be declared with incremental({ changes }) or snapshot({ snapshot }), got `undefined` (undefined)',
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorder.requests).toEqual([]);
  });

  it('refuses a task declared without a handler, naming it, when the worker is built', () => {
    const connector = new MemoryConnector(source);
    (connector.tasks as Record<string, unknown>).escalate = { input: connector.tasks.approve.input };
    expect(() => worker(connector)).toThrow(
      expect.objectContaining({
        code: 'validation',
        issues: [expect.objectContaining({ path: ['tasks', 'escalate', 'run'] })],
      }),
    );
  });

  it('fails when the service rejects the token, after one request, without retrying', async () => {
    const logs = capturedLogs();
    const built = connector({
      service: harness.serviceOptions({ token: 'not-the-connector-token', dispatcher: recorder.dispatcher }),
      logger: { level: 'warn', destination: logs.destination },
    });
    const rejected = await built.start().catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(ConnectorTokenRejectedError);
    expect((rejected as ConnectorTokenRejectedError).cause).toBeInstanceOf(UnauthorizedError);
    expect(built.lifecycle).toBe('failed');
    expect(recorder.requests).toHaveLength(1);
    // Nothing is retried later either.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(recorder.requests).toHaveLength(1);
    // One line that names the fix, without a stack.
    expect(logs.lines).toEqual([
      expect.objectContaining({
        level: 50,
        code: 'connector_token_rejected',
        msg: expect.stringMatching(
          /^the connector failed to start: The Approval Service at \S+ refused the connector token \(GET \/v2\/connector\/state answered 401\): set APPROVAL_CONNECTOR_TOKEN/,
        ),
      }),
    ]);
    expect(logs.raw()).not.toContain('not-the-connector-token');
    expect(logs.raw()).not.toContain('stack');
  });

  it('keeps trying, and says so in one line naming the URL, without a stack, while the service cannot be reached; stop() ends it', async () => {
    const logs = capturedLogs();
    const baseUrl = await closedPortUrl();
    const built = connector({
      service: { baseUrl, token: 'connector-token', retry: { retries: 0 } },
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
    for (const line of logs.lines.filter(
      (one) => one.msg === 'cannot load the connector state yet; retrying',
    )) {
      expect(line).toMatchObject({
        url: new URL(String(baseUrl)).href,
        code: 'network',
        hint: `nothing answers at ${new URL(String(baseUrl)).href}: is the service running, and is its URL right (APPROVAL_SERVICE_URL, or the service.baseUrl option)?`,
      });
      expect(line.error).toEqual(expect.any(String));
      expect(line).not.toHaveProperty('err');
    }
    expect(logs.raw()).not.toMatch(/"stack"|\n\s+at /);
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
    const built: ConnectorWorker<MemoryConnector> = connector({
      logger: {
        level: 'info',
        // Stops the worker at the moment its operations port has opened: the last step of start().
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
    await expect(built.reconcileNow()).rejects.toBeInstanceOf(LifecycleError);
    await expect(built.resync()).rejects.toBeInstanceOf(LifecycleError);
    expect(recorder.requests).toHaveLength(requestsAfterStop);
  });

  it('interrupts a sync in progress quietly, counted as interrupted, not failed, keeping the cursor of what the service acknowledged', async () => {
    for (let n = 10; n < 60; n += 1) source.put(`PO-${n}`, `2026-05-01T10:00:${n}.000Z`);
    // A source that stalls after eleven records (two full batches sent, one record waiting) until the connector stops.
    class Stalling extends MemoryConnector {
      override readonly source = incremental({
        ordered: true,
        changes: (window, context) => this.#stalling(window, context),
      });

      async *#stalling(window: ChangeWindow, { signal }: SourceContext): AsyncIterable<SourceApproval> {
        let count = 0;
        for await (const record of this.system.changes(window)) {
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
    const built = new ConnectorWorker(
      new Stalling(source),
      harness.connectorOptions({
        sync: { batchSize: 5, concurrency: 1 },
        logger: { level: 'info', destination: logs.destination },
      }),
    );
    ownWorkers.push(built);
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
    expect(logs.lines.filter((line) => line.level >= 40)).toEqual([]);
    expect(logs.lines.filter((line) => line.msg.startsWith('sync run'))).toEqual([
      expect.objectContaining({
        level: 30,
        component: 'sync',
        mode: 'incremental',
        durationMs: expect.any(Number),
        msg: 'sync run interrupted by the stop; the next run resumes from the saved cursor',
      }),
    ]);
    const { body } = await built.metrics.render();
    expect(body).toMatch(
      /^approval_connector_sync_runs_total\{mode="incremental",outcome="interrupted"\} 1$/m,
    );
    expect(body).not.toMatch(/^approval_connector_sync_runs_total\{[^}]*outcome="failure"/m);
    // An interrupted run is no failure in a row either.
    expect(body).not.toMatch(/^approval_connector_sync_consecutive_failures\{/m);
    expect(harness.approvals().map((approval) => approval.id)).toEqual(first);
    expect(harness.state().state).toMatchObject({
      kit: { sync: { cursor: { lastModified: '2026-05-01T10:00:18.000Z', id: 'PO-18' } } },
    });
  });
});

describe('the moves of its state', () => {
  /** The moves the worker logged (`lifecycle state changed`, at info), in order, as `from>to`. */
  const logged = (lines: { level: number; msg: string; [key: string]: unknown }[]) =>
    lines
      .filter((line) => line.msg === 'lifecycle state changed')
      .map((line) => {
        expect(line.level).toBe(30);
        return `${String(line.from)}>${String(line.to)}`;
      });

  /** The value of the ready gauge, as a scrape shows it. */
  async function readyGauge(built: ConnectorWorker<Connector<object>>): Promise<number> {
    const { body } = await built.metrics.render();
    return Number(/^approval_connector_ready (\d+)$/m.exec(body)?.[1]);
  }

  /** Expects the worker to have logged just `moves` so far, and its ready gauge to read `ready`. */
  async function expectMoves(
    lines: { level: number; msg: string; [key: string]: unknown }[],
    built: ConnectorWorker<Connector<object>>,
    moves: string[],
    ready: 0 | 1,
  ): Promise<void> {
    expect(logged(lines)).toEqual(moves);
    expect(await readyGauge(built)).toBe(ready);
  }

  it('through a normal life: idle, starting, running, stopping, stopped; ready only while running', async () => {
    const logs = capturedLogs();
    const built = connector({ logger: { level: 'info', destination: logs.destination } });
    expect(await readyGauge(built)).toBe(0);
    const started = built.start();
    await expectMoves(logs.lines, built, ['idle>starting'], 0);
    await started;
    await expectMoves(logs.lines, built, ['idle>starting', 'starting>running'], 1);
    const stopping = built.stop();
    expect(built.lifecycle).toBe('stopping');
    expect(await readyGauge(built)).toBe(0);
    await stopping;
    await expectMoves(
      logs.lines,
      built,
      ['idle>starting', 'starting>running', 'running>stopping', 'stopping>stopped'],
      0,
    );
    // Each move is logged once, when it happens: the connector's own lines fall between them.
    const messages = logs.lines.map((line) => line.msg);
    expect(messages.indexOf('connector running')).toBeGreaterThan(
      logs.lines.findIndex((line) => line.to === 'running'),
    );
    expect(messages.at(-1)).toBe('connector stopped');
    expect(logs.lines.at(-2)).toMatchObject({ from: 'stopping', to: 'stopped' });
  });

  it('through a failed start: starting to failed, never ready, then stop() from failed', async () => {
    const logs = capturedLogs();
    const built = connector({
      service: harness.serviceOptions({ token: 'not-the-connector-token', dispatcher: recorder.dispatcher }),
      logger: { level: 'info', destination: logs.destination },
    });
    await expect(built.start()).rejects.toBeInstanceOf(ConnectorTokenRejectedError);
    expect(logged(logs.lines)).toEqual(['idle>starting', 'starting>failed']);
    expect(built.lifecycle).toBe('failed');
    expect(await readyGauge(built)).toBe(0);
    await built.stop();
    await expectMoves(
      logs.lines,
      built,
      ['idle>starting', 'starting>failed', 'failed>stopping', 'stopping>stopped'],
      0,
    );
  });

  it('through a stop before start: idle to stopped, in one move', async () => {
    const logs = capturedLogs();
    const built = connector({ logger: { level: 'info', destination: logs.destination } });
    await built.stop();
    await expectMoves(logs.lines, built, ['idle>stopped'], 0);
    // A refused start moves nothing.
    await expect(built.start()).rejects.toBeInstanceOf(LifecycleError);
    expect(logged(logs.lines)).toEqual(['idle>stopped']);
  });

  it('through a stop during start: starting to stopping, never running', async () => {
    const logs = capturedLogs();
    const built = connector({
      service: { baseUrl: await closedPortUrl(), token: 'connector-token', retry: { retries: 0 } },
      logger: { level: 'info', destination: logs.destination },
      random: () => 0,
    });
    const started = built.start();
    // Starting, and retrying: the service cannot be reached.
    await vi.waitFor(() =>
      expect(logs.lines.map((line) => line.msg)).toContain('cannot load the connector state yet; retrying'),
    );
    expect(await readyGauge(built)).toBe(0);
    await built.stop();
    await started;
    await expectMoves(logs.lines, built, ['idle>starting', 'starting>stopping', 'stopping>stopped'], 0);
  });

  it('logs every change of state, each move starting where the last one ended', async () => {
    const logs = capturedLogs();
    const built = connector({ logger: { level: 'info', destination: logs.destination } });
    const seen: string[] = [built.lifecycle];
    const record = () => {
      if (seen.at(-1) !== built.lifecycle) seen.push(built.lifecycle);
    };
    const started = built.start();
    record();
    await started;
    record();
    await built.syncNow();
    record();
    const stopping = built.stop();
    record();
    await stopping;
    record();
    const moves = logged(logs.lines);
    expect(moves.map((move) => move.split('>')[0])).toEqual(seen.slice(0, -1));
    expect(moves.map((move) => move.split('>')[1])).toEqual(seen.slice(1));
  });
});
