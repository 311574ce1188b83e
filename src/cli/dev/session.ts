/**
 * The local loop as one call: a reference backend of its own, seeded, and each connector of a list built, run as a
 * worker against it and restarted on every change, their log lines printed readably and, on a terminal, a status
 * line per connector kept below them.
 * @module
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import pino, { type LevelWithSilent } from 'pino';
import { z } from 'zod';
import type { ReferenceBackend, SeedInput } from '../../backend/index.js';
import { backendOptionsSchema } from '../../backend/internal.js';
import {
  crossCheck,
  integer,
  logLevel,
  nonEmptyString,
  parseOptions,
  port,
  withMethods,
} from '../../internal/options.js';
import { DEFAULT_MODULE } from '../commands/default-module.js';
import { backendBanner, type ConnectorTenant, startDevBackend } from './backend.js';
import { ConnectorBoard } from './board.js';
import { ConnectorLoop, SOURCE_FOLDER } from './connector-loop.js';
import { type LogFormat, LogPrinter } from './logs.js';
import { DevOutput, type DevStream } from './output.js';
import { hasBuildScript } from './rebuild.js';
import { type ConnectorStatus, renderStatusLine } from './status.js';
import { projectEnvironment, wantedPushPort, workerEnvironment } from './worker-env.js';

/** A connector of the local loop: a project folder whose build gives a connector module. */
export interface DevConnector {
  /** Its name: its system's in the development seed, and its lines' label when several connectors run. */
  name: string;
  /** The project folder: its `build` script is run there, its `src/` watched, its `.env` read. */
  project: string;
  /**
   * The connector module its worker runs (`connector run <module>`), relative to the project.
   * @default 'dist/connector.js'
   */
  module?: string;
  /**
   * The connector token of its system. With the development seed, that seed's token for its name; with another
   * seed, the connectors take the seed's systems that have a connector token, in order.
   * @default as said
   */
  connectorToken?: string;
  /**
   * Variables of this connector's worker alone: its source's settings, say. They win over the loop's environment
   * and the project's `.env`; the loop's own settings (the service, the token, the operations port) win over them.
   * @default none
   */
  env?: Readonly<Record<string, string>>;
}

/** Options of {@link startDev}. */
export interface DevOptions {
  /** The connectors to run, at least one, each with a name of its own. */
  connectors: readonly DevConnector[];
  /**
   * The backend's port, on 127.0.0.1; `0` picks a free one.
   * @default 8080
   */
  port?: number;
  /**
   * A SQLite file that keeps the backend's data across restarts.
   * @default in memory
   */
  dataFile?: string;
  /**
   * The seed, applied when the store is empty: an object, or the path of a seed file.
   * @default the development seed: an organization with two approvers, and a system per connector
   */
  seed?: SeedInput | string;
  /**
   * The admin token; never printed.
   * @default a random one, printed in the banner
   */
  adminToken?: string;
  /**
   * The level of the loop's, the backend's and the workers' log lines.
   * @default 'info'
   */
  logLevel?: LevelWithSilent;
  /**
   * How log lines are printed: readably, or as JSON lines.
   * @default 'pretty' on a terminal, 'json' otherwise
   */
  logFormat?: LogFormat;
  /**
   * Where everything is printed; the status lines are drawn only when it is a terminal.
   * @default process.stdout
   */
  output?: DevStream;
  /**
   * The environment the workers and the builds start from (a project's `.env` adds what it does not set).
   * @default process.env
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * How long a stop waits for a worker after SIGTERM before it kills it: above the worker's own stop deadline
   * (`shutdown.graceMs + shutdown.forceMs` and a second, 36 s by default), which it keeps whatever its handlers do.
   * @default 60000
   */
  stopTimeoutMs?: number;
  /**
   * More lines of the start banner, printed after the connectors' (where a simulated source listens, say).
   * @default none
   */
  notes?: readonly string[];
  /**
   * A file the log lines go to (the loop's, the backend's, the workers' and the builds' output), readable without
   * colours, instead of the output: the output then holds the banner, which names the file, the lines printed with
   * `print()`, and the status lines, so that the banner stays on a terminal's screen. Its folder is made when
   * missing; a file already there is replaced.
   * @default none: the log lines are written to the output
   */
  logFile?: string;
}

/** A connector of a running session: where it works, and where its worker answers. */
export interface DevSessionConnector {
  name: string;
  project: string;
  module: string;
  tenant: ConnectorTenant;
  /** The worker's operations endpoints (`/healthz`, `/readyz`, `/metrics`), the same port across restarts. */
  operationsUrl: string;
  /**
   * The worker's push ingress, where a source on this machine delivers (`PUSH_PUBLIC_URL`), the same port across
   * restarts: open when its connector declares a push path.
   */
  pushUrl: string;
}

/** A running local loop. */
export interface DevSession {
  backend: ReferenceBackend;
  connectors: readonly DevSessionConnector[];
  /** The figures of each connector's status line, now. */
  status(): ConnectorStatus[];
  /** Prints a line (or several) above the status lines, among the log lines. */
  print(text: string): void;
  /** Stops every worker gracefully, then the backend. Idempotent. */
  close(): Promise<void>;
}

const devOptionsSchema = z
  .strictObject({
    connectors: z
      .array(
        z.strictObject({
          name: nonEmptyString(),
          project: nonEmptyString(),
          module: nonEmptyString().default(DEFAULT_MODULE),
          connectorToken: nonEmptyString().optional(),
          env: z.record(z.string(), z.string()).default({}),
        }),
      )
      .min(1),
    port: port().default(8080),
    dataFile: nonEmptyString().optional(),
    seed: backendOptionsSchema.shape.seed,
    adminToken: backendOptionsSchema.shape.adminToken.unwrap().optional(),
    logLevel: logLevel().default('info'),
    logFormat: z.enum(['pretty', 'json']).optional(),
    output: withMethods<DevStream>('a writable stream', 'write').default(() => process.stdout),
    env: z.record(z.string(), z.string().optional()).default(() => process.env),
    stopTimeoutMs: integer(1).default(60_000),
    notes: z.array(z.string()).default([]),
    logFile: nonEmptyString().optional(),
  })
  .check(
    crossCheck(({ connectors }, context) => {
      connectors.forEach(({ name }, index) => {
        if (connectors.findIndex((other) => other.name === name) === index) return;
        context.addIssue({
          code: 'custom',
          path: ['connectors', index, 'name'],
          message: `Expected \`connectors[${index}].name\` to be a name of its own, got \`${JSON.stringify(name)}\` a second time`,
        });
      });
    }),
  );

/** How often the status lines are redrawn on a terminal. */
const STATUS_INTERVAL_MS = 250;

/**
 * Starts the local loop: the backend with its seed (the development seed by default), the banner that says where
 * everything is, then each connector built and run as a worker, rebuilt and restarted on every change of its
 * sources. Resolves once the backend listens and the builds have begun; a build that fails is printed and waited
 * out, not thrown. Bad options, a seed that cannot be read or a store seeded otherwise reject with a
 * `ValidationError`, nothing left running.
 *
 * @example
 * <!-- example: typecheck, because it runs until the process is signalled -->
 * ```ts
 * import { onShutdownSignal } from '../../internal/signals.js';
 * import { startDev } from './session.js';
 *
 * const session = await startDev({
 *   connectors: [
 *     { name: 'jira', project: 'examples/jira-connector' },
 *     { name: 'sap', project: 'examples/sap-connector' },
 *   ],
 * });
 * await onShutdownSignal();
 * await session.close();
 * ```
 */
export async function startDev(options: DevOptions): Promise<DevSession> {
  const settings = parseOptions(devOptionsSchema, options, 'development options', ['adminToken']);
  const { output, logFile, printer, logger } = await openOutput(settings);
  const specs = settings.connectors.map((connector) => ({
    ...connector,
    project: resolve(connector.project),
  }));

  const { backend, tenants } = await startDevBackend({
    port: settings.port,
    dataFile: settings.dataFile,
    seed: settings.seed,
    adminToken: settings.adminToken,
    logger: logger.child({ component: 'reference-backend' }),
    connectors: specs,
  });
  let connectors: DevSessionConnector[];
  try {
    const env = loopEnvironment(settings);
    // One at a time: two projects that ask for the same push port get it once.
    const taken = new Set<number>();
    connectors = [];
    for (const [index, spec] of specs.entries()) {
      const wanted = wantedPushPort(projectEnvironment(spec.project, spec.env, env));
      const pushPort = await portFor(wanted, taken);
      taken.add(pushPort);
      connectors.push({
        name: spec.name,
        project: spec.project,
        module: spec.module,
        tenant: tenants[index]!,
        operationsUrl: `http://127.0.0.1:${await freePort()}`,
        pushUrl: `http://127.0.0.1:${pushPort}/push`,
      });
    }
  } catch (error) {
    await backend.close();
    logFile?.end();
    throw error;
  }
  output.write(
    banner(
      backend,
      connectors,
      { dataFile: settings.dataFile, adminTokenGenerated: settings.adminToken === undefined },
      settings.notes,
      settings.logFile,
    ),
  );

  const { boards, loops, unwatch } = startLoops(settings, { backend, connectors, logger, printer });
  const status = () => boards.map((board) => board.snapshot());
  const draw = () => {
    const now = Date.now();
    output.status(status().map((line) => renderStatusLine(line, { now, width: output.width - 1 })));
  };
  const redraw = output.interactive ? setInterval(draw, STATUS_INTERVAL_MS).unref() : undefined;

  let closed: Promise<void> | undefined;
  return {
    backend,
    connectors,
    status,
    print: (text) => output.write(text),
    close: () => {
      closed ??= (async () => {
        clearInterval(redraw);
        await Promise.all(loops.map((loop) => loop.close()));
        unwatch();
        await backend.close();
        output.close();
        logger.info({ component: 'dev' }, 'stopped');
        if (logFile !== undefined) await new Promise((resolveEnd) => logFile.end(resolveEnd));
      })();
      return closed;
    },
  };
}

type DevSettings = z.output<typeof devOptionsSchema>;

/** Where the session writes: the terminal (or the stream given), and the log lines there or to the log file. */
async function openOutput(settings: DevSettings) {
  const output = new DevOutput(settings.output);
  if (settings.logFile !== undefined) mkdirSync(dirname(resolve(settings.logFile)), { recursive: true });
  const logFile = settings.logFile === undefined ? undefined : createWriteStream(settings.logFile);
  const printer = await LogPrinter.create(
    logFile === undefined ? output : new DevOutput(logFile),
    settings.logFormat ?? (output.interactive ? 'pretty' : 'json'),
  );
  const logger = pino({ level: settings.logLevel, base: undefined }, printer.destination());
  return { output, logFile, printer, logger };
}

/** Starts a loop for each connector (build, run, rebuild on change) and the board that follows its work. */
function startLoops(
  settings: DevSettings,
  session: {
    backend: ReferenceBackend;
    connectors: readonly DevSessionConnector[];
    logger: pino.Logger;
    printer: LogPrinter;
  },
): { boards: ConnectorBoard[]; loops: ConnectorLoop[]; unwatch: () => void } {
  const { backend, connectors, logger, printer } = session;
  const env = loopEnvironment(settings);
  const boards = connectors.map(
    (connector) => new ConnectorBoard(connector.name, connector.tenant.system.id, backend),
  );
  const unwatch = backend.watch((change) => {
    for (const board of boards) board.heard(change);
  });
  const loops = connectors.map(
    (connector, index) =>
      new ConnectorLoop({
        project: connector.project,
        module: connector.module,
        workerEnv: workerEnvironment(connector, settings.connectors[index]!.env, backend.url, env),
        buildEnv: env,
        logger: logger.child({ component: 'dev', connector: connector.name }),
        printer,
        label: connectors.length > 1 ? { connector: connector.name } : {},
        board: boards[index]!,
        stopTimeoutMs: settings.stopTimeoutMs,
      }),
  );
  for (const loop of loops) loop.start();
  return { boards, loops, unwatch };
}

/** The loop's environment as its workers and builds get it: the admin token, which opens everything, left out. */
function loopEnvironment(settings: DevSettings): Record<string, string> {
  const { APPROVAL_ADMIN_TOKEN: _admin, ...all } = settings.env;
  return Object.fromEntries(
    Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

function banner(
  backend: ReferenceBackend,
  connectors: readonly DevSessionConnector[],
  backendOptions: Parameters<typeof backendBanner>[1],
  notes: readonly string[],
  logFile: string | undefined,
): string {
  const consoleLink = backend.createConsoleLink();
  const lines = ['', ...backendBanner(backend, { ...backendOptions, consoleLink })];
  for (const { name, project, module, tenant, operationsUrl, pushUrl } of connectors) {
    const { system, organization, approvers } = tenant;
    lines.push(
      '',
      `Connector ${name}: ${module}, ${hasBuildScript(project) ? 'built and restarted' : 'restarted'} when ${SOURCE_FOLDER}/ changes`,
      // Several connectors share the backend, whose URL is above, and their operations endpoints share a line: the
      // banner of two connectors fits a screen of 40 lines with the status lines.
      ...(connectors.length === 1 ? [`  service URL:       ${backend.url}`] : []),
      `  connector token:   ${tenant.connectorToken}`,
      `  system:            ${system.name} (${system.id})${organization === undefined ? '' : ` of ${organization.name}`}`,
    );
    if (organization?.managementToken !== undefined) {
      lines.push(`  management token:  ${organization.managementToken}`);
    }
    if (approvers.length > 0) {
      lines.push(
        `  approvers:         ${approvers.map(({ systemUserId, name: person }) => `${systemUserId} (${person})`).join(', ')}`,
      );
    }
    if (connectors.length === 1) {
      // One line for both, so that the banner of one connector still fits a screen of 24 lines with the status line.
      lines.push(`  operations:        ${operationsUrl}, push ${pushUrl}`);
    }
  }
  if (connectors.length > 1) {
    const urls = connectors.map(({ name, operationsUrl }) => `${name} ${operationsUrl}`).join(', ');
    lines.push(`Operations endpoints (/metrics, /healthz, /readyz): ${urls}`);
    const pushUrls = connectors.map(({ name, pushUrl }) => `${name} ${pushUrl}`).join(', ');
    lines.push(`Push ingresses (of a connector with a push path): ${pushUrls}`);
  }
  if (notes.length > 0) lines.push('', ...notes);
  // The banner's last lines say again what the first ones say of where to go: on a screen shorter than the banner
  // (24 lines, `npm start`'s two connectors and simulators), they are what stays above the status lines.
  lines.push(
    '',
    `Console:   ${consoleLink}`,
    `Service:   ${backend.url} (tokens and approvers: above)`,
    ...(logFile === undefined ? [] : [`Log lines: ${logFile} (tail -f it to follow them)`]),
    'Stop with Ctrl+C.',
    '',
  );
  return lines.join('\n');
}

/** A port free now on 127.0.0.1, kept for a worker's operations endpoints (or push ingress) across its restarts. */
function freePort(): Promise<number> {
  return listenOnce(0).then((free) => free ?? Promise.reject(new Error('no free port on 127.0.0.1')));
}

/** `wanted` when it is free now on 127.0.0.1 and no other connector of the loop has it, else a free port. */
async function portFor(wanted: number | undefined, taken: ReadonlySet<number>): Promise<number> {
  if (wanted !== undefined && !taken.has(wanted) && (await listenOnce(wanted)) !== undefined) return wanted;
  return freePort();
}

/** Listens on `port` of 127.0.0.1 (0: any free one) and closes again: the port listened on, `undefined` if none. */
function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.on('error', () => resolvePort(undefined));
    server.listen(port, '127.0.0.1', () => {
      const { port: listened } = server.address() as { port: number };
      server.close(() => resolvePort(listened));
    });
  });
}
