import { APPROVALS_PAGE_SIZE } from '../../api/index.js';
import { ServiceError } from '../errors.js';
import { iso, type StoreContext } from './context.js';

/** An approval as the service answers it; `data` is left out in the shallow view. */
export interface ApprovalRecord {
  id: string;
  schemaId: string;
  approver: string;
  resolved: boolean;
  lastModified: string;
  data?: Record<string, unknown>;
}

/** The fields of one approval write, as validated by the wire schema. */
export interface ApprovalChange {
  schemaId?: string | undefined;
  approver?: string | undefined;
  resolved?: boolean | undefined;
  /** ISO 8601 with an offset. */
  lastModified?: string | undefined;
  data?: Record<string, unknown> | undefined;
}

/** The console's query: a system's approvals, newest first, filtered. */
export interface ApprovalBrowseQuery {
  resolved?: boolean | undefined;
  /** A case-insensitive substring of the id, the approver, the schema id or any text of the data. */
  search?: string | undefined;
  /** The most approvals answered. */
  limit: number;
  /** How many of the newest matches to skip, for the next pages. Default: 0. */
  offset?: number | undefined;
}

export interface ApprovalListQuery {
  /** Only approvals modified after this instant (ms). */
  after?: number;
  resolved?: boolean;
  /** @default 'full' */
  view?: 'full' | 'shallow';
}

interface Row {
  id: string;
  schemaId: string;
  approver: string;
  resolved: number;
  lastModified: number;
  data: string;
}

const COLUMNS =
  'id, schema_id AS schemaId, approver, resolved, last_modified AS lastModified, data FROM approvals';

// The write's values, numbered: ?1 system, ?2 id, ?3 schemaId, ?4 approver, ?5 resolved (0 or 1), ?6 lastModified
// (ms), ?7 data (JSON), each NULL when the write leaves it out; ?8 now. The lastModified rule is the WHERE of the
// update, so an ignored write changes no row.
const UPSERT = `INSERT INTO approvals (system_id, id, schema_id, approver, resolved, last_modified, data)
  VALUES (?1, ?2, ?3, ?4, coalesce(?5, 0), coalesce(?6, ?8), coalesce(?7, '{}'))
  ON CONFLICT (system_id, id) DO UPDATE SET schema_id = ?3, approver = ?4, resolved = coalesce(?5, resolved),
    last_modified = coalesce(?6, last_modified), data = coalesce(?7, data)
  WHERE ?6 IS NULL OR ?6 > last_modified`;
const MERGE = `UPDATE approvals SET schema_id = coalesce(?3, schema_id), approver = coalesce(?4, approver),
    resolved = coalesce(?5, resolved), last_modified = coalesce(?6, last_modified), data = coalesce(?7, data)
  WHERE system_id = ?1 AND id = ?2 AND (?6 IS NULL OR ?6 > last_modified)`;

export class Approvals {
  constructor(private readonly ctx: StoreContext) {}

  find(systemId: string, id: string, view: 'full' | 'shallow' = 'full'): ApprovalRecord | undefined {
    const row = this.ctx.db.get<Row>(`SELECT ${COLUMNS} WHERE system_id = ? AND id = ?`, systemId, id);
    return row === undefined ? undefined : toRecord(row, view);
  }

  /**
   * Applies the lastModified rule, then merges: a write whose `lastModified` is not later than the stored one is
   * ignored; otherwise the fields it carries replace the stored ones. `where` is the write's path in a 400.
   */
  write(
    systemId: string,
    id: string,
    change: ApprovalChange,
    where: (string | number)[] = ['approval'],
  ): void {
    const { db } = this.ctx;
    const lastModified = change.lastModified === undefined ? undefined : Date.parse(change.lastModified);
    const values = [
      systemId,
      id,
      change.schemaId ?? null,
      change.approver ?? null,
      change.resolved === undefined ? null : change.resolved ? 1 : 0,
      lastModified ?? null,
      change.data === undefined ? null : JSON.stringify(change.data),
    ];
    // One statement either way, without reading the stored approval first: an Update approvals batch is mostly
    // this, 50 or more times over.
    if (change.schemaId !== undefined && change.approver !== undefined) {
      this.#changed(systemId, id, lastModified, db.run(UPSERT, ...values, this.ctx.now()) > 0);
      return;
    }
    const merged = db.run(MERGE, ...values);
    if (merged === 0 && this.find(systemId, id, 'shallow') === undefined) {
      throw ServiceError.invalid([
        {
          path: where,
          message: 'schemaId and approver are required for a new approval',
          code: 'invalid_type',
        },
      ]);
    }
    this.#changed(systemId, id, lastModified, merged > 0);
  }

  #changed(systemId: string, approvalId: string, lastModified: number | undefined, applied: boolean): void {
    this.ctx.changed(() => ({
      kind: 'approval',
      systemId,
      approvalId,
      lastModified: lastModified === undefined ? undefined : iso(lastModified),
      applied,
      at: iso(this.ctx.now()),
    }));
  }

  /** The console's view: newest first (by lastModified, then id), filtered, with how many match in all. */
  browse(systemId: string, query: ApprovalBrowseQuery): { approvals: ApprovalRecord[]; total: number } {
    const where = ['system_id = ?'];
    const params: (string | number)[] = [systemId];
    if (query.resolved !== undefined) {
      where.push('resolved = ?');
      params.push(query.resolved ? 1 : 0);
    }
    if (query.search !== undefined && query.search !== '') {
      where.push(
        '(contains_ci(id, ?) OR contains_ci(approver, ?) OR contains_ci(schema_id, ?) OR contains_ci(data, ?))',
      );
      params.push(query.search, query.search, query.search, query.search);
    }
    const condition = where.join(' AND ');
    const { db } = this.ctx;
    const total = db.get<{ total: number }>(
      `SELECT count(*) AS total FROM approvals WHERE ${condition}`,
      ...params,
    );
    const rows = db.all<Row>(
      `SELECT ${COLUMNS} WHERE ${condition} ORDER BY last_modified DESC, id DESC LIMIT ? OFFSET ?`,
      ...params,
      query.limit,
      query.offset ?? 0,
    );
    return { approvals: rows.map((row) => toRecord(row, 'full')), total: total?.total ?? 0 };
  }

  /**
   * Get approvals, in ascending `(lastModified, id)`. Without `after`: the 50 most recently modified. With it: the
   * 50 modified earliest after it, plus any that share the 50th's lastModified, so paging by `[gt]` skips none.
   */
  list(systemId: string, query: ApprovalListQuery = {}): ApprovalRecord[] {
    const view = query.view ?? 'full';
    const filter = query.resolved === undefined ? '' : ' AND resolved = ?';
    const filterParams = query.resolved === undefined ? [] : [query.resolved ? 1 : 0];
    const { db } = this.ctx;
    if (query.after === undefined) {
      return db
        .all<Row>(
          `SELECT ${COLUMNS} WHERE system_id = ?${filter} ORDER BY last_modified DESC, id DESC LIMIT ?`,
          systemId,
          ...filterParams,
          APPROVALS_PAGE_SIZE,
        )
        .reverse()
        .map((row) => toRecord(row, view));
    }
    const rows = db.all<Row>(
      `SELECT ${COLUMNS} WHERE system_id = ? AND last_modified > ?${filter} ORDER BY last_modified, id LIMIT ?`,
      systemId,
      query.after,
      ...filterParams,
      APPROVALS_PAGE_SIZE,
    );
    const last = rows.at(-1);
    if (rows.length === APPROVALS_PAGE_SIZE && last !== undefined) {
      rows.push(
        ...db.all<Row>(
          `SELECT ${COLUMNS} WHERE system_id = ? AND last_modified = ? AND id > ?${filter} ORDER BY id`,
          systemId,
          last.lastModified,
          last.id,
          ...filterParams,
        ),
      );
    }
    return rows.map((row) => toRecord(row, view));
  }

  /** Every approval of the system, in ascending `(lastModified, id)`, with data. */
  all(systemId: string): ApprovalRecord[] {
    return this.ctx.db
      .all<Row>(`SELECT ${COLUMNS} WHERE system_id = ? ORDER BY last_modified, id`, systemId)
      .map((row) => toRecord(row, 'full'));
  }
}

function toRecord(row: Row, view: 'full' | 'shallow'): ApprovalRecord {
  const record: ApprovalRecord = {
    id: row.id,
    schemaId: row.schemaId,
    approver: row.approver,
    resolved: row.resolved === 1,
    lastModified: iso(row.lastModified),
  };
  if (view === 'full') record.data = JSON.parse(row.data) as Record<string, unknown>;
  return record;
}
