/**
 * A connector worker in a process of its own, run the way the README runs one:
 * `process.exitCode = await runConnector(connector, options)`. It logs JSON lines to stdout. Set by environment:
 * - `APPROVAL_URL`, `CONNECTOR_TOKEN`: the service;
 * - `WORKER`: `sync-only` (no task polling, no operations port) or `stuck-handler` (every handler ignores its
 *   signal, never settles, and holds the process with a timer of its own);
 * - `GRACE_MS`, `FORCE_MS`: the shutdown's times.
 */
import { z } from 'zod';
import { Connector, incremental, task } from '../../../src/connector/index.js';
import { runConnector } from '../../../src/worker/index.js';
import { MemorySource } from './memory-source.js';

class Stuck extends Connector {
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }) }),
      run: () => {
        // An action stuck in a source that ignores the abort: the timer keeps the process alive for good.
        setInterval(() => {}, 1_000);
        return new Promise(() => {});
      },
    }),
  };
  readonly source = incremental({ changes: (window) => this.system.changes(window) });

  constructor(readonly system: MemorySource) {
    super();
  }
}

const system = new MemorySource();
system.put('PO-1', '2026-05-01T10:00:00.000Z');
system.put('PO-2', '2026-05-01T10:00:01.000Z');

const worker = process.env.WORKER;
process.exitCode = await runConnector(new Stuck(system), {
  service: { baseUrl: process.env.APPROVAL_URL ?? '', token: process.env.CONNECTOR_TOKEN ?? '' },
  logger: { level: 'info' },
  sync: { runOnStart: true, reconcileSchedule: false },
  poller: worker === 'sync-only' ? { enabled: false } : { idleMinMs: 5, idleMaxMs: 20 },
  shutdown: {
    graceMs: Number(process.env.GRACE_MS ?? 1_000),
    forceMs: Number(process.env.FORCE_MS ?? 1_000),
  },
});
