import { errorTypeOf, startSpan, withContext } from '../../internal/tracing.js';
import type { ConnectorMetrics, SyncMode } from '../operations/index.js';
import type { RunContext, RunReport } from './runs.js';
import type { StateStore } from './state.js';

/**
 * Runs one read of the source as a sync run, and records how it ended: the run's outcome and what it pushed in the
 * metrics, the cursor it left, and one log line, `sync run finished` with the report, or `sync run failed` (unless
 * the worker is stopping, whose abort is no failure to report). Each run is a trace of its own, its span
 * `sync {mode}` the parent of the run's reads of the source, pushes and cursor saves.
 */
export async function recordedRun(
  mode: SyncMode,
  read: (context: RunContext) => Promise<RunReport>,
  context: RunContext,
  { metrics, state }: { metrics: ConnectorMetrics; state: StateStore<object> },
): Promise<RunReport> {
  const { logger, signal } = context;
  const started = performance.now();
  const span = startSpan(`sync ${mode}`, {
    root: true,
    attributes: { 'approval_connector.sync.mode': mode },
  });
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
    const durationMs = Math.round(performance.now() - started);
    withContext(span.context, () => logger.info({ ...report, durationMs }, 'sync run finished'));
    return report;
  } catch (error) {
    span.set({ 'approval_connector.sync.outcome': signal.aborted ? 'interrupted' : 'failure' });
    span.fail(errorTypeOf(error));
    metrics.syncRun(mode, 'failure');
    if (!signal.aborted) {
      withContext(span.context, () =>
        logger.error({ err: error }, 'sync run failed; the next run resumes from the saved cursor'),
      );
    }
    throw error;
  } finally {
    span.end();
  }
}
