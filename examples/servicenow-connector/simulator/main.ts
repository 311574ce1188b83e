/**
 * Runs the simulated ServiceNow instance on its own, printing its URL and the users to sign in with, until SIGINT
 * or SIGTERM:
 *
 * ```sh
 * node --import tsx examples/servicenow-connector/simulator/main.ts [--port 8082] [--seed 1] [--activity-ms 15000]
 *   [--push-url http://127.0.0.1:9465/push --push-secret …]
 * ```
 *
 * `--activity-ms` is the milliseconds between two steps of activity (0: none); `--port 0` takes any free port. With
 * `--push-url` (or `PUSH_PUBLIC_URL`, the worker's push address), the push path's business rules post each change
 * there, signed with `--push-secret` (or `PUSH_SECRET`, the worker's push secret): an administrator points the
 * rules' REST message at the worker, and gives the instance the worker's secret. An empty variable counts as unset.
 * @module
 */
import { parseArgs } from 'node:util';
import { ServiceNowSimulator } from './simulator.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8082' },
    seed: { type: 'string', default: '1' },
    'activity-ms': { type: 'string', default: '15000' },
    'push-url': { type: 'string' },
    'push-secret': { type: 'string' },
  },
});

function wholeNumber(name: string, text: string): number {
  if (!/^\d+$/.test(text)) {
    process.stderr.write(`--${name} takes a whole number, got "${text}"\n`);
    process.exit(2);
  }
  return Number(text);
}

const activity = wholeNumber('activity-ms', values['activity-ms']);
const port = wholeNumber('port', values.port);
const pushUrl = values['push-url'] || process.env.PUSH_PUBLIC_URL || undefined;
const pushSecret = values['push-secret'] || process.env.PUSH_SECRET || undefined;
if (pushUrl !== undefined && pushSecret === undefined) {
  process.stderr.write(
    'The push URL needs the secret the business rules sign with: --push-secret or PUSH_SECRET\n',
  );
  process.exit(2);
}
const simulator = await ServiceNowSimulator.start({
  port,
  seed: wholeNumber('seed', values.seed),
  // 0 keeps the instance still.
  ...(activity === 0 ? {} : { activityIntervalMs: activity }),
  ...(pushUrl === undefined ? {} : { push: { url: pushUrl, secret: pushSecret! } }),
}).catch((error: unknown) => {
  if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
  process.stderr.write(
    `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
  );
  process.exit(1);
});

const { username, password } = simulator.integrationUser;
const lines = [
  `Simulated ServiceNow instance listening on ${simulator.url}`,
  `integration user (sync): ${username} / ${password}`,
  ...simulator.approvers.map(
    (approver) =>
      `approver: ${approver.username} / ${approver.password} (${approver.name}, ${approver.email})`,
  ),
  `${simulator.waitingApprovals().length} approvals waiting; ${activity === 0 ? 'no activity' : `one step of activity every ${activity} ms`}${pushUrl === undefined ? '' : `; business rules posting to ${pushUrl}`}. Stop with Ctrl+C.`,
];
process.stdout.write(`${lines.join('\n')}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void simulator.close().then(() => {
      process.stdout.write('stopped\n');
    });
  });
}
