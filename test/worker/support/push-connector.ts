import { createHmac } from 'node:crypto';
import {
  Connector,
  incremental,
  type PushDeclaration,
  push,
  type SourceApproval,
  task,
  verifyHmacSignature,
  type WebhookLifecycle,
} from '../../../src/connector/index.js';
import { type MemorySource, taskInputs } from './memory-source.js';

/** The webhook secret the tests' workers are given (`push.secret`) and their deliveries are signed with. */
export const WEBHOOK_SECRET = 'the-webhook-secret-of-the-tests';

/** An event of the tests' source: the approvals it names, and what it says of them (which the kit never reads). */
export interface SourceEvent {
  ids: string[];
  resolved?: boolean;
}

/** A delivery of `event` as the tests' source sends it: JSON, signed in `x-signature`, its id in `x-delivery-id`. */
export function signed(
  event: SourceEvent | string,
  deliveryId?: string,
  secret = WEBHOOK_SECRET,
): { body: string; headers: Record<string, string> } {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return {
    body,
    headers: {
      'x-signature': signature,
      ...(deliveryId === undefined ? {} : { 'x-delivery-id': deliveryId }),
    },
  };
}

/**
 * An incremental connector over a {@link MemorySource} with `lookup()` and a push path: deliveries signed with the
 * worker's secret, naming approvals in `ids`. It records every lookup.
 */
export class PushConnector extends Connector {
  readonly lookups: string[][] = [];
  readonly tasks = {
    // A decision changes the source, as a real one's does: the request is resolved there, a minute later.
    approve: task({
      input: taskInputs.approve,
      run: async ({ approval }) => {
        const record = this.system.records.get(approval.id);
        if (record !== undefined) {
          const later = new Date(Date.parse(record.lastModified) + 60_000).toISOString();
          this.system.put(approval.id, later, { resolved: true });
        }
      },
    }),
  };
  readonly source;

  constructor(
    readonly system: MemorySource,
    webhook?: WebhookLifecycle,
    overrides: Partial<PushDeclaration> = {},
  ) {
    super();
    this.source = incremental({
      changes: (window) => this.system.changes(window),
      lookup: (ids) => this.#lookup(ids),
      push: push({
        verify: ({ body, headers }, { secret }) =>
          secret !== undefined &&
          verifyHmacSignature({ secret, body, signature: headers['x-signature'], prefix: 'sha256=' }),
        approvalIds: ({ body }) => (JSON.parse(body.toString('utf8')) as SourceEvent).ids,
        deliveryId: ({ headers }) => headers['x-delivery-id'],
        ...(webhook === undefined ? {} : { webhook }),
        ...overrides,
      }),
    });
  }

  async *#lookup(ids: readonly string[]): AsyncIterable<SourceApproval> {
    this.lookups.push([...ids]);
    for (const id of ids) {
      const record = this.system.records.get(id);
      if (record !== undefined) yield structuredClone(record);
    }
  }
}
