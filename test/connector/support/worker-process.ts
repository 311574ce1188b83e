/**
 * A connector worker in a process of its own, run the way the README runs one:
 * `process.exitCode = await runConnector(connector)`. It logs JSON lines to stdout. Set by environment:
 * - `APPROVAL_URL`, `CONNECTOR_TOKEN`: the service;
 * - `WORKER`: `sync-only` (no task polling, no operations port).
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
  readonly handlers: TaskHandlers<typeof tasks> = { approve: async () => {} };

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
    tasks: worker === 'sync-only' ? { enabled: false } : { idleMinMs: 5, idleMaxMs: 20 },
  },
  source,
);
process.exitCode = await runConnector(connector);
