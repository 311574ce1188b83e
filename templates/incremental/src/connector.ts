import {
  type ChangeWindow,
  Connector,
  type ConnectorFactory,
  incremental,
  push,
  type SourceApproval,
  task,
  verifyHmacSignature,
} from 'approval-connector-kit';
import { z } from 'zod';
import { DELIVERY_HEADER, exampleRequests, type Request, Requests, SIGNATURE_HEADER } from './source.js';

/** The body of an event of the source: the ids of the requests that changed. */
const RequestEvent = z.object({ requestIds: z.array(z.string()) });

/** Copies the source's requests into the Approval Service and carries the approvers' decisions back. */
export class MyConnector extends Connector {
  // Each task type: the schema of the task data it needs, and what it does in the source.
  readonly tasks = {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() }),
      // The kit aborts `signal` at the task's deadline: pass it to the source's calls, so a late call is given up.
      run: ({ approval, approveComments }, { signal }) =>
        this.requests.decide(approval.id, 'approved', approveComments ?? '', { signal }),
    }),
    reject: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
      run: ({ approval, approveComments }, { signal }) =>
        this.requests.decide(approval.id, 'rejected', approveComments, { signal }),
    }),
  };

  readonly source = incremental({
    // Every request changed at or after `since` (all of them on the first run); the kit keeps the cursor.
    changes: (window, { signal }) => this.#changes(window, signal),
    // The requests of these ids as the source holds them now: what the kit reads after a task, for each event, and
    // to reconcile.
    lookup: (ids, { signal }) => this.#lookup(ids, signal),
    // The events the source sends when requests change, to the worker's push ingress (open when PUSH_PORT is set): a
    // change shows within seconds instead of at the next scheduled sync. An event only names requests; the kit reads
    // them with lookup(), so a duplicate, late or forged event changes nothing wrong.
    push: push({
      // Checked over the raw body before anything parses it, with the secret the worker was given (PUSH_SECRET).
      verify: ({ body, headers }, { secret }) =>
        secret !== undefined &&
        verifyHmacSignature({ secret, body, signature: headers[SIGNATURE_HEADER], prefix: 'sha256=' }),
      approvalIds: ({ body }) => RequestEvent.parse(JSON.parse(body.toString('utf8'))).requestIds,
      deliveryId: ({ headers }) => headers[DELIVERY_HEADER],
    }),
  });

  // How the app shows an approval of each schema.
  override readonly uiTemplates = [
    { type: 'card', schemaId: 'request', template: { title: '{{data.title}}', fields: ['title'] } },
  ];

  constructor(private readonly requests: Requests) {
    super();
  }

  async *#changes({ since }: ChangeWindow, signal: AbortSignal): AsyncIterable<SourceApproval> {
    for await (const request of this.requests.changedSince(since, { signal })) yield approvalOf(request);
  }

  async *#lookup(ids: readonly string[], signal: AbortSignal): AsyncIterable<SourceApproval> {
    for await (const request of this.requests.byIds(ids, { signal })) yield approvalOf(request);
  }
}

/** A request as the Approval Service shows it. */
function approvalOf(request: Request): SourceApproval {
  return {
    id: request.id,
    schemaId: 'request',
    approver: request.approver,
    resolved: request.status !== 'open',
    lastModified: request.updatedAt,
    data: { title: request.title },
  };
}

// How `src/main.ts` and `connector run` build the worker's connector: a real source's client is made here, from the
// worker's environment (`context.env`) and with its logger (`context.logger`).
const build: ConnectorFactory = () => new MyConnector(new Requests(exampleRequests()));
export default build;
