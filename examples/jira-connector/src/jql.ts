/**
 * The JQL of the incremental read: the configured query, restricted to issues updated at or after an instant,
 * ordered by `updated`.
 *
 * JQL compares date-times to the minute, and reads `"yyyy-MM-dd HH:mm"` in the time zone of the account that runs
 * the search (Atlassian's JQL field reference, "Updated"). So the instant is written as that account's wall clock,
 * rounded down to the minute, and never later than the instant: a query may read a little more than asked (the
 * kit's overlap re-reads a window anyway), never less.
 * @module
 */
import { type Checked, JiraArgumentError, orThrow } from './errors.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** No time zone is further behind UTC than this (UTC-12). */
const LARGEST_NEGATIVE_OFFSET_MS = 12 * HOUR_MS;
/** Wide enough around an instant to see any daylight-saving change that could make its wall clock ambiguous. */
const TRANSITION_WINDOW_MS = 3 * HOUR_MS;

/**
 * `(<jql>) AND updated >= "<since>" ORDER BY updated ASC, key ASC`, or without the `updated` clause when `since`
 * is undefined (a full read).
 *
 * @param jql the query that selects the connector's issues, such as `project = ITSM`; without `ORDER BY`.
 * @param timeZone the searching account's time zone (`GET /rest/api/3/myself`); when unknown or not a valid IANA
 *   zone, the window starts 12 hours early, which is early enough in every zone.
 */
export function changedIssuesJql(jql: string, since: Date | undefined, timeZone: string | undefined): string {
  const base = checkedJql(jql);
  const restriction = since === undefined ? '' : ` AND updated >= "${jqlDateTime(since, timeZone)}"`;
  return `(${base})${restriction} ORDER BY updated ASC, key ASC`;
}

/** Checks the configured JQL: a non-empty query without its own `ORDER BY`. Returns it trimmed. */
export function checkedJql(jql: unknown): string {
  return orThrow('jql', checkJql(jql));
}

/** The check of {@link checkedJql}. */
export function checkJql(jql: unknown): Checked<string> {
  if (typeof jql !== 'string' || jql.trim() === '') {
    return {
      ok: false,
      problem: `must be a non-empty JQL query, such as "project = ITSM", got ${describe(jql)}`,
    };
  }
  if (/\border\s+by\b/i.test(jql)) {
    return {
      ok: false,
      problem: `must not have an ORDER BY clause (the connector orders by updated), got ${JSON.stringify(jql)}`,
    };
  }
  return { ok: true, value: jql.trim() };
}

/**
 * The wall clock of `instant` in `timeZone` as JQL writes a date-time (`yyyy-MM-dd HH:mm`), rounded down to the
 * minute, such that Jira reads it as an instant at or before `instant`.
 */
export function jqlDateTime(instant: Date, timeZone: string | undefined): string {
  const ms = instant.getTime();
  if (!Number.isFinite(ms)) throw new JiraArgumentError('since must be a valid date, got an invalid Date');
  const zone = usableTimeZone(timeZone);
  if (zone === undefined) return formatWallClock(ms - LARGEST_NEGATIVE_OFFSET_MS);
  // Jira reads a wall clock that occurs twice (the hour repeated when clocks go back) as one of its two instants.
  // Writing the instant with the smallest offset in force around it makes even the later reading not after it.
  const smallestOffset = Math.min(
    offsetAt(ms - TRANSITION_WINDOW_MS, zone),
    offsetAt(ms, zone),
    offsetAt(ms + TRANSITION_WINDOW_MS, zone),
  );
  return formatWallClock(ms + smallestOffset);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function usableTimeZone(timeZone: string | undefined): string | undefined {
  if (timeZone === undefined || timeZone === '') return undefined;
  try {
    wallClockOf(0, timeZone);
    return timeZone;
  } catch {
    return undefined;
  }
}

/** How far the zone's wall clock is ahead of UTC at `ms`. */
function offsetAt(ms: number, timeZone: string): number {
  const second = Math.floor(ms / 1000) * 1000;
  return wallClockOf(second, timeZone) - second;
}

/** The zone's wall clock at `ms`, as the UTC instant that shows the same date and time. */
function wallClockOf(ms: number, timeZone: string): number {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  const part = Object.fromEntries(
    formatter.formatToParts(ms).map(({ type, value }) => [type, Number(value)]),
  );
  return Date.UTC(part.year!, part.month! - 1, part.day!, part.hour!, part.minute!, part.second!);
}

/** `yyyy-MM-dd HH:mm` of a wall clock held as a UTC instant, rounded down to the minute. */
function formatWallClock(ms: number): string {
  return new Date(Math.floor(ms / MINUTE_MS) * MINUTE_MS).toISOString().slice(0, 16).replace('T', ' ');
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `(${value === null ? 'null' : typeof value})`;
}
