import { z } from 'zod';
import {
  AuthenticationError,
  type ChangeWindow,
  Connector,
  type ConnectorSource,
  incremental,
  type SourceApproval,
  type TaskContext,
  task,
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

const approval = z.object({ id: z.string() });

/** The task types of a {@link MemoryConnector}: `reject` requires comments. */
export const taskInputs = {
  approve: z.object({ approval, approveComments: z.string().optional() }),
  reject: z.object({ approval, approveComments: z.string().min(1) }),
};

/** An incremental connector over a {@link MemorySource}, recording the actions it ran. */
export class MemoryConnector extends Connector {
  readonly actions: { type: string; approvalId: string; key: string }[] = [];
  /** Lets a test hold a handler until it says so. */
  gate: Promise<void> | undefined;
  readonly #atGate = Promise.withResolvers<void>();
  /**
   * Resolves once a handler waits at the gate. The service marks a task leased before its answer reaches the
   * worker: a test that means a running handler waits for this, not for the task to read leased.
   */
  get atGate(): Promise<void> {
    return this.#atGate.promise;
  }
  /** Makes the next handler throw this. */
  failWith: unknown;
  readonly tasks = {
    approve: task({
      input: taskInputs.approve,
      run: async ({ approval }, context) => this.#act('approve', approval.id, context),
    }),
    reject: task({
      input: taskInputs.reject,
      run: async ({ approval }, context) => this.#act('reject', approval.id, context),
    }),
  };
  readonly source: ConnectorSource;

  /** `ordered`: whether the connector declares that `changes()` yields in `(lastModified, id)` order. */
  constructor(
    readonly system: MemorySource,
    { ordered = false }: { ordered?: boolean } = {},
  ) {
    super();
    this.source = incremental({ ordered, changes: (window) => this.system.changes(window) });
  }

  async #act(type: string, approvalId: string, context: TaskContext): Promise<void> {
    if (this.gate !== undefined) this.#atGate.resolve();
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
