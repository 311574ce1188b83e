/**
 * The connector: the `Connector` base class the author extends, with `task()`, `incremental()` and `snapshot()` to
 * declare it; the `ConnectorWorker` that runs it (the sync loop, the task poller, keys, failure mapping, logs,
 * metrics and the operations endpoints); and `runConnector` to run one as a long-lived worker.
 *
 * @example
 * ```ts
 * import { Connector, incremental, runConnector, task } from 'approval-connector-kit';
 *
 * class MyConnector extends Connector {
 *   readonly tasks = { approve: task({ input: Approve, run: ({ approval }) => source.approve(approval.id) }) };
 *   readonly source = incremental({ changes: ({ since }) => source.changedSince(since) });
 * }
 * process.exitCode = await runConnector(new MyConnector(), { service: { baseUrl, token } });
 * ```
 * @module
 */

export {
  type ConnectorOptions,
  type PollerOptions,
  SHUTDOWN_MARGIN_MS,
  type ShutdownOptions,
  type SyncOptions,
} from '../worker/connector-options.js';
export {
  ConnectorTokenRejectedError,
  InvalidConnectorError,
  LifecycleError,
  ServiceNotFoundError,
  ShutdownDeadlineError,
  StoppingError,
} from '../worker/errors.js';
export {
  type Credentials,
  CredentialsUnreadableError,
  FileKeyStore,
  generateKeyRingData,
  KeyRing,
  KeyRingData,
  KeyRingInvalidError,
  type KeyRingOptions,
  KeyRingUnavailableError,
  type KeyStore,
  KeyStoreReadOnlyError,
  MemoryKeyStore,
  type NewKeyReason,
  type PublicKeyInfo,
  REDACTED,
  ReadOnlyKeyStore,
  type ReadOnlyKeyStoreSource,
  redactSecrets,
  Secret,
  wrapCredentials,
} from '../worker/keys/index.js';
export {
  ConnectorMetrics,
  type ConnectorMetricsOptions,
  createLogger,
  type HealthReport,
  type KeyEvent,
  type Logger,
  type LoggerOptions,
  OperationsServer,
  OperationsServerClosedError,
  OperationsServerListenError,
  type OperationsServerOptions,
  type ReadinessReport,
  type RenderedMetrics,
  type SyncMode,
  type SyncOutcome,
  type TaskReportFailure,
} from '../worker/operations/index.js';
export { type RunConnectorOptions, runConnector, type SignalSource } from '../worker/run.js';
export {
  type ConnectorFactory,
  type RunWorkerOptions,
  runWorker,
  WORKER_EXIT_CODES,
  type WorkerContext,
} from '../worker/run-worker.js';
export type { Schedule } from '../worker/schedule.js';
export type { StateAccess, SyncCursor } from '../worker/state.js';
export type { RunReport } from '../worker/sync/runs.js';
export {
  type SyncUserMappingsOptions,
  syncUserMappings,
  type UserMappingEntry,
  type UserMappingFailure,
  type UserMappingsReport,
} from '../worker/user-mappings.js';
export { type AppStateOf, ConnectorWorker, type LifecycleState } from '../worker/worker.js';
export { type LogFormat, WORKER_USAGE, WORKER_VARIABLES, type WorkerRole } from '../worker/worker-config.js';
export {
  Connector,
  type IncrementalDeclaration,
  incremental,
  type SnapshotDeclaration,
  snapshot,
  task,
} from './connector.js';
export {
  AuthenticationError,
  type ClassifyFailureOptions,
  classifyFailure,
  type FailureClassification,
  type FailureMeta,
  ServiceUnavailableError,
  SystemError,
  TaskDataInvalidError,
} from './failures.js';
export type {
  ChangeWindow,
  ConnectorSource,
  IncrementalSource,
  SnapshotSource,
  SourceApproval,
  SourceContext,
} from './source.js';
export type {
  PrecheckVerdict,
  TaskContext,
  TaskDeclaration,
  TaskDeclarations,
  TaskOutcome,
} from './task.js';
