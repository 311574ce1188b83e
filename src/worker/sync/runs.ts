import { ApprovalWrite, endpoints, parseOrThrow } from '../../api/index.js';
import { type IntegrationClient, NotFoundError } from '../../client/index.js';
import type {
  ChangeWindow,
  ConnectorSource,
  IncrementalSource,
  SnapshotSource,
  SourceApproval,
  SourceContext,
} from '../../connector/index.js';
import { parseSourceApproval } from '../../connector/internal.js';
import { inSpan, type TraceContext } from '../../internal/tracing.js';
import type { PinoLogger } from '../operations/index.js';
import { contentHash } from './content-hash.js';
import { type CursorKey, compareKeys, cursorOfKey, keyOfCursor } from './cursor.js';
import type { SyncHealth } from './health.js';
import { ApprovalPusher, type PushLimits } from './pusher.js';
import { readSource, SourceRetries, type SourceRetryParts } from './source-retries.js';
import type { StateStore } from './state.js';

/** A source that answers `lookup()`: what a reconciliation and a lookup read. */
export type LookupSource = ConnectorSource<object> & {
  lookup(ids: readonly string[], context: SourceContext<object>): AsyncIterable<SourceApproval>;
};

/** Whether the connector's source has `lookup()`, and so can be reconciled. */
export function hasLookup(source: ConnectorSource<object>): source is LookupSource {
  return source.lookup !== undefined;
}

/** What every run needs besides its source; the source's retries among it. */
export interface RunContext extends SourceRetryParts {
  client: IntegrationClient;
  /** The run's span, the parent of its pushes and cursor saves (which run outside its active context). */
  trace?: TraceContext | undefined;
  state: StateStore<object>;
  /** What the source's methods get besides their arguments. */
  sourceContext: SourceContext<object>;
  limits: PushLimits;
  signal: AbortSignal;
  logger: PinoLogger;
  now: () => number;
  /** Told of each record an incremental run reads, to watch the cursor: see {@link SyncHealth}. */
  health: Pick<SyncHealth, 'read'>;
  /**
   * Told of each approval a sync run or a reconciliation finds changed (its report's `changed`): what push health
   * checks against the events the source pushed. Not for lookups.
   */
  onChanged?: ((approvalId: string, lastModified: string | undefined) => void) | undefined;
}

/** What a run did. Once a run has finished, `changed + resent` is `pushed`. */
export interface RunReport {
  /** Approvals the service acknowledged. */
  pushed: number;
  /**
   * Approvals pushed because they are new or changed: in an incremental run, those after the saved cursor; in a
   * snapshot run, every one pushed (its content differs from what the service holds, or it is marked resolved); in
   * a reconciliation or a lookup, those marked resolved.
   */
  changed: number;
  /**
   * Approvals pushed again, which the service may hold unchanged: in an incremental run, those at or before the
   * saved cursor (the overlap, or the whole source in a full resync), or at or before the place the run read its
   * source again from after a failure; in a reconciliation, every one `lookup()` returned. None in a snapshot run.
   */
  resent: number;
  /** Approvals marked resolved because the source no longer has them open. */
  resolved: number;
}

/**
 * Incremental run: reads what changed since the saved cursor (minus `overlapMs`; everything when `full`), pushes it,
 * and saves the cursor only once every change before it is acknowledged. With `ordered`, the source promises
 * `(lastModified, id)` order and the cursor is saved after each acknowledged prefix; a record out of that order is
 * still pushed, and from then on the cursor waits for the end of the run.
 *
 * When the source fails with what may succeed later, what was read is pushed and the source is read again in place
 * (see {@link SourceRetries}): an ordered source from the last acknowledged record, at its instant (re-reading the
 * records that share it), an unordered one from the run's first window again.
 */
export function runIncremental(
  context: RunContext,
  source: IncrementalSource<object>,
  options: { overlapMs: number; full: boolean },
): Promise<RunReport> {
  return new IncrementalRun(context, source, options).run();
}

/** One incremental run: where it reads from, what it has read and pushed, and how far its cursor may go. */
class IncrementalRun {
  readonly #context: RunContext;
  readonly #source: IncrementalSource<object>;
  readonly #pusher: ApprovalPusher;
  /** What is at or before the saved cursor was sent by an earlier run. */
  readonly #saved: CursorKey | undefined;
  /** What the source is asked for: the run's window, then, after a failure of an ordered source, where it resumes. */
  #window: ChangeWindow;
  /** Whether the source has kept its `(lastModified, id)` order so far: then the cursor follows what is acknowledged. */
  #inOrder: boolean;
  /** While the source keeps its order: the place up to which everything read is acknowledged. */
  #acknowledged: CursorKey | undefined;
  #saveFailed = false;
  #previous: CursorKey | undefined;
  #newest: CursorKey | undefined;
  #resent = 0;
  /** Where the source was last read again from: what is at or before it was pushed earlier in this run. */
  #resumedFrom: CursorKey | undefined;
  /** Records read since the source was last opened, and the most any earlier read got. */
  #read = 0;
  #mostRead = 0;

  constructor(
    context: RunContext,
    source: IncrementalSource<object>,
    options: { overlapMs: number; full: boolean },
  ) {
    const { state } = context;
    this.#context = context;
    this.#source = source;
    // A full run reads the whole source but keeps the saved cursor: it only ever moves forward.
    const cursor = options.full ? undefined : state.cursor;
    this.#saved = state.cursor === undefined ? undefined : keyOfCursor(state.cursor);
    this.#window = {
      since: cursor === undefined ? undefined : new Date(Date.parse(cursor.lastModified) - options.overlapMs),
      cursor,
    };
    this.#inOrder = source.ordered;
    this.#pusher = new ApprovalPusher({
      client: context.client,
      limits: context.limits,
      signal: context.signal,
      trace: context.trace,
      onAcknowledged: (key) => this.#acknowledge(key),
    });
  }

  async run(): Promise<RunReport> {
    const { state } = this.#context;
    const pusher = this.#pusher;
    try {
      await readSource(
        'source.changes',
        () => {
          this.#read = 0;
          return this.#source.changes(this.#window, this.#context.sourceContext);
        },
        (record) => this.#take(record),
        new SourceRetries(this.#context),
        () => this.#settle(),
      );
      await pusher.finish();
    } catch (error) {
      // Whatever failed, what was read is still sent, and what is acknowledged in order is saved before the run
      // gives up. (After a failed push, nothing more is sent.)
      await pusher.finish().catch(() => {});
      await this.#saveCursor().catch(() => {});
      throw error;
    }
    if (this.#newest !== undefined) state.advanceCursor(this.#newest, new Date(this.#context.now()));
    await this.#saveCursor();
    return {
      pushed: pusher.pushed,
      changed: pusher.pushed - this.#resent,
      resent: this.#resent,
      resolved: 0,
    };
  }

  /** The service acknowledged everything up to `key`: while the source keeps its order, the cursor moves there. */
  #acknowledge(key: CursorKey): void {
    if (!this.#inOrder) return;
    const { state, signal, logger } = this.#context;
    this.#acknowledged = key;
    state.advanceCursor(key, new Date(this.#context.now()));
    this.#saveCursor().catch((error: unknown) => {
      // Said once a run, and not for a write a stop cut short: the stop saves the state, and says if it cannot.
      if (this.#saveFailed || signal.aborted) return;
      this.#saveFailed = true;
      logger.warn({ err: error }, 'saving the sync cursor failed; retrying at the end of the run');
    });
  }

  /**
   * Writes the connector state, and with it the cursor, if either changed: a span `save cursor` of the run. With
   * nothing to write, it only waits for the writes before it, in no span.
   */
  async #saveCursor(): Promise<void> {
    const { state, signal, trace } = this.#context;
    if (!state.unsaved) {
      await state.flush(signal);
      return;
    }
    await inSpan('save cursor', { parent: trace }, async (span) => {
      const written = await state.flush(signal);
      span.set({
        'approval_connector.sync.cursor': state.cursor?.lastModified,
        'approval_connector.sync.written': written,
      });
    });
  }

  /** Checks a record the source gave, notes where it stands (its order, whether it is sent again), and pushes it. */
  async #take(record: SourceApproval): Promise<void> {
    this.#context.signal.throwIfAborted();
    this.#read += 1;
    const approval = parseSourceApproval(record, true);
    // Parsed once here; keys are compared as numbers from then on.
    const key: CursorKey = { at: Date.parse(approval.lastModified as string), id: approval.id };
    if (this.#inOrder && this.#previous !== undefined && compareKeys(key, this.#previous) < 0) {
      this.#inOrder = false;
      this.#context.logger.warn(
        { approvalId: approval.id },
        'the source returned a change out of order; the cursor now waits for the end of the run',
      );
    }
    this.#previous = key;
    if (this.#newest === undefined || compareKeys(key, this.#newest) > 0) this.#newest = key;
    this.#context.health.read(key);
    if (isAtOrBefore(key, this.#saved) || isAtOrBefore(key, this.#resumedFrom)) this.#resent += 1;
    else this.#context.onChanged?.(approval.id, approval.lastModified);
    await this.#pusher.add(approval, key);
  }

  /**
   * After the source failed: sends what was read and saves the cursor over it, before the wait (a run that fails
   * after all, or a worker that dies meanwhile, resumes from there), and sets where the next read starts. Resolves
   * with whether the run got further than at any earlier failure.
   */
  async #settle(): Promise<boolean> {
    const { logger } = this.#context;
    await this.#pusher.finish();
    await this.#saveCursor().catch((error: unknown) => {
      logger.warn({ err: error }, 'saving the sync cursor failed; retrying at the end of the run');
    });
    const from = this.#inOrder ? this.#acknowledged : undefined;
    if (from === undefined) {
      // Read again from the run's window: progress is a read that got further than every one before it.
      const further = this.#read > this.#mostRead;
      this.#mostRead = Math.max(this.#mostRead, this.#read);
      return further;
    }
    // Progress is an acknowledged record further on: re-reading the ones that share its instant is none.
    if (isAtOrBefore(from, this.#resumedFrom)) return false;
    this.#resumedFrom = from;
    this.#window = { since: new Date(from.at), cursor: cursorOfKey(from) };
    // The read starts again at that instant: the records that share it come again, in order.
    this.#previous = undefined;
    return true;
  }
}

/** Whether `key` is at or before `place`; never when there is no place. */
function isAtOrBefore(key: CursorKey, place: CursorKey | undefined): boolean {
  return place !== undefined && compareKeys(key, place) <= 0;
}

/**
 * Snapshot run, for sources that can only list what is open now: pushes each approval that is new or whose content
 * changed (by content hash against what the service holds), and marks resolved every approval the service holds as
 * open that the snapshot no longer lists.
 *
 * A snapshot has no place to resume from: when it fails with what may succeed later, it is read again from its start
 * (what was pushed is not pushed again), and only a snapshot read to its end marks anything resolved.
 */
export async function runSnapshot(context: RunContext, source: SnapshotSource<object>): Promise<RunReport> {
  const { client, signal } = context;
  // Every approval open in the service (or pushed open by this run), with its content hash and the read that last
  // listed it.
  const open = new Map<string, { hash: string; listedBy: number }>();
  for await (const approval of client.iterateApprovals({ resolved: false, view: 'full' }, { signal })) {
    open.set(approval.id, { hash: contentHash(approval), listedBy: 0 });
  }
  const pusher = new ApprovalPusher({ client, limits: context.limits, signal, trace: context.trace });
  let reads = 0;
  let listed = 0;
  let mostListed = 0;
  await readSource(
    'source.snapshot',
    () => {
      reads += 1;
      listed = 0;
      return source.snapshot(context.sourceContext);
    },
    async (record) => {
      signal.throwIfAborted();
      const approval = parseSourceApproval(record, false);
      listed += 1;
      const hash = contentHash(approval);
      const held = open.get(approval.id);
      if (held?.hash === hash) {
        held.listedBy = reads;
        return;
      }
      await pusher.add(approval);
      context.onChanged?.(approval.id, approval.lastModified);
      if (approval.resolved) open.delete(approval.id);
      else open.set(approval.id, { hash, listedBy: reads });
    },
    new SourceRetries(context),
    async () => {
      await pusher.finish();
      const further = listed > mostListed;
      mostListed = Math.max(mostListed, listed);
      return further;
    },
  );
  let resolved = 0;
  for (const [id, held] of open) {
    if (held.listedBy === reads) continue;
    await pusher.add(resolvedWrite(id));
    context.onChanged?.(id, undefined);
    resolved += 1;
  }
  await pusher.finish();
  return { pushed: pusher.pushed, changed: pusher.pushed, resent: 0, resolved };
}

/**
 * Reconciliation: walks the approvals the service holds as open, asks the source about them in chunks, pushes what
 * the source says, and marks resolved those it no longer knows. So nothing stays pending forever in the app.
 */
export async function runReconcile(
  context: RunContext,
  source: LookupSource,
  options: { chunkSize: number },
): Promise<RunReport> {
  const open = context.client.iterateApprovals(
    { resolved: false, view: 'shallow' },
    { signal: context.signal },
  );
  return lookUp(
    context,
    source,
    mapAsync(open, (approval) => approval.id),
    options.chunkSize,
  );
}

/**
 * A lookup of some approvals: asks the source about them in chunks, pushes what it says, and marks resolved those it
 * no longer knows that the service holds open; a reconciliation of these approvals only. An id neither holds (an
 * event about something that never was an approval here) changes nothing. The cursor is left alone.
 */
export async function runLookup(
  context: RunContext,
  source: LookupSource,
  ids: Iterable<string>,
  options: { chunkSize: number },
): Promise<RunReport> {
  return lookUp(context, source, ids, options.chunkSize, (id) => isHeldOpen(context, id));
}

/** Whether the service holds this approval open: what a lookup marks resolved when the source no longer has it. */
async function isHeldOpen(context: RunContext, id: string): Promise<boolean> {
  try {
    return !(await context.client.getApproval(id, { signal: context.signal })).resolved;
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

async function lookUp(
  context: RunContext,
  source: LookupSource,
  ids: Iterable<string> | AsyncIterable<string>,
  chunkSize: number,
  heldOpen: (id: string) => Promise<boolean> = async () => true,
): Promise<RunReport> {
  const { client, signal } = context;
  const pusher = new ApprovalPusher({ client, limits: context.limits, signal, trace: context.trace });
  const retries = new SourceRetries(context);
  let resolved = 0;
  const check = async (chunk: string[]) => {
    let found = new Set<string>();
    let mostFound = 0;
    await readSource(
      'source.lookup',
      () => {
        found = new Set();
        return source.lookup(chunk, context.sourceContext);
      },
      async (record) => {
        const approval = parseSourceApproval(record, false);
        found.add(approval.id);
        await pusher.add(approval);
      },
      retries,
      async () => {
        await pusher.finish();
        const further = found.size > mostFound;
        mostFound = Math.max(mostFound, found.size);
        return further;
      },
    );
    for (const id of chunk) {
      if (found.has(id) || !(await heldOpen(id))) continue;
      await pusher.add(resolvedWrite(id));
      context.onChanged?.(id, undefined);
      resolved += 1;
    }
  };
  let chunk: string[] = [];
  for await (const id of ids) {
    chunk.push(id);
    if (chunk.length >= chunkSize) {
      await check(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) await check(chunk);
  await pusher.finish();
  return { pushed: pusher.pushed, changed: resolved, resent: pusher.pushed - resolved, resolved };
}

async function* mapAsync<T, U>(items: AsyncIterable<T>, map: (item: T) => U): AsyncIterable<U> {
  for await (const item of items) yield map(item);
}

/**
 * Marks an approval resolved. Sent without `lastModified`, so the service applies it whatever timestamp it holds
 * (a clock skew between source and worker cannot make it a no-op). The id comes from the service's answers, which
 * check it less than a request does, so it is checked here: the pusher sends what it is given as it is.
 */
function resolvedWrite(id: string): ApprovalWrite {
  return parseOrThrow(ApprovalWrite, { id, resolved: true }, `${endpoints.putApprovals.summary} request`);
}
