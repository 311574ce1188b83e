/**
 * The sync: the runner that makes every read of the source, one at a time (`sync-runner.ts`), and the health its
 * runs report (`health.ts`); its runs (`runs.ts`: incremental, snapshot, reconcile, lookup), which read the source
 * with retries (`source-retries.ts`) and push approvals in batches (`pusher.ts`), a snapshot comparing content by
 * digest (`content-hash.ts`); the one queue of lookups that follow tasks and a source's events (`lookup-queue.ts`);
 * the schedules it runs on (`schedule.ts`); connector state, where its cursor is saved (`state.ts`), and the
 * cursor's order (`cursor.ts`). See `docs/connector.md`.
 * @module
 */

export { type CursorKey, compareKeys, keyOfCursor } from './cursor.js';
export { type CursorReading, SyncHealth } from './health.js';
export { LookupQueue, type LookupRequest, lookupAfterTask } from './lookup-queue.js';
export { recordedRun } from './recorded.js';
export {
  hasLookup,
  type RunContext,
  type RunReport,
  runIncremental,
  runLookup,
  runReconcile,
  runSnapshot,
} from './runs.js';
export {
  runOnSchedule,
  type Schedule,
  type ScheduledJob,
  type SyncSchedules,
  scheduleSchema,
  syncJobs,
} from './schedule.js';
export { readSource, SourceRetries, type SourceRetryParts } from './source-retries.js';
export { SavedWebhook, StateStore, savedCursorOf } from './state.js';
export {
  type RunObserver,
  SyncRunner,
  type SyncRunnerParts,
  type SyncRunnerSettings,
} from './sync-runner.js';
