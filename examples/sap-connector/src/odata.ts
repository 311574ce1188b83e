/**
 * The pieces of OData V2 the SAP client speaks: string literals in URLs, `/Date(…)/` values, and the error body.
 * @module
 */

/**
 * An OData V2 string literal: the value in single quotes, a quote inside doubled. Percent-encode it with the rest
 * of the query value it goes into.
 *
 * @example
 * ```ts
 * quote("O'Brien"); // "'O''Brien'"
 * ```
 */
export function quote(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Reads the value of an OData V2 string literal as the service received it (already percent-decoded). */
export function readLiteral(text: string): string | undefined {
  if (text.length < 2 || !text.startsWith("'") || !text.endsWith("'")) return undefined;
  const inner = text.slice(1, -1);
  // Inside, a quote only comes doubled (standing for one quote); a lone one ends the literal early.
  if (!/^(?:[^']|'')*$/.test(inner)) return undefined;
  return inner.replaceAll("''", "'");
}

/** `/Date(1424149556000)/` (with an optional `+0000` offset, which SAP sends as UTC anyway) as a `Date`. */
export function parseODataDate(value: string): Date | undefined {
  const match = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/.exec(value);
  if (match === null) return undefined;
  return new Date(Number(match[1]));
}

/** A `Date` as OData V2 verbose JSON writes it. */
export function formatODataDate(date: Date): string {
  return `/Date(${date.getTime()})/`;
}

/** The parts of an OData V2 error body (`{"error": {"code", "message": {"lang", "value"}}}`) that are present. */
export function readODataError(body: unknown): { code?: string; message?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return {};
  const { code, message } = error as { code?: unknown; message?: unknown };
  const value =
    typeof message === 'string'
      ? message
      : typeof message === 'object' && message !== null
        ? (message as { value?: unknown }).value
        : undefined;
  return {
    ...(typeof code === 'string' && code !== '' ? { code } : {}),
    ...(typeof value === 'string' && value !== '' ? { message: value } : {}),
  };
}

/**
 * Reads a `Retry-After` header, in seconds or as an HTTP date, into milliseconds from `now`; `undefined` when absent
 * or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
