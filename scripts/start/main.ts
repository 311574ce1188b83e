/**
 * `npm start`: the whole picture on one machine. The reference backend (seeded with an organization holding a Jira
 * system, an SAP system and a ServiceNow system), the simulated Jira, SAP and ServiceNow with their activity, the
 * three example connectors as workers (the `connector dev` loop: one status line each on a terminal), and a demo
 * approver that approves one approval of each system through the service once the first ones are in. The Jira
 * connector registers its webhook in the simulated Jira, and the simulated ServiceNow's business rules call out to
 * its connector's push ingress, so that a decision taken in either shows in the service within seconds: a line says
 * how soon. Prints where to look, the console's link first; stops everything on Ctrl+C or SIGTERM and exits 0.
 *
 *     node --import tsx scripts/start/main.ts [--port 8080] [--jira-port 8081] [--sap-port 8000]
 *                                             [--servicenow-port 8082] [--activity-ms 15000] [--no-demo]
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { readCommandLine, startFailure } from '../../src/cli/command-line.js';
import { DEV_VARIABLES, DEV_VARIABLES_USAGE } from '../../src/cli/commands/dev.js';
import { type DevOptions, type DevSession, startDev } from '../../src/cli/dev/index.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { PortInUseError } from '../../src/errors.js';
import { CommandLine, usageColumns } from '../../src/internal/command-line.js';
import { portText } from '../../src/internal/options.js';
import { onShutdownSignal } from '../../src/internal/signals.js';
import { ensureConsolePage } from './console-page.js';
import { demoApprove } from './demo-approver.js';
import { reportPushed } from './pushed.js';
import { type SimulatedSource, startSeed, startSources } from './sources.js';

const USAGE = `Usage: npm start [-- options]

Runs the reference backend, the simulated Jira, SAP and ServiceNow systems with their activity, and the three
example connectors against them; a demo approver approves one approval of each system through the service. A
decision taken in the simulated Jira or ServiceNow itself shows in the console within seconds, pushed by Jira's
webhook or ServiceNow's business rules: a line says how soon.

Options:
  --port N          the backend's port on 127.0.0.1 (default 8080; 0 picks a free one)
  --jira-port N     the simulated Jira's port (default 8081)
  --sap-port N      the simulated SAP system's port (default 8000)
  --servicenow-port N
                    the simulated ServiceNow instance's port (default 8082)
  --activity-ms N   milliseconds between two steps of each simulator's activity (default 15000; 0: none)
  --no-demo         no demo approver: approve in the console yourself
  -h, --help        show this help

Environment variables (as for connector dev, docs/dev.md):
${usageColumns(DEV_VARIABLES_USAGE)}

On a terminal, the log lines go to .connector/start.log (replaced at each start), which the banner names, so that
the banner stays on the screen above the status lines; elsewhere they are written to stdout.

Exit codes: 0 after Ctrl+C or SIGTERM; 1 when a server could not start (a port in use); 2 for bad options.`;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the log lines go on a terminal: replaced at each start. */
const START_LOG_FILE = join(ROOT, '.connector', 'start.log');

/** A path as the banner shows it: relative to the current folder when it is under it. */
function shown(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere.startsWith('..') || isAbsolute(fromHere) ? path : fromHere;
}
const MILLISECONDS = 'a whole number of milliseconds';

const commandLine = new CommandLine({
  subject: 'options of npm start',
  usage: USAGE,
  flags: {
    port: { type: 'string', schema: portText().default(8080) },
    'jira-port': { type: 'string', schema: portText().default(8081) },
    'sap-port': { type: 'string', schema: portText().default(8000) },
    'servicenow-port': { type: 'string', schema: portText().default(8082) },
    'activity-ms': {
      type: 'string',
      schema: z
        .string({ error: MILLISECONDS })
        .regex(/^\d+$/, { error: MILLISECONDS })
        .transform(Number)
        .default(15_000),
    },
    'no-demo': { type: 'boolean', schema: z.boolean().default(false) },
  },
  variables: DEV_VARIABLES,
  secret: ['APPROVAL_ADMIN_TOKEN'],
});

async function main(argv: readonly string[]): Promise<number> {
  const options = readCommandLine(commandLine, argv);
  if (typeof options === 'number') return options;

  // The only part of the kit's build the start uses; everything else runs from the sources.
  await ensureConsolePage((line) => console.log(line));
  // Listening before anything starts, so that a signal during the start still stops everything cleanly; a second
  // one is ignored (`npm start` may hand the same Ctrl+C on twice), the stop being bounded by the workers' own.
  const signal = onShutdownSignal(process, { repeated: 'ignore' });
  let sources: SimulatedSource[];
  try {
    sources = await startSources({
      jiraPort: options['--jira-port'],
      sapPort: options['--sap-port'],
      servicenowPort: options['--servicenow-port'],
      activityMs: options['--activity-ms'],
    });
  } catch (error) {
    if (!(error instanceof PortInUseError)) throw error;
    console.error(error.message);
    return EXIT_CODES.failed;
  }
  // This run's folder: the connectors' key pairs, for this run only (the backend keeps nothing either), removed
  // whole at the stop. On a terminal, the log lines go to a file of the repository's (ignored by git), replaced by
  // the next start, so that they can be read after the stop and nothing piles up.
  const keys = mkdtempSync(join(tmpdir(), 'approval-connector-kit-start-'));
  const logFile = process.stdout.isTTY === true ? shown(START_LOG_FILE) : undefined;
  const closeSources = async () => {
    await Promise.all(sources.map((source) => source.close()));
    rmSync(keys, { recursive: true, force: true });
  };
  let session: DevSession;
  try {
    session = await startDev(devOptions(options, sources, { keys, logFile }));
  } catch (error) {
    await closeSources();
    return startFailure(error, { port: options['--port'], host: '127.0.0.1', setting: '--port' });
  }
  // A source told where to deliver, rather than registered with by its connector: its worker's push ingress.
  for (const [index, connector] of session.connectors.entries())
    sources[index]!.deliverTo?.(connector.pushUrl);

  const demo = new AbortController();
  const approving = options['--no-demo'] ? [] : approveDemos(session, sources, demo.signal);
  const reports = session.connectors.map((connector, index) =>
    reportPushed({
      backend: session.backend,
      systemId: connector.tenant.system.id,
      source: sources[index]!,
      print: (line) => session.print(line),
    }),
  );
  await signal;
  for (const stop of reports) stop();
  demo.abort();
  await Promise.all(approving);
  await session.close();
  await closeSources();
  return EXIT_CODES.done;
}

type StartOptions = Exclude<ReturnType<typeof commandLine.parse>, 'help'>;

/** The loop's options: the example connectors, run from their TypeScript against the start's seed. */
function devOptions(
  options: StartOptions,
  sources: readonly SimulatedSource[],
  { keys, logFile }: { keys: string; logFile: string | undefined },
): DevOptions {
  return {
    connectors: sources.map((source) => ({
      name: source.name,
      project: join(ROOT, source.project),
      // The example's TypeScript, run by tsx (the worker runs the kit from its sources here), and its
      // `approval-connector-kit` imports resolved by the repository's tsconfig to those same sources.
      module: 'src/connector.ts',
      connectorToken: source.connectorToken,
      env: { ...source.env, CONNECTOR_KEYS_FILE: join(keys, `${source.name}.json`) },
    })),
    seed: startSeed(),
    port: options['--port'],
    logLevel: options.LOG_LEVEL,
    ...(options.LOG_FORMAT === undefined ? {} : { logFormat: options.LOG_FORMAT }),
    ...(options.APPROVAL_ADMIN_TOKEN === undefined ? {} : { adminToken: options.APPROVAL_ADMIN_TOKEN }),
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json') },
    ...(logFile === undefined ? {} : { logFile }),
    notes: [
      ...sources.flatMap((source) => [...source.banner(), '']),
      options['--no-demo']
        ? 'Open the console, pick an approval and approve it as its approver (their sign-in is above).'
        : 'A demo approver approves one approval of each system once it is in (--no-demo: none); then approve others in the console.',
    ],
  };
}

/** A demo approver for each system, until `signal`; one that fails says so and leaves the others be. */
function approveDemos(
  session: DevSession,
  sources: readonly SimulatedSource[],
  signal: AbortSignal,
): Promise<void>[] {
  return session.connectors.map((connector, index) =>
    demoApprove({
      backend: session.backend,
      systemId: connector.tenant.system.id,
      source: sources[index]!,
      print: (line) => session.print(line),
      signal,
    }).catch((error: unknown) => {
      session.print(`${sources[index]!.label}: the demo approver failed: ${String(error)}`);
    }),
  );
}

process.exitCode = await main(process.argv.slice(2));
