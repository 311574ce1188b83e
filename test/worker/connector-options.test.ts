import { Registry } from 'prom-client';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { ClientOptions } from '../../src/client/index.js';
import { ValidationError } from '../../src/errors.js';
import { poolConnections, resolveConnectorOptions } from '../../src/worker/core/connector-options.js';
import {
  type ConnectorMetricsOptions,
  type ConnectorOptions,
  ConnectorWorker,
  type KeyRingOptions,
  type KeyStore,
  type LoggerOptions,
  MemoryKeyStore,
  type PollerOptions,
  SHUTDOWN_MARGIN_MS,
  type SyncOptions,
} from '../../src/worker/index.js';
import { MemoryConnector, MemorySource } from './support/memory-source.js';
import { recordingDispatcher } from './support/recording-dispatcher.js';

// The lease of the reference backend by default (docs/api-contract.md).
const REFERENCE_LEASE_MS = 60_000;

const recorder = recordingDispatcher();
afterEach(() => {
  recorder.requests.length = 0;
});
afterAll(() => recorder.close());

const service: ClientOptions = {
  baseUrl: 'http://127.0.0.1:9',
  token: 'connector-token',
  dispatcher: recorder.dispatcher,
};

const options = (overrides: Partial<ConnectorOptions>): ConnectorOptions => ({
  service,
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
  it.each<[string, Partial<ConnectorOptions>, string, string]>([
    ['sync.batchSize', { sync: { batchSize: 0 } }, 'an integer from 1 to 500', '`0` (number)'],
    ['sync.batchSize', { sync: { batchSize: 501 } }, 'an integer from 1 to 500', '`501` (number)'],
    [
      'sync.batchBytes',
      { sync: { batchBytes: 10 * 1024 * 1024 } },
      'an integer from 1 to 5242880',
      '`10485760` (number)',
    ],
    ['sync.concurrency', { sync: { concurrency: 1.5 } }, 'an integer from 1 and up', '`1.5` (number)'],
    [
      'sync.schedule',
      { sync: { schedule: 0 } },
      'a cron expression or a number of milliseconds from 1 and up',
      '`0` (number)',
    ],
    ['sync.overlapMs', { sync: { overlapMs: -1 } }, 'an integer from 0 and up', '`-1` (number)'],
    ['sync.enabled', { sync: { enabled: 'no' as unknown as boolean } }, 'a boolean', '`"no"` (string)'],
    [
      'sync.afterTaskMs',
      { sync: { afterTaskMs: true as unknown as false } },
      'a number of milliseconds from 0 and up, or false',
      '`true` (boolean)',
    ],
    [
      'sync.sourceRetry.retries',
      { sync: { sourceRetry: { retries: -1 } } },
      'an integer from 0 and up',
      '`-1` (number)',
    ],
    [
      'sync.sourceRetry.maxRetryTimeMs',
      { sync: { sourceRetry: { maxRetryTimeMs: 1.5 } } },
      'an integer from 0 and up',
      '`1.5` (number)',
    ],
    ['poller.concurrency', { poller: { concurrency: -1 } }, 'an integer from 1 and up', '`-1` (number)'],
    ['poller.idleMinMs', { poller: { idleMinMs: 0 } }, 'an integer from 1 and up', '`0` (number)'],
    [
      'poller.watchdogMs',
      { poller: { watchdogMs: Number.NaN } },
      'an integer from 1 and up',
      '`NaN` (number)',
    ],
    ['poller.timeoutMs', { poller: { timeoutMs: 0 } }, 'an integer from 1 and up', '`0` (number)'],
    ['shutdown.graceMs', { shutdown: { graceMs: -5 } }, 'an integer from 0 and up', '`-5` (number)'],
    ['operations.port', { operations: { port: 70_000 } }, 'an integer from 0 to 65535', '`70000` (number)'],
    ['operations.host', { operations: { host: '' } }, 'a host name or address', '`""` (string)'],
    [
      'operations',
      { operations: true as unknown as false },
      'false, or an object with the port and host of the operations endpoints',
      '`true` (boolean)',
    ],
    [
      'metrics.taskDurationBuckets',
      { metrics: { taskDurationBuckets: [1, 0.5] } },
      'a non-empty list of finite numbers in increasing order',
      '`[1,0.5]` (array)',
    ],
    [
      'metrics.registry',
      { metrics: { registry: {} as Registry } },
      'a prom-client Registry',
      '`{}` (object)',
    ],
    [
      'keyStore',
      { keyStore: { description: 'a store' } as unknown as KeyStore },
      'a KeyStore (an object with load() and save())',
      '`{"description":"a store"}` (object)',
    ],
    [
      'logger.level',
      { logger: { level: 'loud' as 'info' } },
      'one of `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`',
      '`"loud"` (string)',
    ],
    ['now', { now: 5 as unknown as () => number }, 'a function', '`5` (number)'],
    [
      'service.timeoutMs',
      { service: { ...service, timeoutMs: -1 } },
      'an integer from 1 and up',
      '`-1` (number)',
    ],
  ])(
    'refuses a bad %s when the worker is built, naming it and the value received',
    (name, overrides, expected, shown) => {
      const error = constructionError(overrides);
      expect(error.code).toBe('validation');
      const message = `Expected \`${name}\` to be ${expected}, got ${shown}`;
      expect(error.issues).toEqual([{ path: name.split('.'), message, code: expect.any(String) }]);
      expect(error.message).toBe(`Invalid connector options: ${message}`);
    },
  );

  it.each<[string, Partial<ConnectorOptions>, string]>([
    ['sync.shedule', { sync: { shedule: 60_000 } as SyncOptions }, 'did you mean `sync.schedule`?'],
    ['poller.timeout', { poller: { timeout: 1_000 } as PollerOptions }, 'did you mean `poller.timeoutMs`?'],
    [
      'operations.prot',
      { operations: { prot: 9464 } as unknown as { port: number } },
      'did you mean `operations.port`?',
    ],
    ['keys.lifetimeMs', { keys: { lifetimeMs: 1 } as KeyRingOptions }, 'did you mean `keys.keyLifetimeMs`?'],
    [
      'metrics.registy',
      { metrics: { registy: new Registry() } as ConnectorMetricsOptions },
      'did you mean `metrics.registry`?',
    ],
    ['logger.levle', { logger: { levle: 'debug' } as LoggerOptions }, 'did you mean `logger.level`?'],
    [
      'service.tokn',
      { service: { ...service, tokn: 'x' } as ClientOptions },
      'did you mean `service.token`?',
    ],
    [
      'service.retry.retires',
      { service: { ...service, retry: { retires: 1 } } as ClientOptions },
      'did you mean `service.retry.retries`?',
    ],
  ])(
    'refuses the unknown option %s when the worker is built, with the nearest known one',
    (name, overrides, hint) => {
      const error = constructionError(overrides);
      expect(error.issues).toEqual([
        {
          path: name.split('.'),
          message: expect.stringMatching(new RegExp(`^Unknown option \`${name.replaceAll('.', '\\.')}\`; `)),
          code: 'unrecognized_keys',
        },
      ]);
      expect(error.message).toContain(hint);
    },
  );

  it('answers a 0.1 `tasks` option with the names known, `poller` among them', () => {
    const error = constructionError({ tasks: { concurrency: 2 } } as Partial<ConnectorOptions>);
    expect(error.message).toContain('Unknown option `tasks`; the known ones are `service`, ');
    expect(error.message).toContain('`poller`');
  });

  it('refuses a 0.1 `sync.ordered` option: the source declares it now, with incremental({ ordered })', () => {
    const error = constructionError({ sync: { ordered: true } } as Partial<ConnectorOptions>);
    expect(error.issues).toEqual([
      {
        path: ['sync', 'ordered'],
        message: expect.stringMatching(/^Unknown option `sync\.ordered`; /),
        code: 'unrecognized_keys',
      },
    ]);
  });

  it('names the option whose type is wrong', () => {
    const error = constructionError({ sync: { batchSize: '10' as unknown as number } });
    expect(error.message).toContain(
      'Expected `sync.batchSize` to be an integer from 1 to 500, got `"10"` (string)',
    );
  });

  it('reports every bad option at once', () => {
    const error = constructionError({
      sync: { batchSize: 0, schedule: 'not cron' },
      poller: { concurrency: -1 },
    });
    expect(error.issues.map((issue) => issue.path.join('.')).sort()).toEqual([
      'poller.concurrency',
      'sync.batchSize',
      'sync.schedule',
    ]);
  });

  it('says why a cron expression is not valid', () => {
    const error = constructionError({ sync: { reconcileSchedule: '99 * * * *' } });
    expect(error.message).toMatch(
      /^Invalid connector options: Expected `sync\.reconcileSchedule` to be a valid cron expression \(.+\), got `"99 \* \* \* \*"` \(string\)$/,
    );
  });

  it('refuses options that are not an object', () => {
    expect(() => build(undefined as unknown as ConnectorOptions)).toThrow(
      'Invalid connector options: Expected connector options to be an object, got `undefined` (undefined)',
    );
  });

  it('refuses a metrics registry that holds the metrics of another connector, when the worker is built', () => {
    const registry = new Registry();
    build(options({ metrics: { registry } }));
    const error = constructionError({ metrics: { registry } });
    expect(error.issues).toEqual([
      {
        path: ['metrics', 'registry'],
        message: expect.stringContaining(
          'Expected `metrics.registry` to be a registry without the connector',
        ),
        code: 'custom',
      },
    ]);
  });

  it('records its metrics on the registry given in `metrics`', async () => {
    const registry = new Registry();
    const worker = build(options({ metrics: { registry } }));
    expect(worker.metrics.registry).toBe(registry);
    expect(await registry.metrics()).toContain('approval_connector_ready 0');
  });

  it('refuses a key rotation margin not smaller than the key lifetime when the worker is built, not at start', () => {
    const error = constructionError({ keys: { keyLifetimeMs: 120_000, rotationMarginMs: 120_000 } });
    expect(error.issues).toEqual([
      {
        path: ['keys', 'rotationMarginMs'],
        message:
          'Expected `keys.rotationMarginMs` to be an integer from 0 to less than keyLifetimeMs (120000), got `120000` (number)',
        code: 'too_big',
      },
    ]);
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

  it('checks the client options too, naming them under `service`, never showing the token', () => {
    expect(() => build(options({ service: { ...service, baseUrl: 'not a url' } }))).toThrow(
      'Invalid connector options: Expected `service.baseUrl` to be an absolute http or https URL, got `"not a url"` (string)',
    );
    expect(constructionError({ service: { ...service, token: '' } }).message).toBe(
      'Invalid connector options: Expected `service.token` to be a non-empty string or a function that returns one, got a string (not shown: it is secret)',
    );
    const secret = 'connector-token-7f3a9c';
    const error = constructionError({
      service: {
        ...service,
        token: 42 as unknown as string,
        headers: { 'x-api-key': 7 as unknown as string },
      },
      logger: { level: secret as 'info' },
    });
    expect(error.message).not.toContain('42');
    expect(error.message).not.toContain('`7`');
    expect(error.message).toContain(
      'Expected `service.headers.x-api-key` to be a string, got a number (not shown: it is secret)',
    );
    // Only the secrets are hidden: a value elsewhere is shown, to be found.
    expect(error.message).toContain(secret);
  });

  it('sends nothing when an option is bad', async () => {
    constructionError({ sync: { batchSize: 0 } });
    constructionError({ poller: { concurrency: -1 } });
    constructionError({ operations: { port: -1 } });
    constructionError({ keys: { keyLifetimeMs: 0 } });
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
    expect(resolved.poller.timeoutMs).toBe(30_000);
    expect(resolved.poller.timeoutMs).toBeLessThanOrEqual(REFERENCE_LEASE_MS / 2);
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
      { afterTaskMs: 0, sourceRetry: { retries: 0 } },
      { afterTaskMs: false as const, sourceRetry: { retries: 10, maxRetryTimeMs: 600_000 } },
    ]) {
      expect(() => build(options({ sync }))).not.toThrow();
    }
  });
});

describe('the connection pool of a worker', () => {
  const service = { baseUrl: 'http://127.0.0.1:1', token: 't' };

  it('is sized by the poller and the sync when service.connections is not set', () => {
    expect(resolveConnectorOptions({ service }).service.connections).toBeUndefined();
    expect(poolConnections(resolveConnectorOptions({ service }))).toBe(14);
    expect(poolConnections(resolveConnectorOptions({ service, poller: { concurrency: 32 } }))).toBe(70);
    // A tasks worker (the sync off) and a sync worker (the poller off).
    expect(poolConnections(resolveConnectorOptions({ service, sync: { enabled: false } }))).toBe(9);
    expect(
      poolConnections(
        resolveConnectorOptions({ service, poller: { enabled: false }, sync: { concurrency: 8 } }),
      ),
    ).toBe(10);
  });

  it('takes service.connections as given, and checks it', () => {
    expect(resolveConnectorOptions({ service: { ...service, connections: 3 } }).service.connections).toBe(3);
    expect(() => resolveConnectorOptions({ service: { ...service, connections: 0 } })).toThrow(
      'Expected `service.connections` to be an integer from 1 and up, got `0` (number)',
    );
  });
});
