/**
 * The worker itself: `ConnectorWorker`, which starts and stops the jobs of the folders beside this one (sync, tasks,
 * keys, operations), its lifecycle (`lifecycle.ts`), its options (`connector-options.ts`) and what it says when it
 * cannot start (`start-failure.ts`). See `docs/worker.md`.
 * @module
 */

export {
  type ConnectorOptions,
  connectorOptionsSchema,
  DEFAULT_KEY_FILE,
  type PollerOptions,
  SHUTDOWN_MARGIN_MS,
  type ShutdownOptions,
  type SyncOptions,
} from './connector-options.js';
export { LifecycleError, type LifecycleState } from './lifecycle.js';
export { type AppStateOf, ConnectorWorker } from './worker.js';
