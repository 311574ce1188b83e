import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startReferenceBackend } from '../src/backend/index.js';
import { backendOptionsSchema } from '../src/backend/options.js';
import { IntegrationClient, ManagementClient } from '../src/client/index.js';
import { clientOptionsSchema } from '../src/client/options.js';
import { userMappingsOptionsSchema } from '../src/client/user-mappings.js';
import { ValidationError } from '../src/errors.js';
import { func, integer, nearestKey, parseOptions } from '../src/internal/options.js';
import { connectorOptionsSchema } from '../src/worker/core/connector-options.js';
import {
  ConnectorMetrics,
  ConnectorWorker,
  createLogger,
  FileKeyStore,
  generateKeyRingData,
  KeyRing,
  MemoryKeyStore,
  OperationsServer,
  ReadOnlyKeyStore,
  syncUserMappings,
} from '../src/worker/index.js';
import { keyRingOptionsSchema } from '../src/worker/keys/key-ring.js';
import { loggerOptionsSchema } from '../src/worker/operations/logger.js';
import { metricsOptionsShape } from '../src/worker/operations/metrics.js';
import { operationsServerOptionsSchema } from '../src/worker/operations/server.js';
import { MemoryConnector, MemorySource } from './worker/support/memory-source.js';

function refusal(build: () => unknown): ValidationError {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('the options were accepted');
}

async function asyncRefusal(build: () => Promise<unknown>): Promise<ValidationError> {
  try {
    await build();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('the options were accepted');
}

const Example = z.strictObject({
  name: z.string().default('kit'),
  port: integer(0, 65535).default(9464),
  retry: z
    .strictObject({ retries: integer(0).default(4), random: func<() => number>().optional() })
    .prefault({}),
  token: z.string().min(1).optional(),
  mode: z.enum(['fast', 'slow']).default('fast'),
  target: z
    .union([z.literal(false), z.strictObject({ host: z.string(), port: integer(0, 65535) })], {
      error: 'false or a target',
    })
    .default(false),
});

const parse = (options: unknown) => parseOptions(Example, options, 'example options', ['token']);

describe('parseOptions', () => {
  it('returns the options with every default applied, at every level', () => {
    expect(parse({})).toEqual({
      name: 'kit',
      port: 9464,
      retry: { retries: 4 },
      mode: 'fast',
      target: false,
    });
    expect(parse({ retry: { retries: 0 }, target: { host: 'h', port: 1 } })).toEqual({
      name: 'kit',
      port: 9464,
      retry: { retries: 0 },
      mode: 'fast',
      target: { host: 'h', port: 1 },
    });
  });

  it('keeps a function as it was given', () => {
    const random = () => 0.5;
    expect(parse({ retry: { random } }).retry.random).toBe(random);
  });

  it('names the option and the value received, p-queue style', () => {
    const error = refusal(() => parse({ retry: { retries: -1 } }));
    expect(error.code).toBe('validation');
    expect(error.issues).toEqual([
      {
        path: ['retry', 'retries'],
        message: 'Expected `retry.retries` to be an integer from 0 and up, got `-1` (number)',
        code: 'too_small',
      },
    ]);
    expect(error.message).toBe(
      'Invalid example options: Expected `retry.retries` to be an integer from 0 and up, got `-1` (number)',
    );
  });

  it('refuses an unknown key with the nearest known one', () => {
    expect(refusal(() => parse({ prot: 80 })).message).toBe(
      'Invalid example options: Unknown option `prot`; did you mean `port`?',
    );
    expect(refusal(() => parse({ retry: { retires: 1 } })).issues).toEqual([
      {
        path: ['retry', 'retires'],
        message: 'Unknown option `retry.retires`; did you mean `retry.retries`?',
        code: 'unrecognized_keys',
      },
    ]);
  });

  it('lists the known keys when none is near the unknown one', () => {
    expect(refusal(() => parse({ retry: { backoff: 2 } })).message).toBe(
      'Invalid example options: Unknown option `retry.backoff`; the known ones are `retry.retries`, `retry.random`',
    );
  });

  it('reports the problem of the form an input took, not only that a union failed', () => {
    expect(refusal(() => parse({ target: { host: 'h', port: 70_000 } })).issues).toEqual([
      {
        path: ['target', 'port'],
        message: 'Expected `target.port` to be an integer from 0 to 65535, got `70000` (number)',
        code: 'too_big',
      },
    ]);
    expect(refusal(() => parse({ target: { hots: 'h', port: 1 } })).message).toContain(
      'Unknown option `target.hots`; did you mean `target.host`?',
    );
    expect(refusal(() => parse({ target: 'yes' })).message).toBe(
      'Invalid example options: Expected `target` to be false or a target, got `"yes"` (string)',
    );
  });

  it('reports every problem at once', () => {
    const error = refusal(() => parse({ port: -1, mode: 'quick', extra: 1 }));
    expect(error.issues.map((issue) => issue.message)).toEqual([
      'Expected `port` to be an integer from 0 to 65535, got `-1` (number)',
      'Expected `mode` to be one of `fast`, `slow`, got `"quick"` (string)',
      'Unknown option `extra`; the known ones are `name`, `port`, `retry`, `token`, `mode`, `target`',
    ]);
  });

  it('never shows the value of a secret option', () => {
    const error = refusal(() => parse({ token: '' }));
    expect(error.message).toBe(
      'Invalid example options: Expected `token` to be a non-empty string, got a string (not shown: it is secret)',
    );
    expect(refusal(() => parse({ token: 1234 })).message).not.toContain('1234');
  });

  it('shows NaN as NaN, not as null', () => {
    expect(refusal(() => parse({ port: Number.NaN })).message).toContain('got `NaN` (number)');
  });

  it('names a bad option whose value cannot be turned into JSON, instead of throwing a TypeError', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(refusal(() => parse({ name: circular })).message).toBe(
      'Invalid example options: Expected `name` to be a string, got `[object Object]` (object)',
    );
    expect(refusal(() => parse({ name: 10n })).message).toContain('got `10` (bigint)');
  });

  it('shows a long value shortened, and an instance by its class', () => {
    const message = refusal(() => parse({ port: 'x'.repeat(500) })).message;
    expect(message).toContain(`got \`"${'x'.repeat(78)}…\` (string)`);
    expect(refusal(() => parse({ port: new Registry() })).message).toContain(
      'Expected `port` to be an integer from 0 to 65535, got an instance of Registry',
    );
    expect(refusal(() => parse({ port: () => 1 })).message).toContain('got a function');
  });

  it('refuses options that are not an object, naming what it validates', () => {
    expect(refusal(() => parse('fast')).message).toBe(
      'Invalid example options: Expected example options to be an object, got `"fast"` (string)',
    );
  });
});

describe('nearestKey', () => {
  it.each([
    ['shedule', 'schedule'],
    ['timeout', 'timeoutMs'],
    ['timoeutMs', 'timeoutMs'],
    ['TIMEOUTMS', 'timeoutMs'],
    ['prt', 'port'],
  ])('takes %s for %s', (key, nearest) => {
    expect(nearestKey(key, ['schedule', 'timeoutMs', 'port', 'host'])).toBe(nearest);
  });

  it('suggests nothing far from every known key', () => {
    expect(nearestKey('xyz', ['schedule', 'port', 'host'])).toBeUndefined();
    expect(nearestKey('anything', [])).toBeUndefined();
  });
});

/** Every object schema within a schema, with where it is. */
function objectsIn(schema: z.core.$ZodType, at = '(root)'): { at: string; strict: boolean }[] {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case 'object': {
      const own = { at, strict: def.catchall instanceof z.ZodNever };
      const shape = def.shape as Record<string, z.core.$ZodType>;
      return [own, ...Object.entries(shape).flatMap(([key, inner]) => objectsIn(inner, `${at}.${key}`))];
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
      return objectsIn(def.innerType as z.core.$ZodType, at);
    case 'pipe':
      return [...objectsIn(def.in as z.core.$ZodType, at), ...objectsIn(def.out as z.core.$ZodType, at)];
    case 'union':
      return (def.options as z.core.$ZodType[]).flatMap((option) => objectsIn(option, at));
    case 'array':
      return objectsIn(def.element as z.core.$ZodType, `${at}[]`);
    default:
      return [];
  }
}

describe('the options schemas', () => {
  it.each<[string, z.core.$ZodType]>([
    ['connector', connectorOptionsSchema],
    ['client', clientOptionsSchema],
    ['key ring', keyRingOptionsSchema],
    ['logger', loggerOptionsSchema],
    ['metrics', metricsOptionsShape],
    ['operations server', operationsServerOptionsSchema],
    ['user mappings', userMappingsOptionsSchema],
    ['reference backend', backendOptionsSchema],
  ])('of the %s refuse unknown keys at every level', (_part, schema) => {
    const objects = objectsIn(schema);
    expect(objects.length).toBeGreaterThan(0);
    expect(objects.filter((object) => !object.strict)).toEqual([]);
  });

  it('finds an object that takes unknown keys, however deep', () => {
    const loose = z.strictObject({
      a: z.union([z.literal(false), z.object({ b: z.number() })]).prefault(false),
    });
    expect(objectsIn(loose)).toEqual([
      { at: '(root)', strict: true },
      { at: '(root).a', strict: false },
    ]);
  });
});

// Issue 8: every option of every part is validated when the object is built, naming the option.
describe('every part refuses an unknown or invalid option when it is built, naming the option', () => {
  const service = { baseUrl: 'http://127.0.0.1:9', token: 'connector-token' };
  const operations = {
    health: () => ({ healthy: true, state: 'running' }),
    isReady: () => ({ ready: true }),
    metrics: { render: async () => ({ contentType: 'text/plain', body: '' }) },
  };

  it.each<[string, () => unknown, string]>([
    [
      'the connector worker',
      () =>
        new ConnectorWorker(new MemoryConnector(new MemorySource()), {
          service,
          sync: { shedule: 1 },
        } as never),
      'Invalid connector options: Unknown option `sync.shedule`; did you mean `sync.schedule`?',
    ],
    [
      'the connector worker',
      () =>
        new ConnectorWorker(new MemoryConnector(new MemorySource()), { service, operations: { port: -1 } }),
      'Invalid connector options: Expected `operations.port` to be an integer from 0 to 65535, got `-1` (number)',
    ],
    [
      'the integration client',
      () => new IntegrationClient({ ...service, timeout: 5 } as never),
      'Invalid client options: Unknown option `timeout`; did you mean `timeoutMs`?',
    ],
    [
      'the management client',
      () => new ManagementClient({ ...service, connections: 0 }),
      'Invalid client options: Expected `connections` to be an integer from 1 and up, got `0` (number)',
    ],
    [
      'the key ring data',
      () => generateKeyRingData(undefined, { keyLifetimeMs: -1 }),
      'Invalid key ring options: Expected `keyLifetimeMs` to be an integer from 1 and up, got `-1` (number)',
    ],
    [
      'a file key store',
      () => new FileKeyStore(''),
      'Invalid FileKeyStore options: Expected `path` to be a non-empty string, got `""` (string)',
    ],
    [
      'a read-only key store',
      () => new ReadOnlyKeyStore({ variable: '' }),
      'Invalid ReadOnlyKeyStore options: Expected `variable` to be a non-empty string, got `""` (string)',
    ],
    [
      'the operations server',
      () => new OperationsServer({ ...operations, prot: 9464 } as never),
      'Invalid operations server options: Unknown option `prot`; did you mean `port`?',
    ],
    [
      'the operations server',
      () => new OperationsServer({ ...operations, port: 65_536 }),
      'Invalid operations server options: Expected `port` to be an integer from 0 to 65535, got `65536` (number)',
    ],
    [
      'the metrics',
      () => new ConnectorMetrics({ taskDurationBuckets: [] }),
      'Invalid metrics options: Expected `taskDurationBuckets` to be a non-empty list of finite numbers in increasing order, got `[]` (array)',
    ],
    [
      'the metrics',
      () => new ConnectorMetrics({ registy: new Registry() } as never),
      'Invalid metrics options: Unknown option `registy`; did you mean `registry`?',
    ],
    [
      'the logger',
      () => createLogger({ level: 'verbose' } as never),
      'Invalid logger options: Expected `level` to be one of `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`, got `"verbose"` (string)',
    ],
  ])('%s', (_part, build, message) => {
    expect(refusal(build).message).toBe(message);
  });

  it('the key ring, before it reads its store', async () => {
    let loads = 0;
    const store = new MemoryKeyStore();
    const counting = {
      description: 'counting',
      load: () => {
        loads += 1;
        return store.load();
      },
      save: store.save.bind(store),
    };
    const error = await asyncRefusal(() => KeyRing.load(counting, { rotationMarginMs: -1 }));
    expect(error.message).toBe(
      'Invalid key ring options: Expected `rotationMarginMs` to be an integer from 0 and up, got `-1` (number)',
    );
    expect(loads).toBe(0);
  });

  it('the user mappings, before a request is sent', async () => {
    const client = new ManagementClient({ ...service, token: 'management-token' });
    try {
      const error = await asyncRefusal(() =>
        syncUserMappings(client, 'system', [], { pageSise: 10 } as never),
      );
      expect(error.message).toBe(
        'Invalid user mapping options: Unknown option `pageSise`; did you mean `pageSize`?',
      );
      expect(
        (await asyncRefusal(() => syncUserMappings(client, 'system', [], { maxListed: -1 }))).message,
      ).toBe(
        'Invalid user mapping options: Expected `maxListed` to be an integer from 0 and up, got `-1` (number)',
      );
    } finally {
      await client.close();
    }
  });

  it('the reference backend, with a ValidationError rather than a bare TypeError, never showing the admin token', async () => {
    expect((await asyncRefusal(() => startReferenceBackend({ leaseMs: 0 }))).message).toBe(
      'Invalid reference backend options: Expected `leaseMs` to be an integer from 1 and up, got `0` (number)',
    );
    expect((await asyncRefusal(() => startReferenceBackend({ lease: 1 } as never))).message).toBe(
      'Invalid reference backend options: Unknown option `lease`; did you mean `leaseMs`?',
    );
    const error = await asyncRefusal(() => startReferenceBackend({ adminToken: 'short' }));
    expect(error.message).toBe(
      'Invalid reference backend options: Expected `adminToken` to be a string of at least 8 characters, got a string (not shown: it is secret)',
    );
  });
});
