import type { ConnectorMetrics, SyncMode } from '../operations/index.js';
import type { RunContext, RunReport } from './runs.js';
import type { StateStore } from './state.js';

/**
 * Runs one read of the source as a sync run, and records how it ended: the run's outcome and what it pushed in the
 * metrics, the cursor it left, and one log line, `sync run finished` with the report, or `sync run failed` (unless
 * the worker is stopping, whose abort is no failure to report).
 */
export async function recordedRun(
  mode: SyncMode,
  read: (context: RunContext) => Promise<RunReport>,
  context: RunContext,
  { metrics, state }: { metrics: ConnectorMetrics; state: StateStore<object> },
): Promise<RunReport> {
  const { logger, signal } = context;
  const started = performance.now();
  try {
    const report = await read(context);
    metrics.syncRun(mode, 'success');
    metrics.approvalsPushed(report.pushed);
    const cursor = state.cursor;
    metrics.syncCursor(cursor === undefined ? undefined : new Date(cursor.lastModified));
    logger.info({ ...report, durationMs: Math.round(performance.now() - started) }, 'sync run finished');
    return report;
  } catch (error) {
    metrics.syncRun(mode, 'failure');
    if (!signal.aborted)
      logger.error({ err: error }, 'sync run failed; the next run resumes from the saved cursor');
    throw error;
  }
}
