import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CommandLine, usageColumns } from '../../internal/command-line.js';
import { nonEmptyString, portText } from '../../internal/options.js';
import { onShutdownSignal } from '../../internal/signals.js';
import { readCommandLine, startFailure } from '../command-line.js';
import { startDev } from '../dev/index.js';
import { EXIT_CODES } from '../exit-codes.js';
import { BACKEND_VARIABLES, BACKEND_VARIABLES_USAGE } from './backend.js';
import { DEFAULT_MODULE } from './default-module.js';

/** The environment variables of the commands that run the local loop, this one and `npm start`: the backend's. */
export const DEV_VARIABLES = BACKEND_VARIABLES;

/** Their lines of `--help`. */
export const DEV_VARIABLES_USAGE = BACKEND_VARIABLES_USAGE;

/** Where `connector dev` writes its log lines on a terminal, in the project's folder: replaced at each start. */
export const DEV_LOG_FILE = join('.connector', 'dev.log');

const USAGE = `Usage: connector dev [module] [--port N] [--data FILE] [--seed FILE]

The local loop, in a connector project's folder: runs a reference backend (seeded with a development organization,
a system for the connector, its tokens and two approvers), builds the project (npm run build) and runs its
connector as a worker against the backend (connector run ${DEFAULT_MODULE}); builds and restarts it whenever
src/ changes. Prints the URLs and tokens to use, and a link that signs a browser in to the console once. On a
terminal, the log lines go to ${DEV_LOG_FILE} (replaced at each start), and a status line is kept below the
banner; elsewhere, the log lines are written to stdout.

Options:
  [module]       the built connector module (default ${DEFAULT_MODULE})
  --port N       the backend's port on 127.0.0.1 (default 8080; 0 picks a free one)
  --data FILE    keep the backend's data in this SQLite file, across restarts (default: in memory)
  --seed FILE    load this seed file instead of the development seed, when the store is empty; the connector
                 takes its first system with a connector token
  -h, --help     show this help

Environment:
${usageColumns(DEV_VARIABLES_USAGE)}
The worker gets this environment and the variables of the project's .env that it does not set, with the
service's URL, the connector token and an operations port of the loop's.

Exit codes: 0 after Ctrl+C or SIGTERM; 1 when the backend could not start (a port in use); 2 for bad options, a
seed it cannot use, or a folder that is no connector project (no package.json with a name).`;

const commandLine = new CommandLine({
  subject: 'options of connector dev',
  usage: USAGE,
  arguments: { module: nonEmptyString().default(DEFAULT_MODULE) },
  extraArgument: 'give one module',
  flags: {
    port: { type: 'string', schema: portText().default(8080) },
    data: { type: 'string', schema: nonEmptyString().optional() },
    seed: { type: 'string', schema: nonEmptyString().optional() },
  },
  variables: DEV_VARIABLES,
  secret: ['APPROVAL_ADMIN_TOKEN'],
});

/** `connector dev [module]`: the local loop, until SIGINT or SIGTERM. Resolves with the exit code. */
export async function runDevCommand(argv: readonly string[]): Promise<number> {
  const options = readCommandLine(commandLine, argv, {
    check: (options) => ({ ...options, name: projectName(process.cwd()) }),
  });
  if (typeof options === 'number') return options;

  // Listening before anything starts, so that a signal during the start still stops everything cleanly. A second
  // one is ignored: under `npm run dev` a Ctrl+C may come twice (the terminal's and npm's), and the stop is bounded
  // by the workers' own deadline.
  const signal = onShutdownSignal(process, { repeated: 'ignore' });
  let session: Awaited<ReturnType<typeof startDev>>;
  try {
    session = await startDev({
      connectors: [{ name: options.name, project: process.cwd(), module: options.module }],
      port: options['--port'],
      ...(options['--data'] === undefined ? {} : { dataFile: options['--data'] }),
      ...(options['--seed'] === undefined ? {} : { seed: options['--seed'] }),
      ...(options.APPROVAL_ADMIN_TOKEN === undefined ? {} : { adminToken: options.APPROVAL_ADMIN_TOKEN }),
      logLevel: options.LOG_LEVEL,
      ...(options.LOG_FORMAT === undefined ? {} : { logFormat: options.LOG_FORMAT }),
      // On a terminal, the log lines go to a file, so that the banner stays on the screen above the status line.
      ...(process.stdout.isTTY === true ? { logFile: DEV_LOG_FILE } : {}),
    });
  } catch (error) {
    return startFailure(error, { port: options['--port'], host: '127.0.0.1', setting: '--port' });
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
    throw commandLine.refuse(`${path} ${why}: run connector dev in a connector project's folder`);
  }
  if (typeof manifest.name !== 'string' || manifest.name === '') {
    throw commandLine.refuse(`${path} has no name: the connector is named after its project`);
  }
  return manifest.name;
}
