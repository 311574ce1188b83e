/**
 * The connector's reads: the approvals changed since an instant (the incremental sync), the current records of
 * some approvals (reconciliation, and the lookups after tasks), and the approvers' users (the user mappings). Each
 * approval record is read with the record it approves, in batches: one read per approved table for a page of
 * approvals.
 * @module
 */
import type { SourceApproval } from 'approval-connector-kit';
import type { z } from 'zod';
import { changedRecords } from './changes.js';
import { type ServiceNowClient, sleep } from './client.js';
import { recordFields, toSourceApproval } from './mapping.js';
import {
  APPROVER_FIELDS,
  ApprovedRecord,
  ApproverRecord,
  parseDateTime,
  SYS_ID,
  USER_FIELDS,
  UserRecord,
} from './model.js';

/** The table of approval records. */
export const APPROVALS_TABLE = 'sysapproval_approver';

/** Ids per `sys_idIN…` condition: short enough for any URL the instance takes. */
const IDS_PER_QUERY = 50;

/** What the reads need besides the client. */
export interface ReadOptions {
  /** The approved tables whose approvals are read, such as `change_request`. */
  tables: readonly string[];
  /** Records per page. */
  pageSize: number;
  signal?: AbortSignal | undefined;
  /** Told each approval record read, before it is mapped: where the user mappings find the approvers. */
  onApproval?: (approval: ApproverRecord) => void;
}

/** How long the read waits for the instance's clock to leave the second it read last, and how often at most. */
const SETTLE_WAIT_MS = 250;
const SETTLE_PASSES = 8;

/**
 * The incremental read: every approval of the tables whose approval record, or whose approved record, changed at
 * or after `since` (every approval of the tables when `since` is undefined), each with its approved record.
 *
 * An edit of a change request does not touch its approval records, yet their data shows it: so the approved
 * tables are read for changes too, and the approvals of each changed record read with it. A full read needs only
 * the approval records. An approval yielded once in a run is yielded again only when its stamp moved.
 *
 * `sys_updated_on` has one-second precision: a record changed later in the second the read saw last would get a
 * stamp no later than what was read, and a cursor saved over that second would claim a change the service does not
 * have. So the read ends only with a pass that began (by the instance's clock, its answers' `Date`) after the newest
 * second it read: until then it waits a moment and reads from that second again (at most {@link SETTLE_PASSES}
 * passes), and every change stamped in it comes with this run.
 */
export async function* changedApprovals(
  client: ServiceNowClient,
  since: Date | undefined,
  options: ReadOptions,
): AsyncIterable<SourceApproval> {
  const yielded = new Map<string, number>();
  let from = since;
  let full = since === undefined;
  for (let pass = 1; ; pass += 1) {
    const seen = new Seen();
    for await (const approval of readChanges(client, from, full, seen, options)) {
      const stamp = new Date(approval.lastModified ?? 0).getTime();
      if (yielded.get(approval.id) === stamp) continue;
      yielded.set(approval.id, stamp);
      yield approval;
    }
    if (seen.settled() || pass >= SETTLE_PASSES) return;
    await sleep(SETTLE_WAIT_MS, options.signal);
    from = new Date(seen.newest);
    full = false;
  }
}

/**
 * What a pass of the read saw: the newest `sys_updated_on` it read, and the instance's clock at its first answer.
 * A pass that began after the newest second it read had passed on the instance read every change of that second.
 */
class Seen {
  newest = Number.NEGATIVE_INFINITY;
  #began = Number.POSITIVE_INFINITY;

  record(record: { sys_updated_on: { value: string } }): void {
    this.newest = Math.max(
      this.newest,
      parseDateTime(record.sys_updated_on.value) ?? Number.NEGATIVE_INFINITY,
    );
  }

  answer = (at: number | undefined): void => {
    // An answer without a Date says nothing of the clock: the read cannot wait for it, and takes it as moved on.
    if (at !== undefined) this.#began = Math.min(this.#began, at);
  };

  /** Whether the pass began after the newest second it read (nothing read: nothing to wait for). */
  settled(): boolean {
    return this.newest === Number.NEGATIVE_INFINITY || this.newest < Math.floor(this.#began / 1000) * 1000;
  }
}

/** One pass of the incremental read: the changed approval records, then, unless `full`, the changed approved records. */
async function* readChanges(
  client: ServiceNowClient,
  since: Date | undefined,
  full: boolean,
  seen: Seen,
  options: ReadOptions,
): AsyncIterable<SourceApproval> {
  const { tables, pageSize, signal } = options;
  const changed = changedRecords(client, ApproverRecord, {
    table: APPROVALS_TABLE,
    filter: `source_tableIN${tables.join(',')}`,
    fields: APPROVER_FIELDS,
    since,
    pageSize,
    signal,
    onAnswer: seen.answer,
  });
  for await (const batch of batches(changed, pageSize)) {
    for (const approval of batch) seen.record(approval);
    yield* await withRecords(client, batch, options);
  }
  if (full) return;
  for (const table of tables) {
    const records = changedRecords(client, ApprovedRecord, {
      table,
      filter: '',
      fields: recordFields(table),
      since,
      pageSize,
      signal,
      onAnswer: seen.answer,
    });
    for await (const batch of batches(records, pageSize)) {
      for (const record of batch) seen.record(record);
      const approvals = await readAll(client, APPROVALS_TABLE, ApproverRecord, APPROVER_FIELDS, {
        condition: (ids) => `source_table=${table}^document_idIN${ids}`,
        ids: batch.map(({ sys_id }) => sys_id.value),
        ...options,
      });
      const byId = new Map(batch.map((record) => [record.sys_id.value, record]));
      for (const approval of approvals) {
        options.onApproval?.(approval);
        yield toSourceApproval(approval, byId.get(approval.document_id.value), client.instanceUrl);
      }
    }
  }
}

/**
 * Reconciliation, the lookups after tasks and those of pushed changes: the current records of these approvals, read
 * by their sys_ids. An approval the instance no longer answers (its record deleted, or an ACL now keeping it from the
 * integration user) is left out, so the kit marks it resolved; so is an id that is no sys_id, and an approval of a
 * table not synced (as `changedApprovals` reads none). Only a read to the end of its pages counts: a page shorter
 * than asked for is not the end (the instance applies `sysparm_limit` before its ACLs), the absence of a next page is.
 */
export async function* lookupApprovals(
  client: ServiceNowClient,
  ids: readonly string[],
  options: ReadOptions,
): AsyncIterable<SourceApproval> {
  const wanted = [...new Set(ids.filter((id) => SYS_ID.test(id)))];
  for (let at = 0; at < wanted.length; at += options.pageSize) {
    const approvals = await readAll(client, APPROVALS_TABLE, ApproverRecord, APPROVER_FIELDS, {
      condition: (chunk) => `sys_idIN${chunk}^source_tableIN${options.tables.join(',')}`,
      ids: wanted.slice(at, at + options.pageSize),
      ...options,
    });
    yield* await withRecords(client, approvals, options);
  }
}

/**
 * The sys_ids of the approval records of one approved record (`table` one of the tables synced): what a pushed
 * change of a change request names, since an edit of it touches none of its approval records.
 */
export async function approvalIdsOfRecord(
  client: ServiceNowClient,
  table: string,
  sysId: string,
  options: ReadOptions,
): Promise<string[]> {
  if (!options.tables.includes(table)) return [];
  const approvals = await readAll(client, APPROVALS_TABLE, ApproverRecord, APPROVER_FIELDS, {
    condition: (ids) => `source_table=${table}^document_idIN${ids}`,
    ids: [sysId],
    ...options,
  });
  return approvals.map((approval) => approval.sys_id.value);
}

/** The `sys_user` records of these users (an approver's sys_id, name, user name and email). */
export async function readUsers(
  client: ServiceNowClient,
  userIds: readonly string[],
  options: Pick<ReadOptions, 'pageSize' | 'signal'>,
): Promise<UserRecord[]> {
  return await readAll(client, 'sys_user', UserRecord, USER_FIELDS, {
    condition: (chunk) => `sys_idIN${chunk}`,
    ids: userIds.filter((id) => SYS_ID.test(id)),
    ...options,
  });
}

/** Approval records with the records they approve, read one table at a time, mapped. */
async function withRecords(
  client: ServiceNowClient,
  approvals: readonly ApproverRecord[],
  options: ReadOptions,
): Promise<SourceApproval[]> {
  const records = new Map<string, ApprovedRecord>();
  const byTable = Map.groupBy(approvals, (approval) => approval.source_table.value);
  for (const [table, ofTable] of byTable) {
    if (!/^[a-z][a-z0-9_]*$/.test(table)) continue;
    const found = await readAll(client, table, ApprovedRecord, recordFields(table), {
      condition: (chunk) => `sys_idIN${chunk}`,
      ids: ofTable.map(documentOf),
      ...options,
    });
    for (const record of found) records.set(record.sys_id.value, record);
  }
  return approvals.map((approval) => {
    options.onApproval?.(approval);
    return toSourceApproval(approval, records.get(documentOf(approval)), client.instanceUrl);
  });
}

/** The sys_id of the record an approval is for: `document_id`, or `sysapproval` for an older task approval. */
function documentOf(approval: ApproverRecord): string {
  return approval.document_id.value || approval.sysapproval.value;
}

/**
 * Every record of `table` that meets the condition for each chunk of `ids` (duplicates and non-sys_ids dropped),
 * read to the end of the pages its `Link` headers lead to.
 */
async function readAll<Schema extends z.ZodType>(
  client: ServiceNowClient,
  table: string,
  schema: Schema,
  fields: readonly string[],
  options: {
    condition: (ids: string) => string;
    ids: readonly string[];
    pageSize: number;
    signal?: AbortSignal | undefined;
  },
): Promise<z.output<Schema>[]> {
  const ids = [...new Set(options.ids.filter((id) => SYS_ID.test(id)))];
  const found: z.output<Schema>[] = [];
  for (let at = 0; at < ids.length; at += IDS_PER_QUERY) {
    const chunk = ids.slice(at, at + IDS_PER_QUERY);
    const query = `${options.condition(chunk.join(','))}^ORDERBYsys_id`;
    const request = { table, query, fields, limit: options.pageSize };
    for await (const record of client.records(request, schema, { signal: options.signal }))
      found.push(record);
  }
  return found;
}

/** The items of `source` in arrays of `size`, the last one shorter. */
async function* batches<T>(source: AsyncIterable<T>, size: number): AsyncIterable<T[]> {
  let batch: T[] = [];
  for await (const item of source) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
