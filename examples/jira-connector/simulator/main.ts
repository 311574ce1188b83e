/**
 * Runs the simulated Jira Service Management site on its own, with activity every few seconds, and prints its URL,
 * the accounts' credentials, the connector's settings, then a line per activity and per answer received over the API.
 * Stops on Ctrl+C (SIGINT) or SIGTERM.
 *
 *     npx tsx examples/jira-connector/simulator/main.ts [--port 8081] [--seed 1] [--activity-ms 15000]
 *
 * The tokens printed are the simulator's own, not secrets of any real site.
 * @module
 */
import { parseArgs } from 'node:util';
import { JiraSimulator } from './simulator.js';

const USAGE =
  'usage: main.ts [--host 127.0.0.1] [--port 0] [--seed 1] [--requests 8] [--activity-ms 15000] (0: no activity)\n';

function wholeNumber(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    process.stderr.write(`--${name} must be a whole number from 0, got ${JSON.stringify(text)}\n${USAGE}`);
    process.exit(2);
  }
  return value;
}

let values: Record<string, string | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      seed: { type: 'string' },
      requests: { type: 'string' },
      'activity-ms': { type: 'string' },
    },
    strict: true,
  }) as { values: Record<string, string | undefined> });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}

const seed = wholeNumber('seed', values.seed, 1);
const activityMs = wholeNumber('activity-ms', values['activity-ms'], 15_000);
const host = values.host ?? '127.0.0.1';
const port = wholeNumber('port', values.port, 0);
const simulator = await JiraSimulator.start({
  host,
  port,
  seed,
  requests: wholeNumber('requests', values.requests, 8),
  onAnswer: (event) => process.stdout.write(`${JSON.stringify(event)}\n`),
}).catch((error: unknown) => {
  if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
  process.stderr.write(
    `Port ${port} on ${host} is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
  );
  process.exit(1);
});

const lines = [
  `Simulated Jira Service Management at ${simulator.url} (seed ${seed})`,
  `JQL: ${simulator.jql}`,
  'Accounts (email, API token, time zone):',
  ...[simulator.syncAccount, ...simulator.approvers].map(
    (account, index) =>
      `  ${index === 0 ? 'sync    ' : 'approver'}  ${account.email.padEnd(24)} ${account.apiToken}  ${account.timeZone}`,
  ),
  'Webhooks: the sync account is a Jira administrator, so the connector registers its admin webhook as it;',
  `  the site's OAuth 2.0 app (dynamic webhooks) signs in with Bearer ${simulator.app.accessToken}`,
  "The connector's settings for this site (as in .env):",
  ...Object.entries(simulator.connectorEnv()).map(([name, value]) => `  ${name}=${value}`),
  activityMs > 0 ? `Activity every ${activityMs} ms. Ctrl+C stops it.` : 'No activity. Ctrl+C stops it.',
];
process.stdout.write(`${lines.join('\n')}\n`);

const activity =
  activityMs > 0
    ? setInterval(() => {
        for (const event of simulator.advance()) process.stdout.write(`${JSON.stringify(event)}\n`);
      }, activityMs)
    : undefined;

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  clearInterval(activity);
  simulator.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
