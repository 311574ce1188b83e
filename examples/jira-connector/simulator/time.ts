/**
 * Date-times as Jira writes and reads them. Written apart from the client's own time-zone code on purpose: the
 * simulator reading a JQL date-time is an independent check of the client writing it.
 * @module
 */

const HOUR_MS = 3_600_000;
const formatters = new Map<string, Intl.DateTimeFormat>();
const friendlyFormatters = new Map<string, Intl.DateTimeFormat>();
/**
 * The wall clocks already worked out, per time zone: a site writes the same few instants (each issue's `updated`,
 * `created`) again and again, and formatting one in a time zone is what an answer costs most. Bounded.
 */
const wallClocks = new Map<string, Map<number, number>>();
const MAX_REMEMBERED = 50_000;

/** The wall clock of `ms` in `timeZone`, as the UTC instant that shows the same date and time. */
export function wallClock(ms: number, timeZone: string): number {
  let remembered = wallClocks.get(timeZone);
  if (remembered === undefined) {
    remembered = new Map();
    wallClocks.set(timeZone, remembered);
  }
  let wall = remembered.get(ms);
  if (wall === undefined) {
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    wall = formatWallClock(ms, timeZone);
    remembered.set(ms, wall);
  }
  return wall;
}

function formatWallClock(ms: number, timeZone: string): number {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, number> = {};
  for (const { type, value } of formatter.formatToParts(ms)) parts[type] = Number(value);
  return (
    Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) +
    (ms % 1000)
  );
}

/**
 * The instant a wall clock in `timeZone` stands for. A wall clock that occurs twice (clocks going back) is read as
 * the later of its instants, the harder case for a client that writes one; one that never occurs (clocks going
 * forward) as if the earlier offset still held.
 */
export function instantOf(wall: number, timeZone: string): number {
  const candidates = [wall - HOUR_MS * 3, wall, wall + HOUR_MS * 3].map(
    (probe) => wall - (wallClock(probe, timeZone) - probe),
  );
  const exact = candidates.filter((instant) => wallClock(instant, timeZone) === wall);
  return exact.length > 0 ? Math.max(...exact) : candidates[0]!;
}

/** `2026-05-01T10:03:07.000+0200`: the platform API's date-time, in the reader's time zone. */
export function jiraDateTime(ms: number, timeZone: string): string {
  const wall = wallClock(ms, timeZone);
  return `${new Date(wall).toISOString().slice(0, 23)}${offsetText(wall - ms)}`;
}

/** Service Management's DateDTO, in the reader's time zone. */
export function dateDto(ms: number, timeZone: string) {
  const wall = wallClock(ms, timeZone);
  const iso = new Date(wall).toISOString();
  const offset = offsetText(wall - ms);
  let formatter = friendlyFormatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, dateStyle: 'medium', timeStyle: 'short' });
    friendlyFormatters.set(timeZone, formatter);
  }
  const friendly = formatter.format(ms);
  return {
    iso8601: `${iso.slice(0, 19)}${offset}`,
    jira: `${iso.slice(0, 23)}${offset}`,
    friendly,
    epochMillis: ms,
  };
}

/** `2026-05-01T10:03Z`: how `X-RateLimit-Reset` writes an instant. */
export function minuteStamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16)}Z`;
}

function offsetText(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const sign = offsetMs < 0 ? '-' : '+';
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`;
}
