/**
 * A worker process: its configuration read from the environment, an optional file and the flags (see
 * `worker-config.ts`), its logs, and the connector run until SIGTERM. `connector run` and a project's own `main.ts`
 * both come here. See `docs/worker.md`.
 * @module
 */
import { relative } from 'node:path';
import { type LevelWithSilent, pino } from 'pino';
import type { Connector } from '../../connector/index.js';
import { ValidationError } from '../../errors.js';
import { readCommandLine } from '../../internal/command-line.js';
import { WORKER_EXIT_CODES } from '../../internal/exit-codes.js';
import { prettyLogOptions } from '../../internal/pretty-logs.js';
import type { ConnectorOptions } from '../core/index.js';
import { createLogger, type PinoLogger } from '../operations/index.js';
import { type RunConnectorOptions, runConnector, type SignalSource } from './run.js';
import { flushTracingSdk, startTracingSdk } from './tracing-sdk.js';
import { type LogFormat, loadWorkerConfig, WORKER_USAGE, type WorkerRole } from './worker-config.js';

/** What a worker's connector module, or its `main.ts`, hands the worker. */
export interface WorkerContext {
  /** The environment the worker was started with: where the source's address and credentials are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** The worker's logger, for the source's client. */
  logger: PinoLogger;
  /** What this worker runs. */
  role: WorkerRole;
}

/**
 * Builds the connector once the worker's configuration is known to be good, from the context (the environment, to
 * build the source's client from). It may be async.
 */
export type ConnectorFactory = (context: WorkerContext) => Connector<object> | Promise<Connector<object>>;

/** Options of {@link runWorker}. */
export interface RunWorkerOptions {
  /**
   * The environment variables to read (see `docs/worker.md`).
   * @default process.env
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The flags (`--role`, `--help`).
   * @default process.argv.slice(2)
   */
  argv?: readonly string[];
  /**
   * Where the shutdown signals come from (see `runConnector`).
   * @default process
   */
  signals?: SignalSource;
  /**
   * Ends the process at the stop deadline (see `runConnector`).
   * @default process.exit when `signals` is the process; `false` when it is a stand-in
   */
  exit?: RunConnectorOptions['exit'];
  /**
   * What `--help` prints, and a refusal ends with.
   * @default a usage line naming the program as it was started (`Usage: node dist/main.js [options]`), then the
   *   worker's options and variables
   */
  usage?: string;
}

/**
 * Runs a connector as a worker process, configured by its environment, an optional config file and `--role`:
 * checks the configuration (every problem in one message on stderr, exit code 2), builds the connector (given a
 * function), runs it until SIGTERM or SIGINT, and resolves with the exit code: 0 after a clean stop, 1 when the
 * connector failed, 2 when the configuration or the connector was refused. `connector run` is this, with the
 * connector from a module.
 *
 * @example
 * <!-- example: typecheck, because it runs until the process is signalled -->
 * ```ts
 * // src/main.ts, started as `node dist/main.js` so that signals reach it
 * import { runWorker } from 'approval-connector-kit';
 * import { JiraConnector } from './connector.js';
 * import { JiraClient } from './jira.js';
 *
 * process.exitCode = await runWorker(({ env }) => new JiraConnector(new JiraClient(env.JIRA_SITE!)));
 * ```
 */
/** The usage of a program that runs a worker (a project's `dist/main.js`): how it is started, then its options. */
export function programUsage(entry: string | undefined): string {
  const program = entry === undefined ? 'main.js' : relative(process.cwd(), entry) || entry;
  return `Usage: node ${program} [options]

Runs the connector as a worker until SIGTERM or SIGINT, configured by the environment (and CONNECTOR_CONFIG).

${WORKER_USAGE}`;
}

export async function runWorker(
  connector: Connector<object> | ConnectorFactory,
  options: RunWorkerOptions = {},
): Promise<number> {
  const env = options.env ?? process.env;
  // Refused, or `--help` answered, as every command's command line is.
  const config = readCommandLine(
    {
      usage: options.usage ?? programUsage(process.argv[1]),
      parse: (argv, env) => loadWorkerConfig({ env, argv, isTerminal: process.stdout.isTTY === true }),
    },
    options.argv ?? process.argv.slice(2),
    { io: { env, stdout: process.stdout, stderr: process.stderr } },
  );
  if (typeof config === 'number') return config;

  const logger = await createWorkerLogger({ level: config.logLevel, format: config.logFormat });
  // The SDK reads the process's own environment.
  const tracing = await startTracingSdk(process.env, logger);
  const context: WorkerContext = { env, logger, role: config.role };
  const connectorOptions: ConnectorOptions = { ...config.options, logger };
  const run: RunConnectorOptions = {
    ...(options.signals === undefined ? {} : { signals: options.signals }),
    ...(options.exit === undefined ? {} : { exit: options.exit }),
    onSignal: (signal) => logger.info({ signal }, 'shutdown signal received; stopping'),
  };
  try {
    return await buildAndRun(connector, connectorOptions, context, run);
  } catch (error) {
    if (error instanceof ValidationError) {
      logger.error({ err: error }, 'the connector was refused');
      return WORKER_EXIT_CODES.refused;
    }
    logger.error({ err: error }, 'the connector could not be built');
    return WORKER_EXIT_CODES.failed;
  } finally {
    await flushTracingSdk(tracing);
  }
}

/**
 * The one place that builds the connector and runs it: everything that depends on the shape of the author's API.
 * A `ValidationError` from here means the connector or its options were refused.
 */
async function buildAndRun(
  target: Connector<object> | ConnectorFactory,
  options: ConnectorOptions,
  context: WorkerContext,
  run: RunConnectorOptions,
): Promise<number> {
  // The worker checks what it is given is a connector (its `tasks` and `source`): a ValidationError if not.
  const connector = typeof target === 'function' ? await target(context) : target;
  return runConnector(connector, options, run);
}

/**
 * The worker's logger: the kit's (every secret path redacted) at `level`, writing JSON lines to stdout, or, `pretty`,
 * one readable coloured line each (pino-pretty) for a person at a terminal.
 */
export async function createWorkerLogger(options: {
  level: LevelWithSilent;
  format: LogFormat;
  /**
   * Colours in the pretty format.
   * @default whether stdout is a terminal
   */
  colorize?: boolean;
}): Promise<PinoLogger> {
  if (options.format === 'json') {
    return createLogger({ level: options.level, destination: pino.destination({ dest: 1, sync: true }) });
  }
  // Loaded only here: a worker that logs JSON, and every other user of the kit, never loads it.
  const { default: pinoPretty } = await import('pino-pretty');
  const destination = pinoPretty({
    ...prettyLogOptions(options.colorize ?? process.stdout.isTTY === true),
    // Written before the process ends, also when it ends at the stop deadline.
    sync: true,
  });
  return createLogger({ level: options.level, destination });
}
