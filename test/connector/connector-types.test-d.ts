import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { TaskResultStatus } from '../../src/api/index.js';
import {
  type ChangeWindow,
  Connector,
  incremental,
  type Logger,
  type PrecheckVerdict,
  type SourceApproval,
  type SourceContext,
  snapshot,
  type TaskContext,
  type TaskOutcome,
  task,
} from '../../src/connector/index.js';
import { ConnectorWorker } from '../../src/worker/index.js';

const Approve = z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() });
// A schema whose output differs from its input: the handler and the pre-check see the output.
const Reject = z.object({
  approval: z.object({ id: z.string() }),
  approveComments: z.string().transform(Number),
});

/** A source system's own client, as every connector has one. */
interface JiraClient {
  changedSince(since: Date | undefined, signal: AbortSignal): AsyncIterable<SourceApproval>;
  transition(issue: string, to: string): Promise<void>;
}

const options = { service: { baseUrl: 'http://127.0.0.1:8080', token: 'connector-token' } };

describe('a connector subclass', () => {
  it('may name its own members client, logger and metrics', () => {
    class JiraConnector extends Connector {
      readonly tasks = {
        approve: task({ input: Approve, run: ({ approval }) => this.client.transition(approval.id, 'Done') }),
      };
      readonly source = incremental({
        changes: ({ since }: ChangeWindow, { signal }: SourceContext) =>
          this.client.changedSince(since, signal),
      });
      readonly metrics = { transitions: 0 };

      constructor(
        private readonly client: JiraClient,
        protected readonly logger: Logger,
      ) {
        super();
      }
    }
    expectTypeOf<JiraConnector>().toExtend<Connector>();
    expectTypeOf<JiraConnector['metrics']>().toEqualTypeOf<{ transitions: number }>();
  });

  it('holds nothing of the base class but what the author declares', () => {
    expectTypeOf<keyof Connector>().toEqualTypeOf<
      'tasks' | 'source' | 'authRequired' | 'uiTemplates' | 'classifyFailure'
    >();
  });

  it('does not compile without a source', () => {
    // @ts-expect-error the abstract `source` is not declared
    class Sourceless extends Connector {
      readonly tasks = { approve: task({ input: Approve, run: async () => {} }) };
    }
    expectTypeOf<Sourceless>().toHaveProperty('tasks');
  });

  it('does not compile without its task types', () => {
    // @ts-expect-error the abstract `tasks` is not declared
    class Taskless extends Connector {
      readonly source = incremental({ changes: async function* () {} });
    }
    expectTypeOf<Taskless>().toHaveProperty('source');
  });

  it('does not compile with a source that is not declared with incremental() or snapshot()', () => {
    class Undeclared extends Connector {
      readonly tasks = {};
      // @ts-expect-error a bare object says neither how the source is read nor whether it is ordered
      readonly source = { changes: async function* () {} };
    }
    expectTypeOf<Undeclared>().toHaveProperty('source');
  });

  it('does not compile with a task type declared without a handler', () => {
    class Handlerless extends Connector {
      // @ts-expect-error `reject` has a schema but no `run`
      readonly tasks = { approve: task({ input: Approve, run: async () => {} }), reject: { input: Reject } };
      readonly source = snapshot({ snapshot: async function* () {} });
    }
    expectTypeOf<Handlerless>().toHaveProperty('tasks');
  });

  it('declares whether its source is ordered, not the options', () => {
    expectTypeOf(incremental).parameter(0).toHaveProperty('ordered').toEqualTypeOf<boolean | undefined>();
    expectTypeOf<ConstructorParameters<typeof ConnectorWorker>[1]['sync']>().not.toHaveProperty('ordered');
  });

  it('classifies failures by a method of its own name, classifyFailure', () => {
    class Classifying extends Connector {
      readonly tasks = {};
      readonly source = snapshot({ snapshot: async function* () {} });
      override classifyFailure(error: unknown): TaskResultStatus | undefined {
        return error instanceof RangeError ? 'systemError' : undefined;
      }
    }
    expectTypeOf<Classifying['classifyFailure']>().toEqualTypeOf<
      (error: unknown) => TaskResultStatus | undefined
    >();
  });
});

describe('a task declaration', () => {
  it('infers the input of its handler and its pre-check from its schema, and gives both the same context', () => {
    task({
      input: Reject,
      precheck: async (input, context) => {
        expectTypeOf(input).toEqualTypeOf<{ approval: { id: string }; approveComments: number }>();
        expectTypeOf(context).toEqualTypeOf<TaskContext>();
        return true;
      },
      run: async (input, context) => {
        expectTypeOf(input).toEqualTypeOf<z.output<typeof Reject>>();
        expectTypeOf(context).toEqualTypeOf<TaskContext>();
      },
    });
    expectTypeOf(task({ input: Approve, run: async () => {} }).run)
      .parameter(0)
      .toEqualTypeOf<{ approval: { id: string }; approveComments?: string | undefined }>();
    expectTypeOf(task({ input: Approve, run: async () => {} }).run).returns.toEqualTypeOf<
      Promise<TaskOutcome>
    >();
    expectTypeOf(task({ input: Approve, run: async () => {} }).precheck)
      .parameter(0)
      .toEqualTypeOf<z.output<typeof Approve>>();
  });

  it('does not compile when its handler or pre-check uses the input as another type', () => {
    task({
      input: Reject,
      precheck: async ({ approval }) => {
        // @ts-expect-error the id is a string
        const id: number = approval.id;
        void id;
        return true;
      },
      run: async ({ approveComments }) => {
        // @ts-expect-error after the transform the comments are a number
        const comments: string = approveComments;
        void comments;
      },
    });
  });

  it('does not compile when its handler returns something other than nothing or a meta', () => {
    // @ts-expect-error a handler reports through `meta`, not a bare value
    task({ input: Approve, run: async () => 'done' });
    task({ input: Approve, run: async () => ({ meta: { code: 'done' } }) });
  });

  it('does not compile when its pre-check returns something other than true or a result', () => {
    // @ts-expect-error `false` is no verdict: a result says what to report instead
    task({ input: Approve, precheck: async () => false, run: async () => {} });
    const verdict: PrecheckVerdict = { status: 'systemError', meta: { code: 'already_decided' } };
    task({ input: Approve, precheck: async () => verdict, run: async () => {} });
  });
});

describe('a source declaration', () => {
  it('gives changes() its window and context, snapshot() its context', () => {
    incremental({
      changes: (window, context) => {
        expectTypeOf(window).toEqualTypeOf<ChangeWindow>();
        expectTypeOf(context).toEqualTypeOf<SourceContext>();
        return (async function* () {})();
      },
      lookup: (ids, context) => {
        expectTypeOf(ids).toEqualTypeOf<readonly string[]>();
        expectTypeOf(context).toEqualTypeOf<SourceContext>();
        return (async function* () {})();
      },
    });
    snapshot({
      snapshot: (context) => {
        expectTypeOf(context).toEqualTypeOf<SourceContext>();
        return (async function* () {})();
      },
    });
  });

  it('does not compile when it yields something other than approvals', () => {
    incremental({
      // @ts-expect-error an approval has an id, a schemaId, an approver, resolved and data
      changes: async function* () {
        yield { id: 'PO-1' };
      },
    });
  });
});

describe('the author’s state', () => {
  interface JiraState {
    project: string;
  }

  it('is typed by the connector, in the context and on the worker', () => {
    class Stateful extends Connector<JiraState> {
      readonly tasks = {
        approve: task({
          input: Approve,
          run: async (_input, context: TaskContext<JiraState>) => {
            expectTypeOf(context.state.read()).toEqualTypeOf<JiraState | undefined>();
            await context.state.write({ project: 'OPS' });
            // @ts-expect-error the state is the connector's own type
            await context.state.write({ projet: 'OPS' });
          },
        }),
      };
      readonly source = incremental<JiraState>({
        changes: (_window, { state }) => {
          expectTypeOf(state.read()).toEqualTypeOf<JiraState | undefined>();
          return (async function* () {})();
        },
      });
    }
    const worker = new ConnectorWorker(new Stateful(), options);
    expectTypeOf(worker.readState()).toEqualTypeOf<JiraState | undefined>();
    expectTypeOf(worker.writeState).parameter(0).toEqualTypeOf<JiraState>();
  });
});

describe('the worker', () => {
  class Minimal extends Connector {
    readonly tasks = { approve: task({ input: Approve, run: async () => {} }) };
    readonly source = snapshot({ snapshot: async function* () {} });
  }

  it('knows the connector it runs', () => {
    const worker = new ConnectorWorker(new Minimal(), options);
    expectTypeOf(worker.connector).toEqualTypeOf<Minimal>();
  });

  it('runs each kind of sync by its own method, with no kind to pass', () => {
    const worker = new ConnectorWorker(new Minimal(), options);
    expectTypeOf(worker.syncNow).parameters.toEqualTypeOf<[]>();
    expectTypeOf(worker.resync).parameters.toEqualTypeOf<[]>();
    expectTypeOf(worker.reconcileNow).parameters.toEqualTypeOf<[]>();
  });
});
