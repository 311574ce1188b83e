/**
 * A connector running against the reference backend, for the console's browser tests. The only place those tests
 * use the connector's author API, so that a change to that API touches this file alone.
 */
import type { ReferenceBackend, ReferenceBackendOptions } from '../../../../src/backend/index.js';
import { Connector, incremental, type TaskContext, task } from '../../../../src/connector/index.js';
import { createTestHarness } from '../../../../src/testing/index.js';
import { MemorySource, taskInputs } from '../../../worker/support/memory-source.js';

/** An action the connector ran, with the credentials it opened (revealed) when its task carried some. */
export interface RanAction {
  type: string;
  approvalId: string;
  comments: string;
  credentials?: Record<string, string>;
}

export interface RunningConnector {
  backend: ReferenceBackend;
  systemId: string;
  /** The connector token of the system. */
  token: string;
  /** Put approvals here, then {@link sync}. */
  source: MemorySource;
  ran: RanAction[];
  /** Syncs the source into the service now. */
  sync(): Promise<void>;
  /** Holds every action until the returned function is called. */
  hold(): () => void;
  close(): Promise<void>;
}

class ConsoleTestConnector extends Connector {
  readonly tasks = {
    approve: task({
      input: taskInputs.approve,
      run: ({ approval, approveComments }, context) =>
        this.#run('approve', approval.id, approveComments ?? '', context),
    }),
    reject: task({
      input: taskInputs.reject,
      run: ({ approval, approveComments }, context) =>
        this.#run('reject', approval.id, approveComments, context),
    }),
  };
  readonly source = incremental({ changes: (window) => this.system.changes(window) });
  override readonly uiTemplates = [
    { type: 'card', schemaId: 'po', template: { title: '{{data.title}}', fields: ['amount'] } },
  ];
  readonly ran: RanAction[] = [];
  gate: Promise<void> | undefined;

  constructor(
    readonly system: MemorySource,
    override readonly authRequired: boolean,
  ) {
    super();
  }

  async #run(type: string, approvalId: string, comments: string, context: TaskContext): Promise<void> {
    await this.gate;
    const credentials =
      context.credentials === undefined
        ? undefined
        : Object.fromEntries(
            Object.entries(context.credentials).map(([key, secret]) => [key, secret.reveal()]),
          );
    this.ran.push({ type, approvalId, comments, ...(credentials === undefined ? {} : { credentials }) });
  }
}

export async function startConnector(
  options: { authRequired?: boolean; backend?: ReferenceBackendOptions } = {},
): Promise<RunningConnector> {
  const harness = await createTestHarness({ backend: options.backend ?? {} });
  const source = new MemorySource();
  const worker = await harness.start(new ConsoleTestConnector(source, options.authRequired ?? false));
  const { connector } = worker;
  return {
    backend: harness.backend,
    systemId: harness.tenant.system.id,
    token: harness.tenant.connectorToken,
    source,
    ran: connector.ran,
    async sync() {
      await worker.syncNow();
    },
    hold() {
      let release = () => {};
      connector.gate = new Promise((resolve) => {
        release = resolve;
      });
      return () => {
        connector.gate = undefined;
        release();
      };
    },
    close: () => harness.close(),
  };
}
