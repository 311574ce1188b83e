/**
 * The configuration of a worker process (`connector run`, `runWorker`): environment variables, an optional JSON file
 * holding any other connector option, and the `--role` flag, checked together through the options pipeline so that
 * every problem is named in one message. See `docs/worker.md`.
 * @module
 */
import { resolve } from 'node:path';
import type { LevelWithSilent } from 'pino';
import { z } from 'zod';
import { CLIENT_SECRET_OPTIONS, clientOptionsSchema } from '../../client/internal.js';
import { ValidationError, type ValidationIssue } from '../../errors.js';
import {
  CommandLine,
  collectIssues,
  type FlagSpec,
  readVariables,
  usageColumns,
} from '../../internal/command-line.js';
import {
  host,
  logLevel,
  misspeltVariable,
  nonEmptyString,
  parseOptions,
  portText,
} from '../../internal/options.js';
import { type ConnectorOptions, connectorOptionsSchema, DEFAULT_KEY_FILE } from '../core/index.js';
import { FileKeyStore, type KeyStore, ReadOnlyKeyStore } from '../keys/index.js';
import { PUSH_SECRET_OPTIONS, pushOptionsSchema } from '../push/index.js';
import { isObject, readConfigFile } from './config-file.js';

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

/** A setting of a worker, declared once: its parsing, `--help` and the table of docs/worker.md come from here. */
interface WorkerSetting {
  /** The variable's text, checked. */
  schema: z.ZodType;
  /** What the setting is, a line of `--help`. */
  help: string;
  /** Its default as docs/worker.md's table says it, in Markdown; a `value` is that value in backticks. */
  default: string;
  /** The value when no source gives one. */
  value?: unknown;
  /** The connector option it sets, which the config file may hold instead (`service.baseUrl`). */
  option?: `${'service' | 'operations' | 'push'}.${string}`;
  /** What it is when some source must give it, for the message that asks for it. */
  required?: string;
  /** The flag that sets it too, and wins over it. */
  flag?: `--${string}`;
  /** Never shown, in a message or a log line. */
  secret?: true;
}

/** The settings a worker reads from its environment (and its flags), in the order of `--help` and the docs. */
export const WORKER_SETTINGS = {
  APPROVAL_SERVICE_URL: {
    schema: clientOptionsSchema.shape.baseUrl,
    help: "the service's base URL",
    default: '`service.baseUrl` of the config file; required',
    option: 'service.baseUrl',
    required: 'the service base URL',
  },
  APPROVAL_CONNECTOR_TOKEN: {
    schema: nonEmptyString(),
    help: 'the connector token, never printed',
    default: '`service.token` of the config file; required',
    option: 'service.token',
    required: 'the connector token',
    secret: true,
  },
  CONNECTOR_ROLE: {
    schema: z.enum(ROLES),
    help: 'sync (the sync loop), tasks (the task poller) or all',
    default: '`all`',
    value: 'all',
    flag: '--role',
  },
  CONNECTOR_CONFIG: {
    schema: nonEmptyString(),
    help: 'a JSON file of any other connector option (sync, poller, shutdown, ...)',
    default: 'none',
  },
  OPERATIONS_PORT: {
    schema: portText(),
    help: 'port of /healthz, /readyz and /metrics (0: a free one)',
    default: 'off, or `operations.port` of the config file',
    option: 'operations.port',
  },
  OPERATIONS_HOST: {
    schema: host(),
    help: 'interface of that port, 0.0.0.0 in a container',
    default: '`127.0.0.1`, or `operations.host` of the config file',
    option: 'operations.host',
  },
  PUSH_PORT: {
    schema: portText(),
    help: 'port of the push ingress, where the source delivers its events (0: a free one)',
    default: 'off, or `push.port` of the config file (`9465` when another `PUSH_` variable is set)',
    option: 'push.port',
  },
  PUSH_HOST: {
    schema: host(),
    help: 'interface of that port, 0.0.0.0 in a container',
    default: '`127.0.0.1`, or `push.host` of the config file',
    option: 'push.host',
  },
  PUSH_PUBLIC_URL: {
    schema: pushOptionsSchema.shape.publicUrl.unwrap(),
    help: 'the push ingress as the source reaches it, which the webhook is registered for',
    default: 'none, or `push.publicUrl` of the config file',
    option: 'push.publicUrl',
  },
  PUSH_SECRET: {
    schema: pushOptionsSchema.shape.secret.unwrap(),
    help: 'the webhook secret deliveries are verified with, never printed',
    default: 'none, or `push.secret` of the config file',
    option: 'push.secret',
    secret: true,
  },
  CONNECTOR_KEYS_FILE: {
    schema: nonEmptyString(),
    help: 'the key ring file',
    default: `\`${DEFAULT_KEY_FILE}\``,
  },
  CONNECTOR_KEYS_READ_ONLY: {
    schema: z.enum(['true', 'false'], { error: TRUE_OR_FALSE }).transform((value) => value === 'true'),
    help: 'true: the operator provides the keys in that file (a mounted Secret)',
    default: '`false`',
    value: false,
  },
  LOG_LEVEL: {
    schema: logLevel(),
    help: 'fatal, error, warn, info, debug, trace or silent',
    default: '`info`',
    value: 'info',
  },
  LOG_FORMAT: {
    schema: z.enum(['json', 'pretty']),
    help: 'pretty or json',
    default: '`pretty` on a terminal, `json` otherwise',
  },
} as const satisfies Record<string, WorkerSetting>;

type Settings = typeof WORKER_SETTINGS;
type Name = keyof Settings;
type Variables = {
  [K in Name]: z.output<Settings[K]['schema']> | (Settings[K] extends { value: infer V } ? V : undefined);
};

const SETTINGS: ReadonlyArray<[Name, WorkerSetting]> = Object.entries(WORKER_SETTINGS) as [
  Name,
  WorkerSetting,
][];

/** The environment variables a worker reads; any other is left alone. */
export const WORKER_VARIABLES: readonly string[] = Object.freeze(SETTINGS.map(([name]) => name));

const SECRET_VARIABLES = SETTINGS.filter(([, setting]) => setting.secret).map(([name]) => name);

// The variables under their own names, so that a message names what the operator set; the defaults come after the
// flags, which win over them.
const environmentSchema = z.object(
  Object.fromEntries(SETTINGS.map(([name, setting]) => [name, setting.schema.optional()])),
);

// The connector options a JSON file can hold. The logger is the worker's (LOG_LEVEL, LOG_FORMAT) and the key store
// comes from CONNECTOR_KEYS_FILE; the rest is the connector's own schema, so a file is checked as options are.
const fileSchema = connectorOptionsSchema.pick({
  service: true,
  sync: true,
  poller: true,
  shutdown: true,
  keys: true,
  operations: true,
  push: true,
  metrics: true,
});

/** How to run a worker, for `--help` and for a bad configuration's message. */
export const WORKER_USAGE = workerUsage();

function workerUsage(): string {
  const flagRows = SETTINGS.flatMap(
    ([name, { flag, schema }]): Array<[string, string]> =>
      flag === undefined
        ? []
        : [[`${flag} ${(schema as z.ZodEnum).options.join('|')}`, `as ${name}, and wins over it`]],
  );
  const variableRows = SETTINGS.map(([name, setting]): [string, string] => [
    name,
    `${setting.help} (default: ${setting.default.replaceAll('`', '')})`,
  ]);
  return `Options:
${usageColumns([...flagRows, ['-h, --help', 'show this help']])}

Environment:
${usageColumns(variableRows)}

The environment wins over the config file. Exit codes: 0 after a clean stop, 1 when the connector failed,
2 for a bad configuration or module.`;
}

/** A worker's command line: the flags of the settings that have one, and `--help`. */
export const WORKER_COMMAND_LINE = new CommandLine({
  subject: SUBJECT,
  usage: WORKER_USAGE,
  flags: Object.fromEntries(
    SETTINGS.flatMap(([, { flag, schema }]) =>
      flag === undefined ? [] : [[flag.slice(2), { type: 'string', schema: schema.optional() }]],
    ),
  ) as Record<string, FlagSpec>,
});

type FileOptions = Partial<Record<keyof z.input<typeof fileSchema>, unknown>> & Record<string, unknown>;

/**
 * Reads and checks a worker's configuration: every problem of the environment, the flags and the config file is
 * collected into one {@link ValidationError}; nothing else is done then. The environment wins over the file. The
 * token's value (and any header's) is never shown. With `--help`, it answers `'help'` and reads nothing else.
 */
export function loadWorkerConfig({ env, argv, isTerminal }: WorkerConfigSources): WorkerConfig | 'help' {
  const issues: ValidationIssue[] = [];
  const given = collectIssues(issues, () => WORKER_COMMAND_LINE.parse(argv));
  if (given === 'help') return 'help';
  const set = readVariables(env, WORKER_VARIABLES);
  const variables = collectIssues(issues, () =>
    parseOptions(environmentSchema, set, SUBJECT, SECRET_VARIABLES),
  ) as Partial<Variables> | undefined;
  issues.push(...slipsOfOptionalVariables(set, env));
  const file = set.CONNECTOR_CONFIG === undefined ? {} : readConfigFile(set.CONNECTOR_CONFIG, issues);
  const merged = withoutRoleOptions(file, issues);
  const owned = applyVariables(merged, file, set, variables ?? {}, issues, env);
  collectIssues(issues, () => checkFile(merged, owned));
  if (variables?.CONNECTOR_KEYS_READ_ONLY === true && variables.CONNECTOR_KEYS_FILE === undefined) {
    issues.push({
      code: 'custom',
      path: ['CONNECTOR_KEYS_READ_ONLY'],
      message:
        'Expected `CONNECTOR_KEYS_FILE` to be set when `CONNECTOR_KEYS_READ_ONLY` is true: the file the operator provides',
    });
  }
  if (issues.length > 0 || variables === undefined) throw new ValidationError(SUBJECT, issues);

  // A flag wins over its variable, and a variable over its default.
  const value = <K extends Name>(name: K) => {
    const { flag, value: fallback } = WORKER_SETTINGS[name] as WorkerSetting;
    const flagged = flag === undefined ? undefined : (given as Record<string, unknown> | undefined)?.[flag];
    return (flagged ?? variables[name] ?? fallback) as Variables[K];
  };
  return {
    role: value('CONNECTOR_ROLE'),
    logLevel: value('LOG_LEVEL'),
    logFormat: value('LOG_FORMAT') ?? (isTerminal ? 'pretty' : 'json'),
    options: withRole(
      merged,
      value('CONNECTOR_ROLE'),
      keyStore(value('CONNECTOR_KEYS_FILE'), value('CONNECTOR_KEYS_READ_ONLY')),
    ),
  };
}

/** The file's options without `enabled`, which is the role's: refused in words about the role. */
function withoutRoleOptions(file: FileOptions, issues: ValidationIssue[]): FileOptions {
  const merged: FileOptions = { ...file };
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
  return merged;
}

/**
 * A variable of the environment set by a slip of the name of an optional one that is not set (`LOG_LEVLE`): a
 * problem, since what the operator set would otherwise be ignored without a word. A required one missing says the
 * same in its own message.
 */
function slipsOfOptionalVariables(
  set: Readonly<Record<string, string | undefined>>,
  env: Readonly<Record<string, string | undefined>>,
): ValidationIssue[] {
  return SETTINGS.flatMap(([name, setting]): ValidationIssue[] => {
    if (set[name] !== undefined || setting.required !== undefined) return [];
    const slip = misspeltVariable(name, env);
    if (slip === undefined || WORKER_VARIABLES.includes(slip)) return [];
    return [
      { code: 'custom', path: [slip], message: `Unknown variable \`${slip}\`; did you mean \`${name}\`?` },
    ];
  });
}

/**
 * Sets in `merged` the options the variables that were set give, and asks for the required ones that no source
 * gives. Answers the options that are the variables' own: a problem there is the variable's, reported under its
 * name; so is an option that no source gave, named by its variable, the usual place for it.
 */
function applyVariables(
  merged: FileOptions,
  file: FileOptions,
  set: Readonly<Record<string, string | undefined>>,
  variables: Partial<Variables>,
  issues: ValidationIssue[],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const owned: string[] = [];
  for (const [name, setting] of SETTINGS) {
    if (setting.option === undefined) continue;
    const [section, key] = setting.option.split('.') as [keyof FileOptions & string, string];
    if (set[name] !== undefined) {
      owned.push(setting.option);
      // The variable owns its option, whatever the file holds there; a section that is no object is replaced
      // when it is `false` (no operations port), and otherwise left for the file's check to name.
      const current = merged[section];
      if (current !== undefined && current !== false && !isObject(current)) continue;
      const value = variables[name];
      merged[section] = {
        ...(isObject(current) ? current : {}),
        ...(value === undefined ? {} : { [key]: value }),
      };
    } else if (setting.required !== undefined) {
      const fromFile = file[section];
      if (isObject(fromFile) && fromFile[key] !== undefined) continue;
      merged[section] ??= {};
      owned.push(setting.option);
      // A slip of the name is looked for among every variable of the environment, not only the known ones.
      const slip = misspeltVariable(name, env);
      issues.push({
        code: 'custom',
        path: [name],
        message: `Expected \`${name}\` to be set to ${setting.required} (or \`${setting.option}\` in the config file), got nothing${slip === undefined ? '' : ` (\`${slip}\` is set: did you mean \`${name}\`?)`}`,
      });
    }
  }
  return owned;
}

/** Checks the merged options as the connector would, but for those the variables own. */
function checkFile(merged: FileOptions, owned: readonly string[]): void {
  try {
    parseOptions(fileSchema, merged, SUBJECT, [
      ...CLIENT_SECRET_OPTIONS.map((name) => `service.${name}`),
      ...PUSH_SECRET_OPTIONS.map((name) => `push.${name}`),
    ]);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const issuesOfFile = error.issues.filter((issue) => {
      const path = issue.path.join('.');
      return !owned.some((name) => path === name || path.startsWith(`${name}.`));
    });
    throw new ValidationError(SUBJECT, issuesOfFile);
  }
}

function withRole(
  merged: FileOptions,
  role: WorkerRole,
  keyStore: KeyStore | undefined,
): Omit<ConnectorOptions, 'logger'> {
  const sync = isObject(merged.sync) ? merged.sync : {};
  const poller = isObject(merged.poller) ? merged.poller : {};
  return {
    ...merged,
    sync: { ...sync, enabled: role !== 'tasks' },
    poller: { ...poller, enabled: role !== 'sync' },
    ...(keyStore === undefined ? {} : { keyStore }),
  } as Omit<ConnectorOptions, 'logger'>;
}

function keyStore(file: string | undefined, readOnly: boolean): KeyStore | undefined {
  if (file === undefined) return undefined;
  return readOnly ? new ReadOnlyKeyStore({ file: resolve(file) }) : new FileKeyStore(resolve(file));
}
