import { z } from 'zod';

/** What happens to a request a fault matches. */
export const FaultAction = z.discriminatedUnion('type', [
  /**
   * Answer with this status (a 4xx or a 5xx) in the API's error shape, without doing anything: a 429 or a 5xx as an
   * overloaded service would, another 4xx (403, 414, 431, …) as a proxy or a firewall in front of it would.
   */
  z.strictObject({
    type: z.literal('status'),
    status: z.int().min(400).max(599),
    /** Seconds for the `Retry-After` header. Default: 1 on a 429, none otherwise. */
    retryAfter: z.int().min(0).optional(),
  }),
  /** Close the connection before doing anything: the request never reached the service. */
  z.strictObject({ type: z.literal('drop') }),
  /** Wait this long, then handle the request normally. */
  z.strictObject({ type: z.literal('delay'), ms: z.int().min(0).max(600_000) }),
  /** Handle the request and commit its writes, then close the connection instead of answering. */
  z.strictObject({ type: z.literal('dropAnswer') }),
  /** On Get task: hand the task out without a lease, so the next Get task delivers it again. */
  z.strictObject({ type: z.literal('duplicateTask') }),
]);
export type FaultAction = z.infer<typeof FaultAction>;

/** A fault to inject into the next `times` requests that match `method` and `path`. */
export const FaultRule = z.strictObject({
  /** HTTP method to match. Default: any. */
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).optional(),
  /**
   * Path to match, without the query: exact, with `:name` for one segment and `*` for anything.
   * Default: any v1 or v2 path. Example: `/v2/rawapprovals/:approvalId`, `/v1/*`.
   */
  path: z.string().startsWith('/').optional(),
  /**
   * Only requests made with this system's connector token. Default: every request, whoever makes it. A scoped fault
   * reads the request's token to know its system; requests without one, or with another's, pass.
   */
  systemId: z.string().min(1).optional(),
  /** How many matching requests it applies to. Default: 1. */
  times: z.int().min(1).default(1),
  fault: FaultAction,
});
export type FaultRuleInput = z.input<typeof FaultRule>;
export type FaultRule = z.output<typeof FaultRule>;

/** An injected fault, how many more requests it applies to, and how many it has applied to. */
export interface FaultInfo extends Omit<FaultRule, 'times'> {
  id: number;
  remaining: number;
  hits: number;
}
