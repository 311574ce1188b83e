import pino from 'pino';
import { z } from 'zod';
import {
  type ReferenceBackend,
  readSeedFile,
  type Seed,
  startReferenceBackend,
} from '../../backend/index.js';
import { backendOptionsSchema } from '../../backend/internal.js';
import { CommandLine, usageColumns } from '../../internal/command-line.js';
import { host, logLevel, nonEmptyString, portText } from '../../internal/options.js';
import { prettyLogOptions } from '../../internal/pretty-logs.js';
import { onShutdownSignal } from '../../internal/signals.js';
import { readCommandLine, startFailure } from '../command-line.js';
import { backendBanner } from '../dev/index.js';
import { EXIT_CODES } from '../exit-codes.js';

/** The environment variables of the commands that run a reference backend: this one, `dev` and `npm start`. */
export const BACKEND_VARIABLES = {
  APPROVAL_ADMIN_TOKEN: backendOptionsSchema.shape.adminToken.unwrap().optional(),
  LOG_LEVEL: logLevel().default('info'),
  LOG_FORMAT: z.enum(['pretty', 'json']).optional(),
};

/** Their lines of `--help`. */
export const BACKEND_VARIABLES_USAGE: ReadonlyArray<[string, string]> = [
  ['APPROVAL_ADMIN_TOKEN', "the admin API's token, never printed (default: a random one, printed at start)"],
  ['LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent (default info)'],
  ['LOG_FORMAT', 'pretty or json (default: pretty on a terminal, json otherwise)'],
];

const USAGE = `Usage: connector backend [--port N] [--host HOST] [--data FILE] [--seed FILE]

Runs the reference backend: the Approval Service's Management API (v1) and Integration API (v2), an admin API
under /admin, a console page at /console, and the OpenAPI document at /openapi.json. The start banner prints a
link that signs a browser in to the console once.

Options:
  --port N       TCP port (default 8080; 0 picks a free one)
  --host HOST    interface to listen on (default 127.0.0.1)
  --data FILE    keep the data in this SQLite file (default: in memory)
  --seed FILE    load this seed JSON file when the store is empty
  -h, --help     show this help

Environment:
${usageColumns(BACKEND_VARIABLES_USAGE)}

Exit codes: 0 after Ctrl+C or SIGTERM; 1 when the server could not start (a port in use); 2 for bad options, or a
seed or data file it cannot use.`;

const commandLine = new CommandLine({
  subject: 'options of connector backend',
  usage: USAGE,
  flags: {
    port: { type: 'string', schema: portText().default(8080) },
    host: { type: 'string', schema: host().default('127.0.0.1') },
    data: { type: 'string', schema: nonEmptyString().optional() },
    seed: { type: 'string', schema: nonEmptyString().optional() },
  },
  variables: BACKEND_VARIABLES,
  secret: ['APPROVAL_ADMIN_TOKEN'],
});

/** `connector backend`: runs until SIGINT or SIGTERM, then closes and resolves with the exit code. */
export async function runBackendCommand(argv: readonly string[]): Promise<number> {
  const options = readCommandLine(commandLine, argv);
  if (typeof options === 'number') return options;

  // An admin token the operator chose is theirs to know: only a generated one is printed.
  const chosenAdminToken = options.APPROVAL_ADMIN_TOKEN;
  const logger = pino(
    {
      level: options.LOG_LEVEL,
      redact: ['req.headers.authorization', 'headers.authorization', 'token'],
    },
    await logDestination(options.LOG_FORMAT ?? (process.stdout.isTTY === true ? 'pretty' : 'json')),
  );
  // Listening before the server starts, so a signal that comes during start-up still stops it cleanly.
  const signal = onShutdownSignal();
  let seed: Seed | undefined;
  let backend: ReferenceBackend;
  try {
    seed = options['--seed'] === undefined ? undefined : readSeedFile(options['--seed']);
    backend = await startReferenceBackend({
      port: options['--port'],
      host: options['--host'],
      ...(options['--data'] === undefined ? {} : { dataFile: options['--data'] }),
      ...(seed === undefined ? {} : { seed }),
      ...(chosenAdminToken === undefined ? {} : { adminToken: chosenAdminToken }),
      logger,
    });
  } catch (error) {
    return startFailure(error, { port: options['--port'], host: options['--host'], setting: '--port' });
  }

  console.log(banner(backend, seed, options['--data'], chosenAdminToken === undefined));
  logger.info({ signal: await signal }, 'shutting down');
  await backend.close();
  logger.info('stopped');
  return EXIT_CODES.done;
}

/**
 * Where the log lines go: stdout, as JSON lines, or readably (pino-pretty, coloured on a terminal) as `connector run`
 * and `connector dev` print them on a terminal.
 */
async function logDestination(format: 'pretty' | 'json'): Promise<pino.DestinationStream> {
  if (format === 'json') return pino.destination({ dest: 1, sync: true });
  // Loaded only here, as a worker loads it.
  const { default: pinoPretty } = await import('pino-pretty');
  return pinoPretty({ ...prettyLogOptions(process.stdout.isTTY === true), sync: true });
}

function banner(
  backend: ReferenceBackend,
  seed: Seed | undefined,
  dataFile: string | undefined,
  adminTokenGenerated: boolean,
): string {
  const lines = [
    '',
    ...backendBanner(backend, { dataFile, adminTokenGenerated }),
    '',
    'Authenticate with Authorization: Bearer <token>. Management tokens open /v1 for their organization;',
    'connector tokens open /v2 for their system.',
  ];
  for (const org of seed?.organizations ?? []) {
    lines.push('', `Organization ${org.name}${org.id === undefined ? '' : ` (${org.id})`}`);
    for (const token of org.managementTokens) lines.push(`  management token: ${token}`);
    for (const system of org.systems) {
      lines.push(`  system ${system.name}${system.id === undefined ? '' : ` (${system.id})`}`);
      for (const token of system.connectorTokens) lines.push(`    connector token: ${token}`);
    }
  }
  const example = seed?.organizations.flatMap((org) => org.managementTokens)[0] ?? '<management token>';
  lines.push(
    '',
    'Try:',
    `  curl -H 'Authorization: Bearer ${example}' ${backend.url}/v1/systems`,
    '',
    'Stop with Ctrl+C.',
  );
  return lines.join('\n');
}
