import {
  type ChangeWindow,
  Connector,
  incremental,
  type PrecheckVerdict,
  type SourceApproval,
  task,
} from 'approval-connector-kit';
import { z } from 'zod';
import type { PurchaseRequests } from './source.js';

/** Copies open purchase requests into the Approval Service and carries the approvers' decisions back. */
export class PurchaseRequestConnector extends Connector {
  // Each task type, once: the schema of the task data it needs, a pre-check and the handler, both typed by it.
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() }),
      precheck: ({ approval }) => this.#stillOpen(approval.id),
      run: ({ approval, approveComments }) =>
        this.requests.decide(approval.id, 'approved', approveComments ?? ''),
    }),
    reject: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
      precheck: ({ approval }) => this.#stillOpen(approval.id),
      run: ({ approval, approveComments }) => this.requests.decide(approval.id, 'rejected', approveComments),
    }),
  };
  // Every request changed at or after `since` (all of them on the first run); the kit keeps the cursor.
  readonly source = incremental({ changes: (window) => this.#changes(window) });
  override readonly uiTemplates = [
    { type: 'card', schemaId: 'purchase-request', template: { title: '{{data.title}}', fields: ['amount'] } },
  ];

  constructor(private readonly requests: PurchaseRequests) {
    super();
  }

  async *#changes({ since }: ChangeWindow): AsyncIterable<SourceApproval> {
    for await (const request of this.requests.changedSince(since)) {
      yield {
        id: request.id,
        schemaId: 'purchase-request',
        approver: request.approver,
        resolved: request.status !== 'open',
        lastModified: request.updatedAt,
        data: { title: `Purchase of ${request.amount} EUR`, amount: request.amount },
      };
    }
  }

  // Decided in the source since the task was created (by hand, or by another worker): reported, not run again.
  async #stillOpen(id: string): Promise<PrecheckVerdict> {
    const status = await this.requests.status(id);
    const meta = { code: 'already_decided', message: `${id} is ${status ?? 'gone'}` };
    return status === 'open' || { status: 'systemError', meta };
  }
}
