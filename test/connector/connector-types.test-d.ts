import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  type ChangeWindow,
  Connector,
  type SourceApproval,
  type TaskContext,
  type TaskHandler,
  type TaskHandlers,
  type TaskOutcome,
} from '../../src/connector/index.js';

const tasks = {
  approve: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().optional() }),
  // A schema whose output differs from its input: the handler sees the output.
  reject: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().transform(Number) }),
};
type Tasks = typeof tasks;

describe('a connector subclass', () => {
  it('compiles with one handler per declared task type', () => {
    class Complete extends Connector<Tasks> {
      readonly tasks = tasks;
      readonly handlers: TaskHandlers<Tasks> = {
        approve: async () => {},
        reject: async () => ({ meta: { code: 'done' } }),
      };
      override async *changes(_window: ChangeWindow): AsyncIterable<SourceApproval> {}
    }
    expectTypeOf<Complete['handlers']>().toHaveProperty('approve');
    expectTypeOf<Complete['handlers']>().toHaveProperty('reject');
  });

  it('does not compile when the handlers miss a declared task type', () => {
    class Incomplete extends Connector<Tasks> {
      readonly tasks = tasks;
      // @ts-expect-error `reject` has no handler
      readonly handlers: TaskHandlers<Tasks> = {
        approve: async () => {},
      };
    }
    expectTypeOf<Incomplete>().toExtend<Connector<Tasks>>();
  });

  it('does not compile when unannotated handlers miss a declared task type', () => {
    class Unannotated extends Connector<Tasks> {
      readonly tasks = tasks;
      // @ts-expect-error the inferred type lacks `reject`, so it does not fit the base class's `handlers`
      readonly handlers = {
        approve: async () => {},
      };
    }
    expectTypeOf<Unannotated['handlers']>().not.toHaveProperty('reject');
  });

  it('does not compile when the handlers property itself is left out', () => {
    // @ts-expect-error the abstract `handlers` is not implemented
    class NoHandlers extends Connector<Tasks> {
      readonly tasks = tasks;
    }
    expectTypeOf<NoHandlers>().toHaveProperty('tasks');
  });

  it('does not compile with a handler for a task type it did not declare', () => {
    const handlers: TaskHandlers<Tasks> = {
      approve: async () => {},
      reject: async () => {},
      // @ts-expect-error `escalate` is not a declared task type
      escalate: async () => {},
    };
    expectTypeOf(handlers).toEqualTypeOf<TaskHandlers<Tasks>>();
  });
});

describe('a handler', () => {
  it('receives its schema’s output type and the task context', () => {
    expectTypeOf<TaskHandlers<Tasks>['approve']>().toEqualTypeOf<
      TaskHandler<{ approval: { id: string }; approveComments?: string | undefined }>
    >();
    expectTypeOf<TaskHandlers<Tasks>['reject']>().parameter(0).toEqualTypeOf<z.output<Tasks['reject']>>();
    expectTypeOf<TaskHandlers<Tasks>['reject']>().parameter(0).toEqualTypeOf<{
      approval: { id: string };
      approveComments: number;
    }>();
    expectTypeOf<TaskHandlers<Tasks>['reject']>().parameter(1).toEqualTypeOf<TaskContext>();
    expectTypeOf<TaskHandlers<Tasks>['reject']>().returns.toEqualTypeOf<Promise<TaskOutcome>>();
  });

  it('does not compile when it uses its input as another type', () => {
    const handlers: TaskHandlers<Tasks> = {
      approve: async ({ approval }) => {
        // @ts-expect-error the id is a string
        const id: number = approval.id;
        void id;
      },
      reject: async ({ approveComments }) => {
        // @ts-expect-error after the transform the comments are a number
        const comments: string = approveComments;
        void comments;
      },
    };
    expectTypeOf(handlers).toEqualTypeOf<TaskHandlers<Tasks>>();
  });

  it('does not compile when it returns something other than nothing or a meta', () => {
    const handlers: TaskHandlers<Tasks> = {
      approve: async () => {},
      // @ts-expect-error a handler reports through `meta`, not a bare value
      reject: async () => 'done',
    };
    expectTypeOf(handlers).toEqualTypeOf<TaskHandlers<Tasks>>();
  });
});
