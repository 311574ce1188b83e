import { createHash } from 'node:crypto';
import { ApprovalWrite, endpoints, parseOrThrow } from '../../api/index.js';
import type { IntegrationClient } from '../../client/index.js';
import { InvalidConnectorError } from '../errors.js';
import type { Logger } from '../operations/index.js';
import { type CursorKey, compareKeys, keyOfCursor, type StateAccess, type StateStore } from '../state.js';
import { ApprovalPusher, type PushLimits } from './pusher.js';
import { type ChangeWindow, parseSourceApproval, type SourceApproval, type SourceContext } from './source.js';

/** The source methods a run calls: those the connector declared. */
export interface SyncSource {
  changes?: (window: ChangeWindow, context: SourceContext<object>) => AsyncIterable<SourceApproval>;
  snapshot?: (context: SourceContext<object>) => AsyncIterable<SourceApproval>;
  lookup?: (ids: readonly string[], context: SourceContext<object>) => AsyncIterable<SourceApproval>;
}

/** What every run needs. */
export interface RunContext {
  client: IntegrationClient;
  source: SyncSource;
  state: StateStore<object>;
  /** The author's part of the state, as the source methods get it in their context. */
  appState: StateAccess<object>;
  limits: PushLimits;
  signal: AbortSignal;
  logger: Logger;
  now: () => number;
}

/** What a run did. Once a run has finished, `changed + resent` is `pushed`. */
export interface RunReport {
  /** Approvals the service acknowledged. */
  pushed: number;
  /**
   * Approvals pushed because they are new or changed: in an incremental run, those after the saved cursor; in a
   * snapshot run, every one pushed (its content differs from what the service holds, or it is marked resolved); in
   * a reconciliation, those marked resolved.
   */
  changed: number;
  /**
   * Approvals pushed again, which the service may hold unchanged: in an incremental run, those at or before the
   * saved cursor (the overlap, or the whole source in a full resync); in a reconciliation, every one `lookup()`
   * returned. None in a snapshot run.
   */
  resent: number;
  /** Approvals marked resolved because the source no longer has them open. */
  resolved: number;
}

/**
 * Incremental run: reads what changed since the saved cursor (minus `overlapMs`; everything when `full`), pushes it,
 * and saves the cursor
 * only once every change before it is acknowledged. With `ordered`, the source promises `(lastModified, id)` order
 * and the cursor is saved after each acknowledged prefix; a record out of that order is still pushed, and from
 * then on the cursor waits for the end of the run.
 */
export async function runIncremental(
  context: RunContext,
  options: { overlapMs: number; ordered: boolean; full: boolean },
): Promise<RunReport> {
  const { state, logger, signal } = context;
  // A full run reads the whole source but keeps the saved cursor: it only ever moves forward.
  const cursor = options.full ? undefined : state.cursor;
  // What is at or before the saved cursor was sent by an earlier run.
  const saved = state.cursor === undefined ? undefined : keyOfCursor(state.cursor);
  const window: ChangeWindow = {
    since: cursor === undefined ? undefined : new Date(Date.parse(cursor.lastModified) - options.overlapMs),
    cursor,
  };
  let inOrder = options.ordered;
  let saveFailed = false;
  const pusher = new ApprovalPusher({
    client: context.client,
    limits: context.limits,
    signal,
    onAcknowledged: (key) => {
      if (!inOrder) return;
      state.advanceCursor(key, new Date(context.now()));
      state.flush(signal).catch((error: unknown) => {
        // Said once a run, and not for a write a stop cut short: the stop saves the state, and says if it cannot.
        if (saveFailed || signal.aborted) return;
        saveFailed = true;
        logger.warn({ err: error }, 'saving the sync cursor failed; retrying at the end of the run');
      });
    },
  });
  let previous: CursorKey | undefined;
  let newest: CursorKey | undefined;
  let resent = 0;
  const changes = requireMethod(context.source.changes, 'changes');
  try {
    for await (const record of changes(window, { signal, logger, state: context.appState })) {
      signal.throwIfAborted();
      const approval = parseSourceApproval(record, true);
      // Parsed once here; keys are compared as numbers from then on.
      const key: CursorKey = { at: Date.parse(approval.lastModified as string), id: approval.id };
      if (inOrder && previous !== undefined && compareKeys(key, previous) < 0) {
        inOrder = false;
        logger.warn(
          { approvalId: approval.id },
          'the source returned a change out of order; the cursor now waits for the end of the run',
        );
      }
      previous = key;
      if (newest === undefined || compareKeys(key, newest) > 0) newest = key;
      if (saved !== undefined && compareKeys(key, saved) <= 0) resent += 1;
      await pusher.add(approval, key);
    }
    await pusher.finish();
  } catch (error) {
    // Whatever failed, the batches already sent may still be acknowledged, and what is acknowledged in order is
    // saved before the run gives up.
    await pusher.settle();
    await state.flush(signal).catch(() => {});
    throw error;
  }
  if (newest !== undefined) state.advanceCursor(newest, new Date(context.now()));
  await state.flush(signal);
  return { pushed: pusher.pushed, changed: pusher.pushed - resent, resent, resolved: 0 };
}

/**
 * Snapshot run, for sources that can only list what is open now: pushes each approval that is new or whose content
 * changed (by content hash against what the service holds), and marks resolved every approval the service holds as
 * open that the snapshot no longer lists.
 */
export async function runSnapshot(context: RunContext): Promise<RunReport> {
  const { client, signal, logger } = context;
  const held = new Map<string, string>();
  for await (const approval of client.iterateApprovals({ resolved: false, view: 'full' }, { signal })) {
    held.set(approval.id, contentHash(approval));
  }
  const pusher = new ApprovalPusher({ client, limits: context.limits, signal });
  let resolved = 0;
  const snapshot = requireMethod(context.source.snapshot, 'snapshot');
  for await (const record of snapshot({ signal, logger, state: context.appState })) {
    signal.throwIfAborted();
    const approval = parseSourceApproval(record, false);
    const hash = contentHash(approval);
    const before = held.get(approval.id);
    held.delete(approval.id);
    if (before === hash) continue;
    await pusher.add(approval);
  }
  for (const id of held.keys()) {
    await pusher.add(resolvedWrite(id));
    resolved += 1;
  }
  await pusher.finish();
  return { pushed: pusher.pushed, changed: pusher.pushed, resent: 0, resolved };
}

/**
 * Reconciliation: walks the approvals the service holds as open, asks the source about them in chunks, pushes what
 * the source says, and marks resolved those it no longer knows. So nothing stays pending forever in the app.
 */
export async function runReconcile(context: RunContext, options: { chunkSize: number }): Promise<RunReport> {
  const { client, signal, logger } = context;
  const lookup = requireMethod(context.source.lookup, 'lookup');
  const pusher = new ApprovalPusher({ client, limits: context.limits, signal });
  let resolved = 0;
  const check = async (ids: string[]) => {
    const found = new Set<string>();
    for await (const record of lookup(ids, { signal, logger, state: context.appState })) {
      const approval = parseSourceApproval(record, false);
      found.add(approval.id);
      await pusher.add(approval);
    }
    for (const id of ids) {
      if (found.has(id)) continue;
      await pusher.add(resolvedWrite(id));
      resolved += 1;
    }
  };
  let ids: string[] = [];
  for await (const approval of client.iterateApprovals({ resolved: false, view: 'shallow' }, { signal })) {
    ids.push(approval.id);
    if (ids.length >= options.chunkSize) {
      await check(ids);
      ids = [];
    }
  }
  if (ids.length > 0) await check(ids);
  await pusher.finish();
  return { pushed: pusher.pushed, changed: resolved, resent: pusher.pushed - resolved, resolved };
}

/**
 * Marks an approval resolved. Sent without `lastModified`, so the service applies it whatever timestamp it holds
 * (a clock skew between source and worker cannot make it a no-op). The id comes from the service's answers, which
 * check it less than a request does, so it is checked here: the pusher sends what it is given as it is.
 */
function resolvedWrite(id: string): ApprovalWrite {
  return parseOrThrow(ApprovalWrite, { id, resolved: true }, `${endpoints.putApprovals.summary} request`);
}

/** A digest of what the app shows of an approval, independent of key order. */
export function contentHash(approval: {
  schemaId: string;
  approver: string;
  resolved: boolean;
  data?: unknown;
}): string {
  const { schemaId, approver, resolved, data } = approval;
  return createHash('sha256')
    .update(stableJson({ schemaId, approver, resolved, data: data ?? {} }))
    .digest('base64url');
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function requireMethod<T>(method: T | undefined, name: string): T {
  if (method === undefined) throw new InvalidConnectorError(`The connector does not implement ${name}()`);
  return method;
}
