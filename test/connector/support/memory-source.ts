import { z } from 'zod';
import {
  AuthenticationError,
  type ChangeWindow,
  Connector,
  type ConnectorOptions,
  type SourceApproval,
  type TaskContext,
  type TaskHandlers,
} from '../../../src/connector/index.js';

/** A source system in memory: approvals by id, each with a lastModified. */
export class MemorySource {
  readonly records = new Map<string, SourceApproval & { lastModified: string }>();
  /** Yield changes in this order instead of by (lastModified, id). */
  shuffle = false;
  /** How many records `changes()` yielded in all. */
  yielded = 0;
  /** Throw after yielding this many records in one `changes()` call (a source failing mid-read). */
  failAfter: number | undefined;

  put(id: string, lastModified: string, patch: Partial<SourceApproval> = {}): void {
    this.records.set(id, {
      id,
      schemaId: 'po',
      approver: 'ada',
      resolved: false,
      data: { title: `Request ${id}` },
      ...patch,
      lastModified,
    });
  }

  async *changes(window: ChangeWindow): AsyncIterable<SourceApproval> {
    const since = window.since?.getTime() ?? Number.NEGATIVE_INFINITY;
    const found = [...this.records.values()]
      .filter((record) => Date.parse(record.lastModified) >= since)
      .sort((a, b) => Date.parse(a.lastModified) - Date.parse(b.lastModified) || (a.id < b.id ? -1 : 1));
    if (this.shuffle) found.reverse();
    let count = 0;
    for (const record of found) {
      if (this.failAfter !== undefined && count >= this.failAfter) throw new Error('source read failed');
      count += 1;
      this.yielded += 1;
      yield structuredClone(record);
    }
  }
}

export const taskSchemas = {
  approve: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() }),
  reject: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
};

/** An incremental connector over a {@link MemorySource}, recording the actions it ran. */
export class MemoryConnector extends Connector<typeof taskSchemas> {
  readonly tasks = taskSchemas;
  readonly actions: { type: string; approvalId: string; key: string }[] = [];
  /** Lets a test hold a handler until it says so. */
  gate: Promise<void> | undefined;
  /** Makes the next handler throw this. */
  failWith: unknown;
  readonly handlers: TaskHandlers<typeof taskSchemas> = {
    approve: async ({ approval }, context) => this.#act('approve', approval.id, context),
    reject: async ({ approval }, context) => this.#act('reject', approval.id, context),
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

  async #act(type: string, approvalId: string, context: TaskContext): Promise<void> {
    await this.gate;
    context.signal.throwIfAborted();
    if (this.failWith !== undefined) {
      const error = this.failWith;
      this.failWith = undefined;
      throw error;
    }
    if (approvalId === 'locked') throw new AuthenticationError('session expired');
    this.actions.push({ type, approvalId, key: context.idempotencyKey });
  }
}
