/**
 * The incremental read of one table: every record whose `sys_updated_on` is at or after an instant, in the order of
 * `sys_updated_on` then `sys_id`, read page by page so that nothing is skipped while records change under it.
 *
 * `sys_updated_on` has one-second precision, and its value (what `sysparm_display_value=all` answers as `value`,
 * and what an encoded query compares) is UTC, as the Table API reference says of date fields; the display value,
 * in the reading user's time zone and date format, is never read here. The window's start is written in that same
 * UTC form, rounded down to the second, so a read may take in a little more than asked, never less.
 * @module
 */
import type { z } from 'zod';
import type { Page, ServiceNowClient, TableQuery } from './client.js';
import { ServiceNowResponseError } from './errors.js';
import { type FieldValue, formatDateTime } from './model.js';

/** What a record needs for the read to page through it: its sys_id, and when and how often it changed. */
export interface Stamped {
  sys_id: FieldValue;
  sys_updated_on: FieldValue;
  sys_mod_count: FieldValue;
}

/** What {@link changedRecords} reads. */
export interface ChangedRecordsOptions {
  table: string;
  /** Encoded query conditions the records also meet (`source_tableINchange_request`), or `''`. */
  filter: string;
  /** The fields to answer; `sys_id`, `sys_updated_on` and `sys_mod_count` are added. */
  fields: readonly string[];
  /** Records changed at or after this instant; every record when undefined. */
  since: Date | undefined;
  /** Records per page (`sysparm_limit`). */
  pageSize: number;
  signal?: AbortSignal | undefined;
  /** Told the instance's clock at each answer (its `Date` header; `undefined` without one). */
  onAnswer?: ((at: number | undefined) => void) | undefined;
}

/**
 * Every record of `options.table` changed at or after `since`, each once for each change the read sees (a record
 * that changes again while the read goes on comes again, with its new stamp).
 *
 * The Table API pages by position (`sysparm_offset`), and a record that changes while a run pages moves to the end,
 * so that the one after it moves up a place and a plain next page would skip it. So after each page that brought
 * something new, the read starts a fresh query from the last `sys_updated_on` it read (`sys_updated_on>=<that
 * second>`): by value, not by position. The page's `Link` (`rel="next"`) is followed only past a page that brought
 * nothing new, or one whose records all share the second the query starts from (more records in one second than a
 * page holds, as after a bulk update), where a fresh query would be this very query. Once a link was followed past
 * a page that brought something new, that query is read again from its start before the read goes past its second
 * or ends, so that a record the positions skipped is found: each second is read at most twice.
 *
 * Only the absence of a `rel="next"` link ends a query: a page shorter than `sysparm_limit`, or empty, does not,
 * since the instance applies the limit before its ACLs take out the records the user may not read, and may answer
 * pages shorter than asked on its own.
 */
export async function* changedRecords<Schema extends z.ZodType<Stamped>>(
  client: ServiceNowClient,
  schema: Schema,
  options: ChangedRecordsOptions,
): AsyncIterable<z.output<Schema>> {
  const { table, filter, since, pageSize, signal } = options;
  const fields = [...new Set(['sys_id', 'sys_updated_on', 'sys_mod_count', ...options.fields])];
  const query = (from: string | undefined): TableQuery => ({
    table,
    query: [
      filter,
      from === undefined ? '' : `sys_updated_on>=${from}`,
      'ORDERBYsys_updated_on^ORDERBYsys_id',
    ]
      .filter((part) => part !== '')
      .join('^'),
    fields,
    limit: pageSize,
  });
  // What was yielded: each record's sys_id with the stamp it was read at.
  const read = new Map<string, string>();
  const links = new Set<string>();
  let from = since === undefined ? undefined : formatDateTime(since.getTime());
  let request: TableQuery | URL = query(from);
  // Whether a link was followed past a page that brought something new since `from` was last read from its start.
  let skipped = false;
  const again = (start: string | undefined) => {
    from = start;
    request = query(from);
    links.clear();
    skipped = false;
  };
  for (;;) {
    const page: Page<z.output<Schema>> = await client.page(request, schema, { signal });
    options.onAnswer?.(page.at);
    let fresh = 0;
    for (const record of page.records) {
      const stamp = `${record.sys_updated_on.value}#${record.sys_mod_count.value}`;
      if (read.get(record.sys_id.value) === stamp) continue;
      read.set(record.sys_id.value, stamp);
      fresh += 1;
      yield record;
    }
    const last = page.records.at(-1)?.sys_updated_on.value;
    if (page.next === undefined) {
      if (!skipped) return;
      again(from);
      continue;
    }
    if (fresh > 0 && last !== undefined && last !== from) {
      // Read `from` again from its start if a record may have been skipped; else go on from the last second read.
      again(skipped ? from : last);
      continue;
    }
    if (fresh > 0) skipped = true;
    // A link that comes back would page forever.
    if (links.has(page.next.href)) {
      throw new ServiceNowResponseError(
        { method: 'GET', path: `/api/now/table/${table}` },
        'a Link to a page it had linked to already',
      );
    }
    links.add(page.next.href);
    request = page.next;
  }
}
