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

/** What a write did: created the approval, replaced fields of it, or was ignored by the lastModified rule. */
export type WriteOutcome = 'created' | 'updated' | 'ignored';

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
  ): WriteOutcome {
    const incoming = change.lastModified === undefined ? undefined : Date.parse(change.lastModified);
    const stored = this.ctx.db.get<Row>(`SELECT ${COLUMNS} WHERE system_id = ? AND id = ?`, systemId, id);
    if (stored === undefined) {
      if (change.schemaId === undefined || change.approver === undefined) {
        throw ServiceError.invalid([
          {
            path: where,
            message: 'schemaId and approver are required for a new approval',
            code: 'invalid_type',
          },
        ]);
      }
      this.ctx.db.run(
        `INSERT INTO approvals (system_id, id, schema_id, approver, resolved, last_modified, data)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        systemId,
        id,
        change.schemaId,
        change.approver,
        change.resolved === true ? 1 : 0,
        incoming ?? this.ctx.now(),
        JSON.stringify(change.data ?? {}),
      );
      return 'created';
    }
    if (incoming !== undefined && incoming <= stored.lastModified) return 'ignored';
    this.ctx.db.run(
      `UPDATE approvals SET schema_id = ?, approver = ?, resolved = ?, last_modified = ?, data = ?
       WHERE system_id = ? AND id = ?`,
      change.schemaId ?? stored.schemaId,
      change.approver ?? stored.approver,
      change.resolved === undefined ? stored.resolved : change.resolved ? 1 : 0,
      incoming ?? stored.lastModified,
      change.data === undefined ? stored.data : JSON.stringify(change.data),
      systemId,
      id,
    );
    return 'updated';
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
