import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { toIssues } from '../../errors.js';
import { ServiceError } from '../errors.js';

/**
 * Parses a body or a query of the admin API or the console's with `schema`; a missing one counts as `{}`.
 * Throws a 400 {@link ServiceError} naming every issue.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw ServiceError.invalid(toIssues(result.error));
  return result.data;
}

/** A path parameter of the route, `''` when absent. */
export function pathParam(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name] ?? '';
}
