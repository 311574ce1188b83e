import { parseArgs } from 'node:util';
import pino from 'pino';
import { z } from 'zod';
import {
  type ReferenceBackend,
  readSeedFile,
  type Seed,
  startReferenceBackend,
} from '../../backend/index.js';
import { backendOptionsSchema } from '../../backend/internal.js';
import { PortInUseError, ValidationError } from '../../errors.js';
import { asFlags, host, logLevel, nonEmptyString, parseOptions, portText } from '../../internal/options.js';
import { onShutdownSignal } from '../../internal/signals.js';
import { backendBanner } from '../dev/index.js';
import { EXIT_CODES } from '../exit-codes.js';

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
  APPROVAL_ADMIN_TOKEN  the admin API's token, never printed (default: a random one, printed at start)
  LOG_LEVEL             pino level (default info)`;

// The flags under the names the user typed, and the two environment variables the command reads.
const commandOptionsSchema = z.strictObject({
  '--port': portText().default(8080),
  '--host': host().default('127.0.0.1'),
  '--data': nonEmptyString().optional(),
  '--seed': nonEmptyString().optional(),
  '--help': z.boolean().default(false),
  APPROVAL_ADMIN_TOKEN: backendOptionsSchema.shape.adminToken.unwrap().optional(),
  LOG_LEVEL: logLevel().default('info'),
});

/** `connector backend`: runs until SIGINT or SIGTERM, then closes and resolves with the exit code. */
export async function runBackendCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    // Unknown flags reach the options' check, which names the nearest known one.
    strict: false,
    allowPositionals: true,
  });
  let options: z.output<typeof commandOptionsSchema>;
  try {
    options = parseOptions(
      commandOptionsSchema,
      {
        ...asFlags(values),
        // An empty variable is an unset one, as a shell's `VAR=` means.
        APPROVAL_ADMIN_TOKEN: process.env.APPROVAL_ADMIN_TOKEN || undefined,
        LOG_LEVEL: process.env.LOG_LEVEL,
      },
      'options of connector backend',
      ['APPROVAL_ADMIN_TOKEN'],
    );
    if (positionals.length > 0) {
      throw new ValidationError('options of connector backend', [
        {
          path: [],
          message: `Unexpected argument \`${positionals[0]}\`: every option is a --flag`,
          code: 'unrecognized_keys',
        },
      ]);
    }
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return EXIT_CODES.refused;
  }
  if (options['--help']) {
    console.log(USAGE);
    return EXIT_CODES.done;
  }

  // An admin token the operator chose is theirs to know: only a generated one is printed.
  const chosenAdminToken = options.APPROVAL_ADMIN_TOKEN;
  const logger = pino({
    level: options.LOG_LEVEL,
    redact: ['req.headers.authorization', 'headers.authorization', 'token'],
  });
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
  } catch (caught) {
    const error = PortInUseError.from(caught, {
      port: options['--port'],
      host: options['--host'],
      setting: '--port',
    });
    console.error(error instanceof Error ? error.message : String(error));
    // A seed or data file it was given and cannot use is refused; a server that cannot start (a port in use) failed.
    return error instanceof ValidationError ? EXIT_CODES.refused : EXIT_CODES.failed;
  }

  console.log(banner(backend, seed, options['--data'], chosenAdminToken === undefined));
  logger.info({ signal: await signal }, 'shutting down');
  await backend.close();
  logger.info('stopped');
  return EXIT_CODES.done;
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
