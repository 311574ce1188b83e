import {
  type ChangeWindow,
  Connector,
  type ConnectorFactory,
  incremental,
  type SourceApproval,
  task,
} from 'approval-connector-kit';
import { z } from 'zod';
import { exampleRequests, Requests } from './source.js';

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

  // Every request changed at or after `since` (all of them on the first run); the kit keeps the cursor.
  readonly source = incremental({ changes: (window, { signal }) => this.#changes(window, signal) });

  // How the app shows an approval of each schema.
  override readonly uiTemplates = [
    { type: 'card', schemaId: 'request', template: { title: '{{data.title}}', fields: ['title'] } },
  ];

  constructor(private readonly requests: Requests) {
    super();
  }

  async *#changes({ since }: ChangeWindow, signal: AbortSignal): AsyncIterable<SourceApproval> {
    for await (const request of this.requests.changedSince(since, { signal })) {
      yield {
        id: request.id,
        schemaId: 'request',
        approver: request.approver,
        resolved: request.status !== 'open',
        lastModified: request.updatedAt,
        data: { title: request.title },
      };
    }
  }
}

// How `src/main.ts` and `connector run` build the worker's connector: a real source's client is made here, from the
// worker's environment (`context.env`) and with its logger (`context.logger`).
const build: ConnectorFactory = () => new MyConnector(new Requests(exampleRequests()));
export default build;
