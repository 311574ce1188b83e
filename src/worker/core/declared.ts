/**
 * What a worker checks of a connector it is given: the declarations the compiler checks, for code it did not see.
 * @module
 */
import { z } from 'zod';
import { crossCheck, func } from '../../internal/options.js';

const fn = func();
const schema = z.custom<z.ZodType>(
  (value) => typeof (value as { safeParse?: unknown } | null)?.safeParse === 'function',
  { error: 'a zod schema' },
);
const lookup = fn.optional();

/** A push path, as `push({...})` declares it: `verify` required, as its type says. */
const push = z
  .object(
    {
      verify: fn,
      approvalIds: fn,
      deliveryId: fn.optional(),
      webhook: z
        .object(
          {
            register: fn,
            refresh: fn.optional(),
            exists: fn.optional(),
            unregister: fn.optional(),
            unregisterOnStop: z.boolean().optional(),
          },
          { error: 'an object with register() and, optionally, refresh(), exists() and unregister()' },
        )
        .optional(),
    },
    { error: 'declared with push({ verify, approvalIds })' },
  )
  .optional();

/** A push path reads what an event names through `lookup()`: without it, the declaration is refused. */
const pushNeedsLookup = crossCheck<{ lookup?: unknown; push?: unknown }>((source, context) => {
  if (source.push === undefined || source.lookup !== undefined) return;
  context.addIssue({
    code: 'custom',
    path: ['lookup'],
    input: source.lookup,
    message:
      'Expected `connector.source.lookup` to be a function beside `push`: the kit reads the approvals an event names through lookup()',
  });
});

/**
 * What a worker checks of a connector: the declarations the compiler checks, for code it did not see. Exported for
 * a type test, which ties its `source` to `ConnectorSource`, kind by kind and member by member.
 */
export const DeclaredConnector = z.object({
  tasks: z.record(z.string(), z.object({ input: schema, precheck: fn.optional(), run: fn }), {
    error: 'an object of task types, each declared with task({ input, run })',
  }),
  source: z.discriminatedUnion(
    'kind',
    [
      z
        .object({ kind: z.literal('incremental'), ordered: z.boolean(), changes: fn, lookup, push })
        .check(pushNeedsLookup),
      z.object({ kind: z.literal('snapshot'), snapshot: fn, lookup, push }).check(pushNeedsLookup),
    ],
    { error: 'declared with incremental({ changes }) or snapshot({ snapshot })' },
  ),
  authRequired: z.boolean(),
  classifyFailure: fn.optional(),
});
