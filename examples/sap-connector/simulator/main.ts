/**
 * Runs the simulated SAP system on its own, printing its URL and the users to log on with, until SIGINT or
 * SIGTERM:
 *
 * ```sh
 * node --import tsx examples/sap-connector/simulator/main.ts [--port 8000] [--seed 1] [--interval 10000]
 * ```
 *
 * `--interval` is the milliseconds between two steps of activity (0: none); `--port 0` takes any free port.
 * @module
 */
import { parseArgs } from 'node:util';
import { SapInboxSimulator } from './simulator.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
    interval: { type: 'string', default: '10000' },
  },
});

function integer(name: string, text: string): number {
  if (!/^\d+$/.test(text)) {
    process.stderr.write(`--${name} takes a whole number, got "${text}"\n`);
    process.exit(2);
  }
  return Number(text);
}

const interval = integer('interval', values.interval);
const port = integer('port', values.port);
const simulator = await SapInboxSimulator.start({
  port,
  seed: integer('seed', values.seed),
  // 0 keeps the inbox still.
  activityIntervalMs: interval === 0 ? undefined : interval,
}).catch((error: unknown) => {
  if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
  process.stderr.write(
    `Port ${port} on 127.0.0.1 is already in use: free it, or choose another port with --port (0 picks a free one)\n`,
  );
  process.exit(1);
});

const lines = [
  `SAP My Inbox simulator listening on ${simulator.serviceUrl}`,
  `technical user (sync): ${simulator.technicalUser.username} / ${simulator.technicalUser.password}`,
  ...simulator.approvers.map(
    (approver) =>
      `approver: ${approver.username} / ${approver.password} (${approver.displayName}, ${approver.email})`,
  ),
  `${simulator.openTasks().length} open tasks; ${interval === 0 ? 'no activity' : `one step of activity every ${interval} ms`}. Stop with Ctrl+C.`,
];
process.stdout.write(`${lines.join('\n')}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void simulator.close().then(() => {
      process.stdout.write('stopped\n');
    });
  });
}
