/**
 * A connector worker in a process of its own, run the way the README runs one:
 * `process.exitCode = await runConnector(connector)`. It logs JSON lines to stdout. Set by environment:
 * - `APPROVAL_URL`, `CONNECTOR_TOKEN`: the service;
 * - `WORKER`: `sync-only` (no task polling, no operations port) or `stuck-handler` (every handler ignores its
 *   signal, never settles, and holds the process with a timer of its own);
 * - `GRACE_MS`, `FORCE_MS`: the shutdown's times.
 */
import { z } from 'zod';
import {
  type ChangeWindow,
  Connector,
  type ConnectorOptions,
  runConnector,
  type SourceApproval,
  type TaskHandlers,
} from '../../../src/connector/index.js';
import { MemorySource } from './memory-source.js';

const tasks = { approve: z.object({ approval: z.object({ id: z.string() }) }) };

class Worker extends Connector<typeof tasks> {
  readonly tasks = tasks;
  readonly handlers: TaskHandlers<typeof tasks> = {
    approve: () => {
      // An action stuck in a source that ignores the abort: the timer keeps the process alive for good.
      setInterval(() => {}, 1_000);
      return new Promise(() => {});
    },
  };

  constructor(
    options: ConnectorOptions,
    readonly source: MemorySource,
  ) {
    super(options);
  }

  override changes(window: ChangeWindow): AsyncIterable<SourceApproval> {
    return this.source.changes(window);
  }
}

const source = new MemorySource();
source.put('PO-1', '2026-05-01T10:00:00.000Z');
source.put('PO-2', '2026-05-01T10:00:01.000Z');

const worker = process.env.WORKER;
const connector = new Worker(
  {
    service: { baseUrl: process.env.APPROVAL_URL ?? '', token: process.env.CONNECTOR_TOKEN ?? '' },
    logger: { level: 'info' },
    sync: { runOnStart: true, reconcileSchedule: false },
    poller: worker === 'sync-only' ? { enabled: false } : { idleMinMs: 5, idleMaxMs: 20 },
    shutdown: {
      graceMs: Number(process.env.GRACE_MS ?? 1_000),
      forceMs: Number(process.env.FORCE_MS ?? 1_000),
    },
  },
  source,
);
process.exitCode = await runConnector(connector);
