/**
 * What a worker checks of a connector it is given: the declarations the compiler checks, for code it did not see.
 * @module
 */
import { z } from 'zod';
import { func } from '../../internal/options.js';

const fn = func();
const schema = z.custom<z.ZodType>(
  (value) => typeof (value as { safeParse?: unknown } | null)?.safeParse === 'function',
  { error: 'a zod schema' },
);
const lookup = fn.optional();

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
      z.object({ kind: z.literal('incremental'), ordered: z.boolean(), changes: fn, lookup }),
      z.object({ kind: z.literal('snapshot'), snapshot: fn, lookup }),
    ],
    { error: 'declared with incremental({ changes }) or snapshot({ snapshot })' },
  ),
  authRequired: z.boolean(),
  classifyFailure: fn.optional(),
});
