import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { z } from 'zod';
import {
  type ChangeWindow,
  Connector,
  incremental,
  push,
  type SourceApproval,
  task,
  verifyHmacSignature,
} from '../../src/index.js';

/** A request of the push benchmark's source, as it holds it. */
interface BenchRequest {
  id: string;
  title: string;
  /** Milliseconds since the epoch: each change's is later than every one before it, in the whole source. */
  lastModified: number;
}

/** How often a connector read the source. */
export interface SourceReads {
  /** Calls of `changes()`: the sync runs. */
  changes: number;
  /** Calls of `lookup()`: the lookups after events. */
  lookups: number;
  /** Ids asked for, over every lookup. */
  lookedUp: number;
}

/** Where the source delivers its events. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

const approvalOf = (request: BenchRequest): SourceApproval => ({
  id: request.id,
  schemaId: 'request',
  approver: 'approver-1',
  resolved: false,
  lastModified: new Date(request.lastModified).toISOString(),
  data: { title: request.title },
});

/**
 * The push benchmark's source: requests in memory, each change stamped later than every one before it, and a
 * webhook that posts an event for each change, signed, as a source that pushes does. Every connector over it counts
 * its reads.
 */
export class PushBenchSource {
  readonly #requests = new Map<string, BenchRequest>();
  #latest = 0;
  #target: WebhookTarget | undefined;
  #inFlight = new Set<Promise<void>>();
  /** Deliveries the webhook could not make, or that were not answered 2xx. */
  failedDeliveries = 0;

  constructor(count: number) {
    for (let index = 0; index < count; index += 1) this.#save(`REQ-${String(index).padStart(5, '0')}`, 'New');
  }

  /** The ids of its requests, in order. */
  get ids(): string[] {
    return [...this.#requests.keys()];
  }

  /** From now on, each change is delivered to `target`. */
  deliverTo(target: WebhookTarget): void {
    this.#target = target;
  }

  /** Changes a request's title; answers the change's `lastModified`. Its event goes out at once, not awaited. */
  change(id: string, title: string): number {
    const request = this.#save(id, title);
    const target = this.#target;
    if (target !== undefined) {
      const sent = this.#deliver(target, request).finally(() => this.#inFlight.delete(sent));
      this.#inFlight.add(sent);
    }
    return request.lastModified;
  }

  /** Resolves once every delivery so far has been answered. */
  async sent(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  async *changedSince(since: Date | undefined, reads: SourceReads): AsyncIterable<SourceApproval> {
    reads.changes += 1;
    const from = since?.getTime() ?? Number.NEGATIVE_INFINITY;
    const changed = [...this.#requests.values()].filter((request) => request.lastModified >= from);
    changed.sort((a, b) => a.lastModified - b.lastModified);
    for (const request of changed) yield approvalOf(request);
  }

  async *lookup(ids: readonly string[], reads: SourceReads): AsyncIterable<SourceApproval> {
    reads.lookups += 1;
    reads.lookedUp += ids.length;
    for (const id of ids) {
      const request = this.#requests.get(id);
      if (request !== undefined) yield approvalOf(request);
    }
  }

  #save(id: string, title: string): BenchRequest {
    this.#latest = Math.max(Date.now(), this.#latest + 1);
    const request = { id, title, lastModified: this.#latest };
    this.#requests.set(id, request);
    return request;
  }

  async #deliver(target: WebhookTarget, changed: BenchRequest): Promise<void> {
    const body = JSON.stringify({ event: 'updated', id: changed.id, title: changed.title });
    const signature = createHmac('sha256', target.secret).update(body).digest('hex');
    try {
      const { statusCode, body: answer } = await request(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-bench-delivery': randomUUID(),
          'x-bench-signature': `sha256=${signature}`,
        },
        body,
      });
      await answer.dump();
      if (statusCode < 200 || statusCode > 299) this.failedDeliveries += 1;
    } catch {
      this.failedDeliveries += 1;
    }
  }
}

/**
 * An incremental connector over the benchmark's source, with `lookup()`, and with a push path when `push` says:
 * deliveries verified by their HMAC, each naming its request. `reads` counts what it reads.
 */
export class PushBenchConnector extends Connector {
  readonly tasks = {
    approve: task({ input: z.object({ approval: z.object({ id: z.string() }) }), run: async () => {} }),
  };
  readonly source;
  readonly reads: SourceReads = { changes: 0, lookups: 0, lookedUp: 0 };

  constructor(bench: PushBenchSource, options: { push: boolean }) {
    super();
    const lookup = (ids: readonly string[]) => bench.lookup(ids, this.reads);
    const changes = ({ since }: ChangeWindow) => bench.changedSince(since, this.reads);
    this.source = options.push
      ? incremental({
          changes,
          lookup,
          push: push({
            verify: ({ body, headers }, { secret }) =>
              secret !== undefined &&
              verifyHmacSignature({
                secret,
                body,
                signature: headers['x-bench-signature'],
                prefix: 'sha256=',
              }),
            approvalIds: ({ body }) => [String(JSON.parse(body.toString('utf8')).id)],
            deliveryId: ({ headers }) => headers['x-bench-delivery'],
          }),
        })
      : incremental({ changes, lookup });
  }
}
