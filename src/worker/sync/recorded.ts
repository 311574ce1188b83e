import { errorTypeOf, startSpan, type TraceSpan, withContext } from '../../internal/tracing.js';
import type { ConnectorMetrics, SyncMode } from '../operations/index.js';
import type { SyncHealth } from './health.js';
import type { LookupLinks } from './lookup-queue.js';
import type { RunContext, RunReport } from './runs.js';
import type { StateStore } from './state.js';

/** Where a run's end is recorded. */
export interface RunRecords {
  metrics: ConnectorMetrics;
  state: StateStore<object>;
  health: SyncHealth;
}

/**
 * Runs one read of the source as a sync run, and records how it ended: the run's outcome and what it pushed in the
 * metrics and the sync's health, the cursor it left, and one log line, `sync run finished` with the report,
 * `sync run failed`, or `sync run interrupted by the stop` when the worker's stop cut it short (an outcome of its
 * own, `interrupted`, which is no failure of the sync). Each run is a trace of its own, its span `sync {mode}` the
 * parent of the run's reads of the source, pushes and cursor saves; a lookup's span links to the spans of the push
 * deliveries it serves (`links`), each of a trace of its own.
 */
export async function recordedRun(
  mode: SyncMode,
  read: (context: RunContext) => Promise<RunReport>,
  context: RunContext,
  { metrics, state, health }: RunRecords,
  links?: LookupLinks,
): Promise<RunReport> {
  const { logger, signal } = context;
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  const span = runSpan(mode, links);
  try {
    const report = await withContext(span.context, () => read({ ...context, trace: span.context }));
    span.set({
      'approval_connector.sync.outcome': 'success',
      'approval_connector.sync.pushed': report.pushed,
      'approval_connector.sync.changed': report.changed,
      'approval_connector.sync.resent': report.resent,
      'approval_connector.sync.resolved': report.resolved,
    });
    metrics.syncRun(mode, 'success');
    metrics.approvalsPushed(report.pushed);
    const cursor = state.cursor;
    metrics.syncCursor(cursor === undefined ? undefined : new Date(cursor.lastModified));
    health.ended(mode, 'success');
    withContext(span.context, () =>
      logger.info({ ...report, durationMs: durationMs() }, 'sync run finished'),
    );
    return report;
  } catch (error) {
    // Whatever it failed with: once the stop has begun, its calls are cut short, and the next run resumes.
    const outcome = signal.aborted ? 'interrupted' : 'failure';
    span.set({ 'approval_connector.sync.outcome': outcome });
    span.fail(errorTypeOf(error));
    metrics.syncRun(mode, outcome);
    health.ended(mode, outcome);
    if (outcome === 'interrupted') {
      logger.info(
        { durationMs: durationMs() },
        'sync run interrupted by the stop; the next run resumes from the saved cursor',
      );
    } else {
      withContext(span.context, () =>
        logger.error({ err: error }, 'sync run failed; the next run resumes from the saved cursor'),
      );
    }
    throw error;
  } finally {
    span.end();
  }
}

/** The span of a run: a trace of its own; a lookup's links to the push deliveries it serves, and how many. */
function runSpan(mode: SyncMode, links: LookupLinks | undefined): TraceSpan {
  const deliveries = links === undefined || links.count === 0 ? undefined : links.count;
  return startSpan(`sync ${mode}`, {
    root: true,
    links: links?.contexts,
    attributes: {
      'approval_connector.sync.mode': mode,
      'approval_connector.lookup.deliveries': deliveries,
    },
  });
}
