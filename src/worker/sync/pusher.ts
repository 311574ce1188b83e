import PQueue from 'p-queue';
import type { ApprovalWrite } from '../../api/index.js';
import type { IntegrationClient } from '../../client/index.js';
import { sendSerializedApprovals } from '../../client/internal.js';
import { inSpan, type TraceContext } from '../../internal/tracing.js';
import { type CursorKey, compareKeys } from './cursor.js';

/** Bounds of the batches the pusher sends. Every field is required here; `SyncOptions` documents the defaults. */
export interface PushLimits {
  batchSize: number;
  batchBytes: number;
  concurrency: number;
}

// The body of a batch is `{"approvals":[` + its items joined by commas + `]}`, exactly as the client would write it.
const BODY_START = '{"approvals":[';
const BODY_END = ']}';
const ENVELOPE_BYTES = BODY_START.length + BODY_END.length;

interface Batch {
  seq: number;
  /** Each write as its JSON text. */
  items: string[];
  /** The batch's body size in bytes, as it is sent. */
  bytes: number;
  /** The greatest key among the batch's writes that carry one. */
  maxKey: CursorKey | undefined;
}

/**
 * A write as JSON in the order of the keys of the request schema, which is the order the client's validation would
 * have given it: the body is byte for byte what `IntegrationClient.putApprovals` sends.
 */
export function serializeWrite(write: ApprovalWrite): string {
  const { schemaId, approver, resolved, lastModified, data, id } = write;
  return JSON.stringify({ schemaId, approver, resolved, lastModified, data, id });
}

/**
 * Pushes approval writes in batches bounded by count and bytes, several at a time, and tells which prefix of what it
 * was given the service has acknowledged. Memory stays bounded: {@link add} waits while `concurrency` batches are in
 * flight and one more is being filled.
 */
export class ApprovalPusher {
  readonly #client: IntegrationClient;
  readonly #limits: PushLimits;
  readonly #queue: PQueue;
  readonly #signal: AbortSignal | undefined;
  readonly #trace: TraceContext | undefined;
  readonly #onAcknowledged: (key: CursorKey) => void;
  #filling: Batch;
  #nextSeq = 0;
  /** Sequence numbers acknowledged out of order, waiting for the ones before them. */
  readonly #acknowledged = new Map<number, CursorKey | undefined>();
  #prefixSeq = 0;
  #prefixKey: CursorKey | undefined;
  #failure: unknown;
  #pushed = 0;

  constructor(options: {
    client: IntegrationClient;
    limits: PushLimits;
    signal?: AbortSignal;
    /** The parent of each batch's span, `push approvals`: the run's. */
    trace?: TraceContext | undefined;
    /** Called when every write up to and including `key` is acknowledged (in the order they were added). */
    onAcknowledged?: (key: CursorKey) => void;
  }) {
    this.#client = options.client;
    this.#limits = options.limits;
    this.#signal = options.signal;
    this.#trace = options.trace;
    this.#onAcknowledged = options.onAcknowledged ?? (() => {});
    this.#queue = new PQueue({ concurrency: options.limits.concurrency });
    this.#filling = this.#newBatch();
  }

  /** Approvals the service has acknowledged so far. */
  get pushed(): number {
    return this.#pushed;
  }

  /**
   * Adds a write, which must already be valid against the request schema (the client does not check it again);
   * `key` marks its place in the source's order (omitted for writes that do not move a cursor).
   */
  async add(write: ApprovalWrite, key?: CursorKey): Promise<void> {
    this.#throwIfFailed();
    const item = serializeWrite(write);
    const size = Buffer.byteLength(item);
    const batch = this.#filling;
    // Every item after the first adds a comma.
    if (
      batch.items.length > 0 &&
      (batch.items.length >= this.#limits.batchSize || batch.bytes + 1 + size > this.#limits.batchBytes)
    ) {
      await this.#send();
    }
    const current = this.#filling;
    current.bytes += (current.items.length > 0 ? 1 : 0) + size;
    current.items.push(item);
    if (key !== undefined && (current.maxKey === undefined || compareKeys(key, current.maxKey) > 0))
      current.maxKey = key;
  }

  /** Sends what is left and waits for every batch. Rejects with the first failure, after the others have settled. */
  async finish(): Promise<void> {
    if (this.#filling.items.length > 0 && this.#failure === undefined) await this.#send();
    await this.#queue.onIdle();
    this.#throwIfFailed();
  }

  /** Waits for the batches in flight to be acknowledged or fail, without sending what is still being filled. */
  async settle(): Promise<void> {
    await this.#queue.onIdle();
  }

  async #send(): Promise<void> {
    const batch = this.#filling;
    this.#filling = this.#newBatch();
    // Backpressure: a batch is queued only once a request slot is free, so at most `concurrency` batches are in
    // flight and this full one waits here: the source is read only as fast as we push.
    while (this.#queue.pending + this.#queue.size >= this.#limits.concurrency) {
      await new Promise((resolve) => this.#queue.addEventListener('next', resolve, { once: true }));
    }
    this.#throwIfFailed();
    void this.#queue
      .add(() => this.#push(batch))
      .catch((error: unknown) => {
        this.#failure ??= error;
      });
  }

  /** Sends a batch, in a span of its own under the run's: its size, and whether the service acknowledged it. */
  #push(batch: Batch): Promise<void> {
    const attributes = {
      'approval_connector.push.size': batch.items.length,
      'approval_connector.push.bytes': batch.bytes,
      'approval_connector.push.acknowledged': false,
    };
    return inSpan('push approvals', { parent: this.#trace, attributes }, async (span) => {
      const body = BODY_START + batch.items.join(',') + BODY_END;
      await sendSerializedApprovals(this.#client, body, this.#signal ? { signal: this.#signal } : {});
      span.set({ 'approval_connector.push.acknowledged': true });
      this.#pushed += batch.items.length;
      this.#acknowledge(batch);
    });
  }

  #acknowledge(batch: Batch): void {
    this.#acknowledged.set(batch.seq, batch.maxKey);
    let advanced = false;
    while (this.#acknowledged.has(this.#prefixSeq)) {
      const key = this.#acknowledged.get(this.#prefixSeq);
      this.#acknowledged.delete(this.#prefixSeq);
      this.#prefixSeq += 1;
      if (key !== undefined && (this.#prefixKey === undefined || compareKeys(key, this.#prefixKey) > 0)) {
        this.#prefixKey = key;
        advanced = true;
      }
    }
    if (advanced && this.#prefixKey !== undefined) this.#onAcknowledged(this.#prefixKey);
  }

  #newBatch(): Batch {
    return { seq: this.#nextSeq++, items: [], bytes: ENVELOPE_BYTES, maxKey: undefined };
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }
}
