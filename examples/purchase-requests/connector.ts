import {
  type ChangeWindow,
  Connector,
  type ConnectorOptions,
  type SourceApproval,
  type TaskHandlers,
} from 'approval-connector-kit';
import { z } from 'zod';
import type { PurchaseRequests } from './source.js';

// Each task type with the schema of the task data its handler needs.
const tasks = {
  approve: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() }),
  reject: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
};

/** Copies open purchase requests into the Approval Service and carries the approvers' decisions back. */
export class PurchaseRequestConnector extends Connector<typeof tasks> {
  readonly tasks = tasks;
  override readonly uiTemplates = [
    { type: 'card', schemaId: 'purchase-request', template: { title: '{{data.title}}', fields: ['amount'] } },
  ];
  readonly handlers: TaskHandlers<typeof tasks> = {
    approve: ({ approval, approveComments }) =>
      this.requests.decide(approval.id, 'approved', approveComments ?? ''),
    reject: ({ approval, approveComments }) => this.requests.decide(approval.id, 'rejected', approveComments),
  };

  constructor(
    options: ConnectorOptions,
    private readonly requests: PurchaseRequests,
  ) {
    super(options);
  }

  // Every request changed at or after `since` (all of them on the first run); the kit keeps the cursor.
  override async *changes({ since }: ChangeWindow): AsyncIterable<SourceApproval> {
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
}
