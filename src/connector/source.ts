import { z } from 'zod';
import {
  ApprovalId,
  DateTimeInput,
  isDateTimeInputString,
  JsonObjectInput,
  MAX_APPROVAL_ID_LENGTH,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
} from '../api/index.js';
import { toIssues, ValidationError } from '../errors.js';
import type { PushDeclaration } from './push.js';
import type { SourceContext } from './source-context.js';
import type { SyncCursor } from './state.js';

/** An approval as a connector reads it from its source system. */
export interface SourceApproval {
  /** The approval's id, stable in the source. */
  id: string;
  /** The schema the approval follows (which UI template shows it). */
  schemaId: string;
  /** The approver's id. */
  approver: string;
  /** True once nobody needs to act on it any more. */
  resolved: boolean;
  /** When it last changed in the source. Required for incremental sync; in a snapshot, optional. */
  lastModified?: Date | string;
  /** What the app shows. */
  data: Record<string, unknown>;
}

// Checks every rule of the request schema (`ApprovalWrite`) and more: what it accepts is sent without another check.
// Exported for the tests; not part of the package.
export const SourceApprovalSchema = z.object({
  id: ApprovalId,
  schemaId: z.string().min(1),
  approver: z.string().min(1),
  resolved: z.boolean(),
  lastModified: DateTimeInput.optional(),
  data: JsonObjectInput,
});

/** What an incremental read is asked for. */
export interface ChangeWindow {
  /**
   * Read every change at or after this instant: the saved cursor's time minus the overlap window, so that late
   * writes in the source are read again. `undefined` on the first run and after a full resync: read everything.
   */
  since: Date | undefined;
  /** The saved cursor itself, for sources that can page by `(lastModified, id)`. */
  cursor: SyncCursor | undefined;
}

/** A source read as changes since a point in time, as `incremental({...})` declares it. */
export interface IncrementalSource<AppState extends object = Record<string, unknown>> {
  readonly kind: 'incremental';
  /**
   * Whether `changes()` yields in `(lastModified, id)` order. When it does, the cursor is saved after each
   * acknowledged batch, so a crash mid-run re-reads less; otherwise it is saved at the end of each run.
   */
  readonly ordered: boolean;
  /** Every change at or after `window.since` (everything when it is `undefined`). */
  changes(window: ChangeWindow, context: SourceContext<AppState>): AsyncIterable<SourceApproval>;
  /**
   * The current record of each of these approvals the source still has: what a reconciliation, the lookups after
   * tasks and the push path read.
   */
  lookup?(ids: readonly string[], context: SourceContext<AppState>): AsyncIterable<SourceApproval>;
  /** The source's push path, declared with `push({...})` beside `lookup()`, which it requires. */
  readonly push?: PushDeclaration<AppState>;
}

/** A source that can only list what is open now, as `snapshot({...})` declares it. */
export interface SnapshotSource<AppState extends object = Record<string, unknown>> {
  readonly kind: 'snapshot';
  /** Every approval open in the source now. */
  snapshot(context: SourceContext<AppState>): AsyncIterable<SourceApproval>;
  /**
   * The current record of each of these approvals the source still has: what a reconciliation, the lookups after
   * tasks and the push path read.
   */
  lookup?(ids: readonly string[], context: SourceContext<AppState>): AsyncIterable<SourceApproval>;
  /** The source's push path, declared with `push({...})` beside `lookup()`, which it requires. */
  readonly push?: PushDeclaration<AppState>;
}

/** How a connector reads its source: declared with `incremental({...})` or `snapshot({...})`. */
export type ConnectorSource<AppState extends object = Record<string, unknown>> =
  | IncrementalSource<AppState>
  | SnapshotSource<AppState>;

/**
 * The kinds of source, as `ConnectorSource` declares them. The kit's code that tells them apart does so with a table
 * keyed by this or a `switch` that ends in `unreachable()`, so that a new kind is a compile error at each such place.
 */
export type SourceKind = ConnectorSource['kind'];

/** The declaration of one kind of source: `SourceOfKind<'snapshot'>` is a `SnapshotSource`. */
export type SourceOfKind<K extends SourceKind, AppState extends object = Record<string, unknown>> = Extract<
  ConnectorSource<AppState>,
  { kind: K }
>;

/** A source record as checked: `lastModified` an ISO string, unknown fields left out. */
export type ParsedSourceApproval = z.output<typeof SourceApprovalSchema> & { lastModified?: string };

/**
 * Checks what the author's source produced, naming the record; turns `lastModified` into an ISO string.
 *
 * Runs once per approval of a sync, so a well-formed record (nearly every one) is checked by {@link wellFormed},
 * which accepts nothing the schema refuses and gives what the schema would; anything else goes through the schema,
 * which names every problem.
 */
export function parseSourceApproval(record: unknown, requireLastModified: boolean): ParsedSourceApproval {
  const checked = wellFormed(record);
  if (checked !== undefined && (!requireLastModified || checked.lastModified !== undefined)) return checked;
  const parsed = SourceApprovalSchema.safeParse(record);
  if (!parsed.success) throw new ValidationError(subjectOf(record), toIssues(parsed.error));
  if (requireLastModified && parsed.data.lastModified === undefined) {
    throw new ValidationError(subjectOf(record), [
      { path: ['lastModified'], message: 'is required for incremental sync', code: 'invalid_type' },
    ]);
  }
  return parsed.data;
}

/**
 * {@link SourceApprovalSchema}'s output for a record it accepts without a question, checked rule by rule with the
 * schema's own limits and patterns, without building zod's context and result objects for each record; `undefined`
 * for anything else (and every record the schema refuses), which the schema then reads.
 */
function wellFormed(record: unknown): ParsedSourceApproval | undefined {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return undefined;
  const { id, schemaId, approver, resolved, lastModified, data } = record as Record<string, unknown>;
  if (
    typeof id !== 'string' ||
    id.length < 1 ||
    id.length > MAX_APPROVAL_ID_LENGTH ||
    id === '.' ||
    id === '..' ||
    !id.isWellFormed() ||
    typeof schemaId !== 'string' ||
    schemaId.length < 1 ||
    typeof approver !== 'string' ||
    approver.length < 1 ||
    typeof resolved !== 'boolean' ||
    !z.core.util.isPlainObject(data) ||
    nestsDeeperThan(data, MAX_JSON_DEPTH)
  ) {
    return undefined;
  }
  if (lastModified === undefined) return { id, schemaId, approver, resolved, data };
  if (isDateTimeInputString(lastModified)) return { id, schemaId, approver, resolved, lastModified, data };
  if (lastModified instanceof Date && !Number.isNaN(lastModified.getTime())) {
    return { id, schemaId, approver, resolved, lastModified: lastModified.toISOString(), data };
  }
  return undefined;
}

/** Names a record of the source in an error: built only when one is thrown, never for the records that pass. */
function subjectOf(record: unknown): string {
  const id = (record as { id?: unknown } | null)?.id;
  return `approval ${typeof id === 'string' ? JSON.stringify(id) : ''} from the source`.replace('  ', ' ');
}
