/**
 * What runs a connector: the `ConnectorWorker` (registration and keys, the sync loop, the task poller, UI
 * templates, connector state, a bounded shutdown, the push ingress), `runWorker` and `runConnector` to run one as a
 * process, its options, its keys and key stores, and its operations side (logger, metrics, `/healthz`, `/readyz`,
 * `/metrics`).
 * Most connectors need only `runWorker` from the root entry; this entry is for embedding a worker in a program of
 * one's own. See `docs/worker.md`.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { ConnectorWorker } from 'approval-connector-kit/worker';
 *
 * const worker = new ConnectorWorker(new MyConnector(), { service: { baseUrl, token } });
 * await worker.start();
 * // ...
 * await worker.stop();
 * ```
 * @module
 */

export {
  type SyncUserMappingsOptions,
  syncUserMappings,
  type UserMappingEntry,
  type UserMappingFailure,
  type UserMappingsReport,
} from '../client/internal.js';
export { PortInUseError, UnsupportedNodeError } from '../errors.js';
export { WORKER_EXIT_CODES } from '../internal/exit-codes.js';
export {
  type AppStateOf,
  type ConnectorOptions,
  ConnectorWorker,
  LifecycleError,
  type LifecycleState,
  type PollerOptions,
  SHUTDOWN_MARGIN_MS,
  type ShutdownOptions,
  type SyncOptions,
} from './core/index.js';
export {
  ConnectorTokenRejectedError,
  InvalidConnectorError,
  ServiceNotFoundError,
  ShutdownDeadlineError,
  StoppingError,
} from './errors.js';
export {
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
  ReadOnlyKeyStore,
  type ReadOnlyKeyStoreSource,
} from './keys/index.js';
export {
  ConnectorMetrics,
  type ConnectorMetricsOptions,
  createLogger,
  type HealthReport,
  type KeyEvent,
  type LoggerOptions,
  OperationsServer,
  OperationsServerClosedError,
  OperationsServerListenError,
  type OperationsServerOptions,
  type PushMetrics,
  type PushOutcome,
  type ReadinessReport,
  type RenderedMetrics,
  type SyncMode,
  type SyncOutcome,
  type TaskReportFailure,
  type WebhookCall,
} from './operations/index.js';
export {
  type ConnectorFactory,
  type RunConnectorOptions,
  type RunWorkerOptions,
  runConnector,
  runWorker,
  type SignalSource,
  type WorkerContext,
  type WorkerRole,
} from './process/index.js';
export type {
  PushHealthReport,
  PushOptions,
  PushReport,
  WebhookOptions,
  WebhookReport,
} from './push/index.js';
export type { RunReport, Schedule } from './sync/index.js';
