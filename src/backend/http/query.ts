import { z } from 'zod';

/**
 * Parses a query string with WHATWG rules, so that a key arrives decoded (`lastModified%5Bgt%5D` is
 * `lastModified[gt]`). A repeated key becomes an array, which every query schema rejects.
 */
export function parseQueryString(text: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) {
    const seen = query[key];
    query[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return query;
}

/**
 * Query values are strings; turns those the schema declares as numbers or booleans into numbers and booleans when
 * they are written as such (`12`, `true`, `false`) and leaves every other value as it came, for the schema to reject.
 * A number is plain decimal digits: no sign, point or exponent (`+1`, `-1`, `1.0` and `1e2` stay strings).
 */
export function coerceQuery(schema: z.ZodType, query: Record<string, unknown>): Record<string, unknown> {
  if (!(schema instanceof z.ZodObject)) return query;
  const shape = schema.shape as Record<string, z.ZodType>;
  const coerced: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    const field = shape[key];
    coerced[key] =
      field === undefined || typeof value !== 'string' ? value : coerceValue(unwrap(field), value);
  }
  return coerced;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (
    current instanceof z.ZodOptional ||
    current instanceof z.ZodDefault ||
    current instanceof z.ZodNullable
  ) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

function coerceValue(schema: z.ZodType, value: string): unknown {
  if (schema instanceof z.ZodNumber && /^\d+$/.test(value)) return Number(value);
  if (schema instanceof z.ZodBoolean && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}
