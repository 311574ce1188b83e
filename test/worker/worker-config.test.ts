import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { DEFAULT_KEY_FILE, resolveConnectorOptions } from '../../src/worker/core/connector-options.js';
import { FileKeyStore, ReadOnlyKeyStore } from '../../src/worker/index.js';
import { operationsServerOptionsSchema } from '../../src/worker/operations/index.js';
import {
  loadWorkerConfig,
  WORKER_SETTINGS,
  WORKER_USAGE,
  type WorkerConfig,
} from '../../src/worker/process/worker-config.js';

const folder = mkdtempSync(join(tmpdir(), 'worker-config-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let files = 0;
function file(content: unknown): string {
  files += 1;
  const path = join(folder, `config-${files}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const SERVICE = {
  APPROVAL_SERVICE_URL: 'https://approvals.example.com',
  APPROVAL_CONNECTOR_TOKEN: 'conn-token-1',
};

function load(
  env: Record<string, string | undefined>,
  argv: string[] = [],
  isTerminal = false,
): WorkerConfig {
  const config = loadWorkerConfig({ env, argv, isTerminal });
  if (config === 'help') throw new Error('unexpected help');
  return config;
}

/** The problems of a refused configuration, each as its message. */
function problems(env: Record<string, string | undefined>, argv: string[] = []): string[] {
  try {
    loadWorkerConfig({ env, argv, isTerminal: false });
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((issue) => issue.message);
  }
  throw new Error('the configuration was accepted');
}

describe('a worker’s configuration', () => {
  it('reads the service and the operations port from the environment; the rest keeps the connector’s defaults', () => {
    const config = load({
      ...SERVICE,
      OPERATIONS_PORT: '9464',
      OPERATIONS_HOST: '0.0.0.0',
      PATH: '/usr/bin',
    });
    expect(config).toMatchObject({ role: 'all', logLevel: 'info', logFormat: 'json' });
    expect(config.options).toEqual({
      service: { baseUrl: 'https://approvals.example.com', token: 'conn-token-1' },
      operations: { port: 9464, host: '0.0.0.0' },
      sync: { enabled: true },
      poller: { enabled: true },
    });
  });

  it('takes any other connector option from the config file, which the connector accepts as it is', () => {
    const options = {
      service: { timeoutMs: 5_000, retry: { retries: 2 } },
      sync: { schedule: '*/5 * * * *', batchSize: 200, reconcileSchedule: false },
      poller: { concurrency: 8, timeoutMs: 20_000 },
      shutdown: { graceMs: 20_000, forceMs: 2_000 },
      keys: { keyLifetimeMs: 86_400_000, rotationMarginMs: 3_600_000 },
      operations: { port: 9100 },
      metrics: { taskDurationBuckets: [0.1, 1, 10] },
    };
    const config = load({ ...SERVICE, CONNECTOR_CONFIG: file(options) });
    expect(config.options).toMatchObject({
      ...options,
      service: { ...options.service, baseUrl: SERVICE.APPROVAL_SERVICE_URL },
    });
    const resolved = resolveConnectorOptions(config.options);
    expect(resolved.poller.concurrency).toBe(8);
    expect(resolved.shutdown).toEqual({ graceMs: 20_000, forceMs: 2_000 });
  });

  it('lets the environment win over the config file', () => {
    const config = load({
      ...SERVICE,
      OPERATIONS_PORT: '9200',
      CONNECTOR_CONFIG: file({
        service: { baseUrl: 'https://file.example.com', token: 'file-token-1' },
        operations: { port: 9100, host: '0.0.0.0' },
      }),
    });
    expect(config.options.service).toEqual({
      baseUrl: 'https://approvals.example.com',
      token: 'conn-token-1',
    });
    expect(config.options.operations).toEqual({ port: 9200, host: '0.0.0.0' });
  });

  it('lets a variable replace the file’s `operations: false`, and names a file’s section that is no object', () => {
    const off = file({ operations: false });
    expect(load({ ...SERVICE, OPERATIONS_PORT: '9200', CONNECTOR_CONFIG: off }).options.operations).toEqual({
      port: 9200,
    });
    expect(load({ ...SERVICE, CONNECTOR_CONFIG: off }).options.operations).toBe(false);
    expect(problems({ ...SERVICE, CONNECTOR_CONFIG: file({ service: 'https://file.example.com' }) })).toEqual(
      ['Expected `service` to be an object, got `"https://file.example.com"` (string)'],
    );
  });

  it('takes the service from the file alone when the environment does not give it', () => {
    const service = { baseUrl: 'https://file.example.com', token: 'file-token-1' };
    expect(load({ CONNECTOR_CONFIG: file({ service }) }).options.service).toEqual(service);
  });

  it.each([
    [undefined, undefined, 'all', true, true],
    ['sync', undefined, 'sync', true, false],
    ['tasks', undefined, 'tasks', false, true],
    [undefined, 'sync', 'sync', true, false],
    ['sync', 'tasks', 'tasks', false, true],
  ])('runs the role CONNECTOR_ROLE=%s --role %s says: %s', (variable, flag, role, sync, poller) => {
    const config = load({ ...SERVICE, CONNECTOR_ROLE: variable }, flag === undefined ? [] : ['--role', flag]);
    expect(config.role).toBe(role);
    expect(config.options.sync).toEqual({ enabled: sync });
    expect(config.options.poller).toEqual({ enabled: poller });
  });

  it('logs pretty on a terminal and JSON otherwise, unless LOG_FORMAT says', () => {
    expect(load(SERVICE, [], true).logFormat).toBe('pretty');
    expect(load(SERVICE, [], false).logFormat).toBe('json');
    expect(load({ ...SERVICE, LOG_FORMAT: 'json' }, [], true).logFormat).toBe('json');
    expect(load({ ...SERVICE, LOG_FORMAT: 'pretty' }, [], false).logFormat).toBe('pretty');
    expect(load({ ...SERVICE, LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
  });

  it('keeps the keys in the file CONNECTOR_KEYS_FILE names, read-only when the operator provides them', () => {
    expect(load(SERVICE).options.keyStore).toBeUndefined();
    const writable = load({ ...SERVICE, CONNECTOR_KEYS_FILE: 'keys/ring.json' }).options.keyStore;
    expect(writable).toBeInstanceOf(FileKeyStore);
    expect((writable as FileKeyStore).path).toBe(resolve('keys/ring.json'));
    const provided = load({
      ...SERVICE,
      CONNECTOR_KEYS_FILE: '/etc/keys/keys.json',
      CONNECTOR_KEYS_READ_ONLY: 'true',
    }).options.keyStore;
    expect(provided).toBeInstanceOf(ReadOnlyKeyStore);
    expect(provided?.description).toBe('file /etc/keys/keys.json');
  });

  it('takes an empty variable for an unset one', () => {
    expect(load({ ...SERVICE, CONNECTOR_ROLE: '', OPERATIONS_PORT: '', LOG_LEVEL: '' })).toMatchObject({
      role: 'all',
      logLevel: 'info',
    });
    expect(problems({ ...SERVICE, APPROVAL_CONNECTOR_TOKEN: '' })).toEqual([
      'Expected `APPROVAL_CONNECTOR_TOKEN` to be set to the connector token (or `service.token` in the config file), got nothing',
    ]);
  });

  it('names the variable set by a slip of a required one: did you mean it?', () => {
    expect(
      problems({ ...SERVICE, APPROVAL_CONNECTOR_TOKEN: undefined, APPROVAL_CONECTOR_TOKEN: 'token' }),
    ).toEqual([
      'Expected `APPROVAL_CONNECTOR_TOKEN` to be set to the connector token (or `service.token` in the config file), ' +
        'got nothing (`APPROVAL_CONECTOR_TOKEN` is set: did you mean `APPROVAL_CONNECTOR_TOKEN`?)',
    ]);
    // Two letters swapped are a slip too; a name further off is not taken for one.
    expect(
      problems({ ...SERVICE, APPROVAL_CONNECTOR_TOKEN: undefined, APPROVAL_CONNECTRO_TOKEN: 'token' })[0],
    ).toContain('did you mean');
    expect(
      problems({ ...SERVICE, APPROVAL_CONNECTOR_TOKEN: undefined, APPROVAL_ADMIN_TOKEN: 'token' })[0],
    ).not.toContain('did you mean');
  });

  it('refuses a variable set by a slip of an optional one, which would otherwise be ignored without a word', () => {
    expect(problems({ ...SERVICE, LOG_LEVLE: 'debug' })).toEqual([
      'Unknown variable `LOG_LEVLE`; did you mean `LOG_LEVEL`?',
    ]);
    // Not when the variable itself is set too, nor for a name further off.
    expect(load({ ...SERVICE, LOG_LEVEL: 'info', LOG_LEVLE: 'debug' }).logLevel).toBe('info');
    expect(load({ ...SERVICE, LOG_VERBOSITY: 'debug' }).logLevel).toBe('info');
  });

  it('answers help without reading anything else', () => {
    expect(loadWorkerConfig({ env: { OPERATIONS_PORT: 'bad' }, argv: ['-h'], isTerminal: false })).toBe(
      'help',
    );
  });

  it('names every problem of the environment, the flags and the file at once, each where the operator set it', () => {
    expect(
      problems(
        {
          APPROVAL_SERVICE_URL: 'ftp://approvals.example.com',
          OPERATIONS_HOST: '',
          OPERATIONS_PORT: '70000',
          CONNECTOR_KEYS_READ_ONLY: 'yes',
          LOG_FORMAT: 'xml',
          CONNECTOR_CONFIG: file({
            // Overridden by a variable, whatever it holds: the variable's problem is the one named.
            service: { baseUrl: 42 },
            poller: { enabled: true, timeoutMs: 0 },
            keys: { keyLifetimeMs: 1_000, rotationMarginMs: 5_000 },
            logger: { level: 'debug' },
          }),
        },
        ['extra', '--role=everything'],
      ),
    ).toEqual([
      'Unexpected argument `extra`: every option is a --flag',
      'Expected `--role` to be one of `sync`, `tasks`, `all`, got `"everything"` (string)',
      'Expected `APPROVAL_SERVICE_URL` to be an absolute http or https URL, got `"ftp://approvals.example.com"` (string)',
      'Expected `OPERATIONS_PORT` to be an integer from 0 to 65535, got `70000` (number)',
      'Expected `CONNECTOR_KEYS_READ_ONLY` to be `true` or `false`, got `"yes"` (string)',
      'Expected `LOG_FORMAT` to be one of `json`, `pretty`, got `"xml"` (string)',
      'Unexpected option `poller.enabled` in the config file: the role (--role, CONNECTOR_ROLE) says what a worker runs',
      'Expected `APPROVAL_CONNECTOR_TOKEN` to be set to the connector token (or `service.token` in the config file), got nothing',
      'Expected `poller.timeoutMs` to be an integer from 1 and up, got `0` (number)',
      'Expected `keys.rotationMarginMs` to be an integer from 0 to less than keyLifetimeMs (1000), got `5000` (number)',
      'Unknown option `logger`; the known ones are `service`, `sync`, `poller`, `shutdown`, `keys`, `operations`, `push`, `metrics`',
    ]);
  });

  it('never shows the token or a header, from the environment or the file', () => {
    const messages = problems({
      APPROVAL_SERVICE_URL: 'https://approvals.example.com',
      CONNECTOR_CONFIG: file({ service: { token: ['secret-in-a-list-1'], headers: { 'x-api-key': 7 } } }),
    });
    expect(messages).toEqual([
      'Expected `service.token` to be a non-empty string or a function that returns one, got an array (not shown: it is secret)',
      'Expected `service.headers.x-api-key` to be a string, got a number (not shown: it is secret)',
    ]);
    expect(messages.join('\n')).not.toContain('secret-in-a-list-1');
  });

  it('never shows the webhook secret, from the environment or the file', () => {
    const messages = [
      ...problems({ ...SERVICE, PUSH_SECRET: 'short-secret-1' }),
      ...problems({ ...SERVICE, CONNECTOR_CONFIG: file({ push: { secret: 'short-secret-2' } }) }),
    ];
    expect(messages).toEqual([
      'Expected `PUSH_SECRET` to be a string of at least 16 characters, got a string (not shown: it is secret)',
      'Expected `push.secret` to be a string of at least 16 characters, got a string (not shown: it is secret)',
    ]);
  });

  it('sets the push ingress from its variables, over the file, which may turn it off', () => {
    const push = (env: Record<string, string>) => load({ ...SERVICE, ...env }).options.push;
    expect(push({})).toBeUndefined();
    expect(
      push({
        PUSH_PORT: '9000',
        PUSH_HOST: '0.0.0.0',
        PUSH_PUBLIC_URL: 'https://connector.example.com/push',
        PUSH_SECRET: 'a-webhook-secret-of-16',
        CONNECTOR_CONFIG: file({ push: { port: 1, delayMs: 50 } }),
      }),
    ).toEqual({
      port: 9000,
      host: '0.0.0.0',
      publicUrl: 'https://connector.example.com/push',
      secret: 'a-webhook-secret-of-16',
      delayMs: 50,
    });
    expect(push({ CONNECTOR_CONFIG: file({ push: false }) })).toBe(false);
    expect(problems({ ...SERVICE, PUSH_PUBLIC_URL: 'connector.example.com' })).toEqual([
      'Expected `PUSH_PUBLIC_URL` to be an absolute http or https URL, got `"connector.example.com"` (string)',
    ]);
  });

  it('names a config file that is missing, not JSON, or not an object of options, without quoting it', () => {
    const missing = join(folder, 'missing.json');
    expect(problems({ ...SERVICE, CONNECTOR_CONFIG: missing })).toEqual([
      `Cannot read the config file ${missing} (\`CONNECTOR_CONFIG\`): ENOENT`,
    ]);
    const broken = file('{"service": {"token": "quoted-1"}, }');
    const [notJson] = problems({ ...SERVICE, CONNECTOR_CONFIG: broken });
    expect(notJson).toMatch(
      new RegExp(
        `^The config file ${broken} \\(\`CONNECTOR_CONFIG\`\\) is not valid JSON \\(at position \\d+`,
      ),
    );
    expect(notJson).not.toContain('quoted-1');
    const list = file([1, 2]);
    expect(problems({ ...SERVICE, CONNECTOR_CONFIG: list })).toEqual([
      `The config file ${list} (\`CONNECTOR_CONFIG\`) holds an array, not a JSON object of options`,
    ]);
  });

  it('takes the word after a misspelt flag for its value, not for an argument of its own', () => {
    expect(problems(SERVICE, ['--rol', 'tasks'])).toEqual(['Unknown option `--rol`; did you mean `--role`?']);
    expect(problems(SERVICE, ['--rol=tasks', 'stray'])).toEqual([
      'Unexpected argument `stray`: every option is a --flag',
      'Unknown option `--rol`; did you mean `--role`?',
    ]);
  });

  it('needs the key file when the keys are read-only', () => {
    expect(problems({ ...SERVICE, CONNECTOR_KEYS_READ_ONLY: 'true' })).toEqual([
      'Expected `CONNECTOR_KEYS_FILE` to be set when `CONNECTOR_KEYS_READ_ONLY` is true: the file the operator provides',
    ]);
  });
});

describe('the declaration of a worker’s settings', () => {
  const settings = Object.entries(WORKER_SETTINGS) as Array<
    [string, { default: string; value?: unknown; option?: string; flag?: string }]
  >;

  /** The rows of docs/worker.md's table of variables: name and default, as written. */
  function documentedVariables(): Array<[string, string]> {
    const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'worker.md'), 'utf8');
    const configuration = text.slice(text.indexOf('## Configuration'));
    return configuration
      .split('\n')
      .filter((line) => /^\| `[A-Z_]+` +\|/.test(line))
      .map((line) => {
        const [name, fallback] = line
          .split('|')
          .slice(1, 3)
          .map((cell) => cell.trim());
        return [name!.replaceAll('`', ''), fallback!];
      });
  }

  it('is what docs/worker.md’s table says: every variable, in order, with its default', () => {
    expect(documentedVariables()).toEqual(settings.map(([name, setting]) => [name, setting.default]));
  });

  it('documents the default a worker applies, and where the config file may set it instead', () => {
    for (const [name, setting] of settings) {
      if (setting.value !== undefined) expect(setting.default, name).toBe(`\`${String(setting.value)}\``);
      if (setting.option !== undefined) expect(setting.default, name).toContain(`\`${setting.option}\``);
    }
    // The defaults applied further on: the key store's file, the operations endpoints' interface.
    expect(WORKER_SETTINGS.CONNECTOR_KEYS_FILE.default).toBe(`\`${DEFAULT_KEY_FILE}\``);
    const host = operationsServerOptionsSchema.shape.host.parse(undefined);
    expect(WORKER_SETTINGS.OPERATIONS_HOST.default).toMatch(new RegExp(`^\`${host}\``));
    // Without any variable but the service's, each default above is what the worker runs with.
    const config = load(SERVICE, [], true);
    expect(config).toMatchObject({
      role: WORKER_SETTINGS.CONNECTOR_ROLE.value,
      logLevel: WORKER_SETTINGS.LOG_LEVEL.value,
      logFormat: 'pretty',
    });
    expect(config.options.keyStore).toBeUndefined();
  });

  it('gives --help every flag and variable with its default', () => {
    const plain = (text: string) => text.replaceAll(/\s+/g, ' ');
    const usage = plain(WORKER_USAGE);
    expect(usage).toContain('--role sync|tasks|all');
    for (const [name, setting] of settings) {
      expect(usage).toMatch(
        new RegExp(
          `\\b${name} (?:(?!\\b[A-Z_]{6,}\\b).)*\\(default: ${escapeRegExp(setting.default.replaceAll('`', ''))}\\)`,
        ),
      );
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
