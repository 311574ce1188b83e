/**
 * What a connector runs on: secrets that do not print, a logger that redacts them, the key ring that opens a task's
 * credentials, and the rule that turns a handler's failure into a task result.
 *
 * @example
 * ```ts
 * import { AuthenticationFailure, FileKeyStore, KeyRing, classifyFailure } from 'approval-connector-kit';
 *
 * const ring = await KeyRing.load(new FileKeyStore('.connector/keys.json'));
 * const credentials = await ring.open(task.data.credentials);
 * try {
 *   await sap.approve(task.data.approval, credentials.password?.reveal());
 * } catch (error) {
 *   const result = classifyFailure(error, { secrets: Object.values(credentials) });
 *   // { status: 'authenticationError', meta: { code: 'HTTP_401', message: '…' } }
 * }
 * ```
 * @module
 */

export { Connector, LifecycleError, type LifecycleState, type SyncKind } from './connector.js';
export {
  type ConnectorOptions,
  SHUTDOWN_MARGIN_MS,
  type SyncOptions,
  type TaskOptions,
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
  type PublicKeyInfo,
} from './keys.js';
export { createLogger, type Logger, type LoggerOptions } from './logger.js';
export {
  ConnectorMetrics,
  type ConnectorMetricsOptions,
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
