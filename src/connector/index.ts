/**
 * The connector: the `Connector` base class and what runs it (the sync loop, the task poller, keys, failure mapping,
 * logs, metrics and the operations endpoints), and `runConnector` to run one as a long-lived worker.
 *
 * @example
 * ```ts
 * import { Connector, runConnector, type ChangeWindow, type TaskHandlers } from 'approval-connector-kit';
 *
 * class MyConnector extends Connector<typeof tasks> {
 *   readonly tasks = tasks;
 *   readonly handlers: TaskHandlers<typeof tasks> = { approve: ({ approval }) => source.approve(approval.id) };
 *   async *changes({ since }: ChangeWindow) { yield* source.changedSince(since); }
 * }
 * process.exitCode = await runConnector(new MyConnector({ service: { baseUrl, token } }));
 * ```
 * @module
 */

export { Connector, LifecycleError, type LifecycleState, type SyncKind } from './connector.js';
export {
  type ConnectorOptions,
  type PollerOptions,
  SHUTDOWN_MARGIN_MS,
  type ShutdownOptions,
  type SyncOptions,
} from './connector-options.js';
export {
  AuthenticationFailure,
  type ClassifyFailureOptions,
  CredentialsUnreadable,
  classifyFailure,
  type FailureClassification,
  type FailureMeta,
  ServiceUnavailableFailure,
  SystemFailure,
  TaskDataInvalid,
} from './failures.js';
export {
  FileKeyStore,
  KeyRingData,
  KeyRingInvalid,
  type KeyStore,
  KeyStoreReadOnly,
  MemoryKeyStore,
  ReadOnlyKeyStore,
  type ReadOnlyKeyStoreSource,
} from './key-store.js';
export {
  generateKeyRingData,
  KeyRing,
  type KeyRingOptions,
  KeyRingUnavailable,
  type NewKeyReason,
  type PublicKeyInfo,
} from './keys.js';
export { createLogger, type Logger, type LoggerOptions } from './logger.js';
export {
  ConnectorMetrics,
  type ConnectorMetricsOptions,
  type KeyEvent,
  type RenderedMetrics,
  type SyncMode,
  type SyncOutcome,
} from './metrics.js';
export {
  type HealthReport,
  OperationsServer,
  OperationsServerClosed,
  OperationsServerListenFailed,
  type OperationsServerOptions,
  type ReadinessReport,
} from './operations-server.js';
export { type RunConnectorOptions, runConnector, type SignalSource } from './run.js';
export {
  type ConnectorFactory,
  type RunWorkerOptions,
  runWorker,
  WORKER_EXIT_CODES,
  type WorkerContext,
} from './run-worker.js';
export { type Credentials, REDACTED, redactSecrets, Secret, wrapCredentials } from './secret.js';
export type { SyncCursor } from './state.js';
export type { RunReport } from './sync/runs.js';
export type { Schedule } from './sync/schedule.js';
export type { ChangeWindow, SourceApproval, SourceContext } from './sync/source.js';
export type {
  PrecheckVerdict,
  TaskContext,
  TaskHandler,
  TaskHandlers,
  TaskOutcome,
  TaskSchemas,
} from './tasks/definition.js';
export {
  type SyncUserMappingsOptions,
  syncUserMappings,
  type UserMappingEntry,
  type UserMappingFailure,
  type UserMappingsReport,
} from './user-mappings.js';
export { type LogFormat, WORKER_USAGE, WORKER_VARIABLES, type WorkerRole } from './worker-config.js';
