import { z } from 'zod';
import { toIssues, ValidationError } from '../errors.js';

/** A UUID as the service writes it (any version; the variant bits are not checked). */
export const Uuid = z.guid();

/**
 * An ISO 8601 timestamp with a time zone, or a `Date`, on the way in; always an ISO string on the way out.
 * Requests demand an explicit offset so that two systems never disagree on which instant is meant.
 */
const IsoDateTimeWithOffset = z.iso.datetime({ offset: true });

/**
 * Whether a value is a string that {@link DateTimeInput} accepts as it is: the very pattern its string branch tests,
 * for checks that must agree with it without running the schema.
 */
export function isDateTimeInputString(value: unknown): value is string {
  const pattern = IsoDateTimeWithOffset.def.pattern as RegExp;
  return typeof value === 'string' && pattern.test(value);
}

export const DateTimeInput = z.union([
  IsoDateTimeWithOffset,
  z.date().transform((date, ctx) => {
    if (Number.isNaN(date.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'Invalid date' });
      return z.NEVER;
    }
    return date.toISOString();
  }),
]);

/** An ISO 8601 timestamp in a response. Tolerant: a missing offset is accepted (and read as UTC by the kit). */
export const DateTime = z.iso.datetime({ offset: true, local: true });

/**
 * A JSON object whose keys the service does not constrain, passed on as it is: every key is kept, `__proto__`
 * included. (`JSON.parse` makes `__proto__` an own property like any other, so it never changes a prototype; zod's
 * records would drop it.)
 */
export const JsonObject = z
  .custom<Record<string, unknown>>((value) => z.core.util.isPlainObject(value), {
    message: 'Invalid input: expected object',
  })
  .meta({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} });

/**
 * The deepest a free-form JSON object in a request (approval `data`, connector `state`, a UI `template`, a task
 * result's `meta`) may nest objects and arrays, the object itself being level 1.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a value nests objects and arrays deeper than `limit` levels. It goes no deeper than `limit + 1` levels
 * itself, whatever the value's depth, so that no value can overflow the call stack (as `JSON.stringify` does past a
 * few thousand levels). Runs once per approval of a sync: it allocates nothing but each object's list of values.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit < 1) return true;
  // An array's items are read in place; only an object's values are listed.
  const children: ArrayLike<unknown> = Array.isArray(value) ? value : Object.values(value);
  for (let i = 0; i < children.length; i++) {
    const child = children[i];
    if (typeof child === 'object' && child !== null && nestsDeeperThan(child, limit - 1)) return true;
  }
  return false;
}

/** A {@link JsonObject} in a request: nested at most {@link MAX_JSON_DEPTH} levels deep. */
export const JsonObjectInput = JsonObject.refine((value) => !nestsDeeperThan(value, MAX_JSON_DEPTH), {
  message: `is nested deeper than ${MAX_JSON_DEPTH} levels`,
});

/** Parses with a schema, turning zod's error into the kit's {@link ValidationError} naming every field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, subject: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(subject, toIssues(result.error));
  return result.data;
}
