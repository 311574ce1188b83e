import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { backendOptionsSchema } from '../../backend/internal.js';
import { PortInUseError, ValidationError } from '../../errors.js';
import { asFlags, logLevel, nonEmptyString, parseOptions, portText } from '../../internal/options.js';
import { onShutdownSignal } from '../../internal/signals.js';
import { startDev } from '../dev/index.js';
import { EXIT_CODES } from '../exit-codes.js';
import { DEFAULT_MODULE } from './run.js';

const USAGE = `Usage: connector dev [module] [--port N] [--data FILE] [--seed FILE]

The local loop, in a connector project's folder: runs a reference backend (seeded with a development organization,
a system for the connector, its tokens and two approvers), builds the project (npm run build) and runs its
connector as a worker against the backend (connector run ${DEFAULT_MODULE}); builds and restarts it whenever
src/ changes. Prints the URLs and tokens to use, and a link that signs a browser in to the console once; on a
terminal, a status line below the log lines.

Options:
  [module]       the built connector module (default ${DEFAULT_MODULE})
  --port N       the backend's port on 127.0.0.1 (default 8080; 0 picks a free one)
  --data FILE    keep the backend's data in this SQLite file, across restarts (default: in memory)
  --seed FILE    load this seed file instead of the development seed, when the store is empty; the connector
                 takes its first system with a connector token
  -h, --help     show this help

Environment:
  APPROVAL_ADMIN_TOKEN  the admin API's token, never printed (default: a random one, printed at start)
  LOG_LEVEL             fatal, error, warn, info, debug, trace or silent (default info)
  LOG_FORMAT            pretty or json (default: pretty on a terminal, json otherwise)
The worker gets this environment and the variables of the project's .env that it does not set, with the
service's URL, the connector token and an operations port of the loop's.

Exit codes: 0 after Ctrl+C or SIGTERM; 1 when the backend could not start; 2 for bad options or seed.`;

const SUBJECT = 'options of connector dev';

// The flags under the names the user typed, the module, and the environment variables the command reads.
const commandOptionsSchema = z.strictObject({
  module: nonEmptyString().default(DEFAULT_MODULE),
  '--port': portText().default(8080),
  '--data': nonEmptyString().optional(),
  '--seed': nonEmptyString().optional(),
  '--help': z.boolean().default(false),
  APPROVAL_ADMIN_TOKEN: backendOptionsSchema.shape.adminToken.unwrap().optional(),
  LOG_LEVEL: logLevel().default('info'),
  LOG_FORMAT: z.enum(['pretty', 'json']).optional(),
});

/** `connector dev [module]`: the local loop, until SIGINT or SIGTERM. Resolves with the exit code. */
export async function runDevCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      port: { type: 'string' },
      data: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    // Unknown flags reach the options' check, which names the nearest known one.
    strict: false,
    allowPositionals: true,
  });
  let options: z.output<typeof commandOptionsSchema>;
  let name: string;
  try {
    options = parseOptions(
      commandOptionsSchema,
      {
        ...asFlags(values),
        module: positionals[0],
        // An empty variable is an unset one, as a shell's `VAR=` means.
        APPROVAL_ADMIN_TOKEN: process.env.APPROVAL_ADMIN_TOKEN || undefined,
        LOG_LEVEL: process.env.LOG_LEVEL || undefined,
        LOG_FORMAT: process.env.LOG_FORMAT || undefined,
      },
      SUBJECT,
      ['APPROVAL_ADMIN_TOKEN'],
    );
    if (positionals.length > 1) {
      throw refused(`Unexpected argument \`${positionals[1]}\`: give one module`);
    }
    if (options['--help']) {
      console.log(USAGE);
      return EXIT_CODES.done;
    }
    name = projectName(process.cwd());
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return EXIT_CODES.refused;
  }

  // Listening before anything starts, so that a signal during the start still stops everything cleanly. A second
  // one is ignored: under `npm run dev` a Ctrl+C may come twice (the terminal's and npm's), and the stop is bounded
  // by the workers' own deadline.
  const signal = onShutdownSignal(process, { repeated: 'ignore' });
  let session: Awaited<ReturnType<typeof startDev>>;
  try {
    session = await startDev({
      connectors: [{ name, project: process.cwd(), module: options.module }],
      port: options['--port'],
      ...(options['--data'] === undefined ? {} : { dataFile: options['--data'] }),
      ...(options['--seed'] === undefined ? {} : { seed: options['--seed'] }),
      ...(options.APPROVAL_ADMIN_TOKEN === undefined ? {} : { adminToken: options.APPROVAL_ADMIN_TOKEN }),
      logLevel: options.LOG_LEVEL,
      ...(options.LOG_FORMAT === undefined ? {} : { logFormat: options.LOG_FORMAT }),
    });
  } catch (caught) {
    const error = PortInUseError.from(caught, {
      port: options['--port'],
      host: '127.0.0.1',
      setting: '--port',
    });
    console.error(error instanceof Error ? error.message : String(error));
    return error instanceof ValidationError ? EXIT_CODES.refused : EXIT_CODES.failed;
  }
  await signal;
  await session.close();
  return EXIT_CODES.done;
}

/** The project's name, from the package.json of the folder: `connector dev` runs in a connector project. */
function projectName(folder: string): string {
  const path = resolve(folder, 'package.json');
  let manifest: { name?: unknown };
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown };
  } catch (error) {
    const why =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : 'cannot be read as JSON';
    throw refused(`${path} ${why}: run connector dev in a connector project's folder`);
  }
  if (typeof manifest.name !== 'string' || manifest.name === '') {
    throw refused(`${path} has no name: the connector is named after its project`);
  }
  return manifest.name;
}

function refused(message: string): ValidationError {
  return new ValidationError(SUBJECT, [{ code: 'custom', path: [], message }]);
}
