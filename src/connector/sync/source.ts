import { z } from 'zod';
import { ApprovalId, DateTimeInput, JsonObjectInput } from '../../api/index.js';
import { toIssues, ValidationError } from '../../errors.js';
import type { Logger } from '../operations/index.js';
import type { StateAccess, SyncCursor } from '../state.js';

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
const SourceApprovalSchema = z.object({
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

/** What a source method receives besides its arguments. */
export interface SourceContext<AppState extends object = Record<string, unknown>> {
  /** Aborted when the worker stops; pass it to the source's HTTP calls. */
  readonly signal: AbortSignal;
  /** A child logger bound to the run (`component: 'sync'`, `mode`). */
  readonly logger: Logger;
  /** The author's own part of connector state. */
  readonly state: StateAccess<AppState>;
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
  /** For reconciliation: the current record of each of these approvals the source still has. */
  lookup?(ids: readonly string[], context: SourceContext<AppState>): AsyncIterable<SourceApproval>;
}

/** A source that can only list what is open now, as `snapshot({...})` declares it. */
export interface SnapshotSource<AppState extends object = Record<string, unknown>> {
  readonly kind: 'snapshot';
  /** Every approval open in the source now. */
  snapshot(context: SourceContext<AppState>): AsyncIterable<SourceApproval>;
  /** For reconciliation: the current record of each of these approvals the source still has. */
  lookup?(ids: readonly string[], context: SourceContext<AppState>): AsyncIterable<SourceApproval>;
}

/** How a connector reads its source: declared with `incremental({...})` or `snapshot({...})`. */
export type ConnectorSource<AppState extends object = Record<string, unknown>> =
  | IncrementalSource<AppState>
  | SnapshotSource<AppState>;

/** Checks what the author's source produced, naming the record; turns `lastModified` into an ISO string. */
export function parseSourceApproval(
  record: unknown,
  requireLastModified: boolean,
): z.output<typeof SourceApprovalSchema> & { lastModified?: string } {
  const parsed = SourceApprovalSchema.safeParse(record);
  if (!parsed.success) throw new ValidationError(subjectOf(record), toIssues(parsed.error));
  if (requireLastModified && parsed.data.lastModified === undefined) {
    throw new ValidationError(subjectOf(record), [
      { path: ['lastModified'], message: 'is required for incremental sync', code: 'invalid_type' },
    ]);
  }
  return parsed.data;
}

/** Names a record of the source in an error: built only when one is thrown, never for the records that pass. */
function subjectOf(record: unknown): string {
  const id = (record as { id?: unknown } | null)?.id;
  return `approval ${typeof id === 'string' ? JSON.stringify(id) : ''} from the source`.replace('  ', ' ');
}
