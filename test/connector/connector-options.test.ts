import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { resolveConnectorOptions } from '../../src/connector/connector-options.js';
import {
  type ConnectorOptions,
  ConnectorWorker,
  MemoryKeyStore,
  SHUTDOWN_MARGIN_MS,
} from '../../src/connector/index.js';
import { ValidationError } from '../../src/errors.js';
import { MemoryConnector, MemorySource } from './support/memory-source.js';
import { recordingDispatcher } from './support/recording-dispatcher.js';

// The lease of the reference backend by default (docs/api-contract.md).
const REFERENCE_LEASE_MS = 60_000;

const recorder = recordingDispatcher();
afterEach(() => {
  recorder.requests.length = 0;
});
afterAll(() => recorder.close());

const options = (overrides: Partial<ConnectorOptions>): ConnectorOptions => ({
  service: { baseUrl: 'http://127.0.0.1:9', token: 'connector-token', dispatcher: recorder.dispatcher },
  logger: { level: 'silent' },
  keyStore: new MemoryKeyStore(),
  ...overrides,
});

/** A worker of a connector over an empty source, built with these options. */
const build = (built: ConnectorOptions) =>
  new ConnectorWorker(new MemoryConnector(new MemorySource()), built);

function constructionError(overrides: Partial<ConnectorOptions>): ValidationError {
  try {
    build(options(overrides));
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('the worker was built');
}

describe('connector options', () => {
  it.each<[string, Partial<ConnectorOptions>, string]>([
    ['sync.batchSize', { sync: { batchSize: 0 } }, '0'],
    ['sync.batchSize', { sync: { batchSize: 501 } }, '501'],
    ['sync.batchBytes', { sync: { batchBytes: 10 * 1024 * 1024 } }, '10485760'],
    ['sync.concurrency', { sync: { concurrency: 1.5 } }, '1.5'],
    ['sync.schedule', { sync: { schedule: 'not cron' } }, '"not cron"'],
    ['sync.schedule', { sync: { schedule: 0 } }, '0'],
    ['sync.reconcileSchedule', { sync: { reconcileSchedule: '99 * * * *' } }, '"99 * * * *"'],
    ['sync.overlapMs', { sync: { overlapMs: -1 } }, '-1'],
    ['tasks.concurrency', { tasks: { concurrency: -1 } }, '-1'],
    ['tasks.idleMinMs', { tasks: { idleMinMs: 0 } }, '0'],
    ['tasks.watchdogMs', { tasks: { watchdogMs: Number.NaN } }, 'null'],
    ['tasks.timeoutMs', { tasks: { timeoutMs: 0 } }, '0'],
    ['shutdown.graceMs', { shutdown: { graceMs: -5 } }, '-5'],
  ])('rejects a bad %s, naming it and the value received', (name, overrides, shown) => {
    const error = constructionError(overrides);
    expect(error.code).toBe('validation');
    const [first, ...rest] = name.split('.');
    expect(error.issues).toContainEqual(
      expect.objectContaining({
        path: [first, ...rest],
        message: expect.stringContaining(`got \`${shown}\``),
      }),
    );
    expect(error.message).toContain('Invalid connector options');
    expect(error.message).toContain(`${name}: `);
    expect(error.message).toContain(`got \`${shown}\``);
  });

  it('names the option whose type is wrong', () => {
    const error = constructionError({ sync: { batchSize: '10' as unknown as number } });
    expect(error.message).toMatch(/sync\.batchSize: .*got `"10"`/);
  });

  it('reports every bad option at once', () => {
    const error = constructionError({
      sync: { batchSize: 0, schedule: 'not cron' },
      tasks: { concurrency: -1 },
    });
    expect(error.issues.map((issue) => issue.path.join('.')).sort()).toEqual([
      'sync.batchSize',
      'sync.schedule',
      'tasks.concurrency',
    ]);
  });

  it('says why a cron expression is not valid', () => {
    const error = constructionError({ sync: { schedule: 'not cron' } });
    expect(error.message).toMatch(/sync\.schedule: is not a valid cron expression \(.+\), got `"not cron"`/);
  });

  it('refuses a key rotation margin not smaller than the key lifetime when the connector is built, not at start', () => {
    const error = constructionError({ keys: { keyLifetimeMs: 120_000, rotationMarginMs: 120_000 } });
    expect(error.issues).toEqual([
      {
        path: ['keys', 'rotationMarginMs'],
        message:
          'Expected a whole number of milliseconds from 0 to less than keyLifetimeMs (120000), got `120000` (number)',
      },
    ]);
    expect(error.message).toContain('Invalid connector options: keys.rotationMarginMs: ');
    // Against the default lifetime (30 days) too, and a lifetime that is no duration.
    expect(constructionError({ keys: { rotationMarginMs: 31 * 86_400_000 } }).issues[0]?.path).toEqual([
      'keys',
      'rotationMarginMs',
    ]);
    expect(constructionError({ keys: { keyLifetimeMs: 0 } }).issues[0]?.path).toEqual([
      'keys',
      'keyLifetimeMs',
    ]);
    expect(() =>
      build(options({ keys: { keyLifetimeMs: 120_000, rotationMarginMs: 60_000 } })),
    ).not.toThrow();
  });

  it('checks the client options too, never echoing the token', () => {
    expect(() =>
      build(
        options({
          service: { baseUrl: 'not a url', token: 'connector-token', dispatcher: recorder.dispatcher },
        }),
      ),
    ).toThrow(/baseUrl: must be an absolute URL, got `"not a url"`/);
    const error = (() => {
      try {
        build(options({ service: { baseUrl: 'http://x', token: '' } }));
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect(String(error)).toContain('token: must not be empty');
    expect(() =>
      build(options({ service: { baseUrl: 'http://x', token: 'connector-token', timeoutMs: -1 } })),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining('connector-token') }));
  });

  it('sends nothing when an option is bad', async () => {
    constructionError({ sync: { batchSize: 0 } });
    constructionError({ tasks: { concurrency: -1 } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorder.requests).toEqual([]);

    // The same worker with good options does send: the recorder sees it.
    const worker = build(options({ sync: { batchSize: 10 } }));
    const started = worker.start();
    await vi.waitFor(() => expect(recorder.requests.length).toBeGreaterThan(0));
    await worker.stop();
    await started;
  });

  it('gives a task a deadline well under the reference backend’s lease', () => {
    const resolved = resolveConnectorOptions(options({}));
    expect(resolved.tasks.timeoutMs).toBe(30_000);
    expect(resolved.tasks.timeoutMs).toBeLessThanOrEqual(REFERENCE_LEASE_MS / 2);
  });

  it('bounds stop() by shutdown.graceMs + shutdown.forceMs + SHUTDOWN_MARGIN_MS', () => {
    expect(SHUTDOWN_MARGIN_MS).toBe(1_000);
    expect(build(options({})).stopDeadlineMs).toBe(30_000 + 5_000 + 1_000);
    const short = build(options({ shutdown: { graceMs: 100, forceMs: 50 } }));
    expect(short.stopDeadlineMs).toBe(100 + 50 + 1_000);
  });

  it('accepts good options, cron and interval schedules alike', () => {
    for (const sync of [
      { schedule: '*/5 * * * *', reconcileSchedule: false as const },
      { schedule: 30_000, reconcileSchedule: '0 * * * *', batchSize: 500, batchBytes: 5 * 1024 * 1024 },
    ]) {
      expect(() => build(options({ sync }))).not.toThrow();
    }
  });
});
