import type { z } from 'zod';
import { toIssues, ValidationError } from '../errors.js';

/**
 * Validates options with a schema. A bad one is a {@link ValidationError} that names each option and what was
 * received (`retry.retries: Too small: expected number to be >=0, got \`-1\` (number)`), except for the options
 * listed in `secret`, whose values are never echoed.
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  options: unknown,
  subject: string,
  secret: readonly string[] = [],
): z.output<S> {
  const result = schema.safeParse(options);
  if (result.success) return result.data;
  const issues = toIssues(result.error).map((issue) =>
    secret.includes(String(issue.path[0]))
      ? issue
      : { ...issue, message: `${issue.message}, got ${describe(valueAt(options, issue.path))}` },
  );
  throw new ValidationError(subject, issues);
}

function valueAt(root: unknown, path: ReadonlyArray<string | number>): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  return `\`${String(JSON.stringify(value) ?? value)}\` (${value === null ? 'null' : typeof value})`;
}
