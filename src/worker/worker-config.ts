/**
 * The configuration of a worker process (`connector run`, `runWorker`): environment variables, an optional JSON file
 * holding any other connector option, and the `--role` flag, checked together through the options pipeline so that
 * every problem is named in one message. See `docs/worker.md`.
 * @module
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { LevelWithSilent } from 'pino';
import { z } from 'zod';
import { CLIENT_SECRET_OPTIONS, clientOptionsSchema } from '../client/internal.js';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { asFlags, host, logLevel, nonEmptyString, parseOptions, portText } from '../internal/options.js';
import { type ConnectorOptions, connectorOptionsSchema } from './connector-options.js';
import { FileKeyStore, ReadOnlyKeyStore } from './keys/index.js';

/** What a worker runs: the sync loop, the task poller, or both. */
export type WorkerRole = 'sync' | 'tasks' | 'all';

/** How a worker writes its logs: one JSON object a line, or coloured lines for a person. */
export type LogFormat = 'json' | 'pretty';

/** A worker's configuration, checked, as {@link loadWorkerConfig} gives it. */
export interface WorkerConfig {
  role: WorkerRole;
  logLevel: LevelWithSilent;
  logFormat: LogFormat;
  /** The connector options from the file and the environment, the role applied; the logger is the worker's. */
  options: Omit<ConnectorOptions, 'logger'>;
}

/** Where {@link loadWorkerConfig} reads. */
export interface WorkerConfigSources {
  /** The environment variables, `process.env` in a worker. */
  env: Readonly<Record<string, string | undefined>>;
  /** The flags, without the command and the module (`['--role', 'tasks']`). */
  argv: readonly string[];
  /** Whether stdout is a terminal: the logs are pretty there unless `LOG_FORMAT` says otherwise. */
  isTerminal: boolean;
}

const SUBJECT = 'worker configuration';
const ROLES = ['sync', 'tasks', 'all'] as const satisfies readonly WorkerRole[];
const TRUE_OR_FALSE = '`true` or `false`';

// The environment variables a worker reads, under their own names so that a message names what the operator set.
const environmentSchema = z.object({
  APPROVAL_SERVICE_URL: clientOptionsSchema.shape.baseUrl.optional(),
  APPROVAL_CONNECTOR_TOKEN: nonEmptyString().optional(),
  CONNECTOR_ROLE: z.enum(ROLES).optional(),
  CONNECTOR_CONFIG: nonEmptyString().optional(),
  OPERATIONS_PORT: portText().optional(),
  OPERATIONS_HOST: host().optional(),
  CONNECTOR_KEYS_FILE: nonEmptyString().optional(),
  CONNECTOR_KEYS_READ_ONLY: z
    .enum(['true', 'false'], { error: TRUE_OR_FALSE })
    .transform((value) => value === 'true')
    .optional(),
  LOG_LEVEL: logLevel().default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
});

/** The environment variables a worker reads; any other is left alone. */
export const WORKER_VARIABLES: readonly string[] = Object.freeze(Object.keys(environmentSchema.shape));

// The options a variable sets, and those of them that some source must give.
const OPTION_VARIABLES = [
  ['APPROVAL_SERVICE_URL', 'service.baseUrl'],
  ['APPROVAL_CONNECTOR_TOKEN', 'service.token'],
  ['OPERATIONS_PORT', 'operations.port'],
  ['OPERATIONS_HOST', 'operations.host'],
] as const;
const REQUIRED_VARIABLES = [
  ['APPROVAL_SERVICE_URL', 'service.baseUrl', 'the service base URL'],
  ['APPROVAL_CONNECTOR_TOKEN', 'service.token', 'the connector token'],
] as const;

const flagsSchema = z.strictObject({
  '--role': z.enum(ROLES).optional(),
  '--help': z.boolean().default(false),
});

// The connector options a JSON file can hold. The logger is the worker's (LOG_LEVEL, LOG_FORMAT) and the key store
// comes from CONNECTOR_KEYS_FILE; the rest is the connector's own schema, so a file is checked as options are.
const fileSchema = connectorOptionsSchema.pick({
  service: true,
  sync: true,
  poller: true,
  shutdown: true,
  keys: true,
  operations: true,
  metrics: true,
});

/** How to run a worker, for `--help` and for a bad configuration's message. */
export const WORKER_USAGE = `Options:
  --role sync|tasks|all   what this worker runs: the sync loop, the task poller, or both (default: all,
                          or CONNECTOR_ROLE)
  -h, --help              show this help

Environment:
  APPROVAL_SERVICE_URL      the service's base URL (or service.baseUrl in the config file)
  APPROVAL_CONNECTOR_TOKEN  the connector token, never printed (or service.token in the config file)
  CONNECTOR_ROLE            sync, tasks or all (default all); --role wins over it
  CONNECTOR_CONFIG          path of a JSON file holding any other connector option (sync, poller, shutdown, ...)
  OPERATIONS_PORT           port of /healthz, /readyz and /metrics (default: off, unless the config file sets one)
  OPERATIONS_HOST           interface of that port (default 127.0.0.1; 0.0.0.0 in a container)
  CONNECTOR_KEYS_FILE       the key ring file (default .connector/keys.json)
  CONNECTOR_KEYS_READ_ONLY  true when the operator provides the keys there (a mounted Secret); default false
  LOG_LEVEL                 fatal, error, warn, info, debug, trace or silent (default info)
  LOG_FORMAT                pretty or json (default: pretty on a terminal, json otherwise)

The environment wins over the config file. Exit codes: 0 after a clean stop, 1 when the connector failed,
2 for a bad configuration or module.`;

type FileOptions = Partial<Record<keyof z.input<typeof fileSchema>, unknown>> & Record<string, unknown>;

/**
 * Reads and checks a worker's configuration: every problem of the environment, the flags and the config file is
 * collected into one {@link ValidationError}; nothing else is done then. The environment wins over the file. The
 * token's value (and any header's) is never shown. With `--help`, it answers `'help'` and reads nothing else.
 */
export function loadWorkerConfig({ env, argv, isTerminal }: WorkerConfigSources): WorkerConfig | 'help' {
  const issues: ValidationIssue[] = [];
  const collect = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  };

  const flags = collect(() => parseFlags(argv));
  if (flags?.['--help']) return 'help';
  // An empty variable is an unset one, as a shell's `VAR=` means.
  const given = Object.fromEntries(
    WORKER_VARIABLES.map((name) => [name, env[name] === '' ? undefined : env[name]]),
  );
  const variables = collect(() =>
    parseOptions(environmentSchema, given, SUBJECT, ['APPROVAL_CONNECTOR_TOKEN']),
  );
  // A variable that was set owns its option: the file's value there is overridden, whatever it is.
  const isSet = (name: string) => given[name] !== undefined;
  const file = given.CONNECTOR_CONFIG === undefined ? {} : readConfigFile(given.CONNECTOR_CONFIG, issues);

  const merged: FileOptions = {
    ...file,
    service: isObject(file.service) ? { ...file.service } : (file.service ?? {}),
  };
  // `enabled` is the role's: refused in words about the role, and kept from the schema, which would take it.
  for (const part of ['sync', 'poller'] as const) {
    const section = merged[part];
    if (!isObject(section) || !('enabled' in section)) continue;
    issues.push({
      code: 'custom',
      path: [part, 'enabled'],
      message: `Unexpected option \`${part}.enabled\` in the config file: the role (--role, CONNECTOR_ROLE) says what a worker runs`,
    });
    const { enabled: _enabled, ...rest } = section;
    merged[part] = rest;
  }
  if (isObject(merged.service)) {
    if (variables?.APPROVAL_SERVICE_URL !== undefined)
      merged.service.baseUrl = variables.APPROVAL_SERVICE_URL;
    if (variables?.APPROVAL_CONNECTOR_TOKEN !== undefined) {
      merged.service.token = variables.APPROVAL_CONNECTOR_TOKEN;
    }
  }
  if (isSet('OPERATIONS_PORT') || isSet('OPERATIONS_HOST')) {
    merged.operations = {
      ...(isObject(file.operations) ? file.operations : {}),
      ...(variables?.OPERATIONS_PORT === undefined ? {} : { port: variables.OPERATIONS_PORT }),
      ...(variables?.OPERATIONS_HOST === undefined ? {} : { host: variables.OPERATIONS_HOST }),
    };
  }

  // The options a variable was set for are its own: a problem there is the variable's, reported above under its
  // name. So are those that no source gave, named by the variable, the usual place for them.
  const owned: string[] = OPTION_VARIABLES.filter(([name]) => isSet(name)).map(([, path]) => path);
  for (const [name, path, what] of REQUIRED_VARIABLES) {
    const option = path.split('.')[1] as string;
    if (isSet(name) || (isObject(file.service) && file.service[option] !== undefined)) continue;
    owned.push(path);
    issues.push({
      code: 'custom',
      path: [name],
      message: `Expected \`${name}\` to be set to ${what} (or \`${path}\` in the config file), got nothing`,
    });
  }

  collect(() => {
    try {
      parseOptions(
        fileSchema,
        merged,
        SUBJECT,
        CLIENT_SECRET_OPTIONS.map((name) => `service.${name}`),
      );
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      const issuesOfFile = error.issues.filter((issue) => {
        const path = issue.path.join('.');
        return !owned.some((name) => path === name || path.startsWith(`${name}.`));
      });
      throw new ValidationError(SUBJECT, issuesOfFile);
    }
  });

  if (variables?.CONNECTOR_KEYS_READ_ONLY === true && variables.CONNECTOR_KEYS_FILE === undefined) {
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_KEYS_READ_ONLY'],
      message:
        'Expected `CONNECTOR_KEYS_FILE` to be set when `CONNECTOR_KEYS_READ_ONLY` is true: the file the operator provides',
    });
  }

  if (issues.length > 0 || variables === undefined) throw new ValidationError(SUBJECT, issues);

  const role = flags?.['--role'] ?? variables.CONNECTOR_ROLE ?? 'all';
  const keysFile = variables.CONNECTOR_KEYS_FILE;
  const sync = isObject(merged.sync) ? merged.sync : {};
  const poller = isObject(merged.poller) ? merged.poller : {};
  const options = {
    ...merged,
    sync: { ...sync, enabled: role !== 'tasks' },
    poller: { ...poller, enabled: role !== 'sync' },
    ...(keysFile === undefined
      ? {}
      : {
          keyStore: variables.CONNECTOR_KEYS_READ_ONLY
            ? new ReadOnlyKeyStore({ file: resolve(keysFile) })
            : new FileKeyStore(resolve(keysFile)),
        }),
  } as Omit<ConnectorOptions, 'logger'>;
  return {
    role,
    logLevel: variables.LOG_LEVEL,
    logFormat: variables.LOG_FORMAT ?? (isTerminal ? 'pretty' : 'json'),
    options,
  };
}

function parseFlags(argv: readonly string[]): z.output<typeof flagsSchema> {
  const known = new Set(['role', 'help', 'h']);
  const { values, tokens } = parseArgs({
    args: [...argv],
    options: { role: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    // Unknown flags reach the options' check, which names the nearest known one.
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  // A word after an unknown flag is that flag's value (`--rol tasks`), not an argument of its own.
  const stray: ValidationIssue[] = tokens
    .filter((token, index) => {
      if (token.kind !== 'positional') return false;
      const before = tokens[index - 1];
      return !(before?.kind === 'option' && !known.has(before.name) && before.inlineValue === undefined);
    })
    .map((token) => ({
      code: 'custom' as const,
      path: [],
      message: `Unexpected argument \`${(token as { value: string }).value}\`: every option is a --flag`,
    }));
  let flags: z.output<typeof flagsSchema>;
  try {
    flags = parseOptions(flagsSchema, asFlags(values), SUBJECT);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(SUBJECT, [...stray, ...error.issues]);
  }
  if (stray.length > 0) throw new ValidationError(SUBJECT, stray);
  return flags;
}

/** The config file's options, or `{}` with the problem added to `issues` when it cannot be read as a JSON object. */
function readConfigFile(path: string, issues: ValidationIssue[]): FileOptions {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_CONFIG'],
      message: `Cannot read the config file ${path} (\`CONNECTOR_CONFIG\`): ${code}`,
    });
    return {};
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Only where: a parser's message quotes the text around it, which may hold the token.
    const where = /position \d+(?: \(line \d+ column \d+\))?/.exec((error as Error).message)?.[0];
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_CONFIG'],
      message: `The config file ${path} (\`CONNECTOR_CONFIG\`) is not valid JSON${where ? ` (at ${where})` : ''}`,
    });
    return {};
  }
  if (!isObject(value)) {
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_CONFIG'],
      message: `The config file ${path} (\`CONNECTOR_CONFIG\`) holds ${Array.isArray(value) ? 'an array' : `\`${String(value)}\``}, not a JSON object of options`,
    });
    return {};
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
