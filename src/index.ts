/**
 * approval-connector-kit: build connectors between source systems and the Approval Service.
 *
 * This entry holds what a connector's own code writes: the `Connector` class and what declares it, the contexts its
 * code is given, the failures it throws, and `runWorker` to run it. Everything else sits behind a subpath:
 * `approval-connector-kit/client` (the typed clients and wire types), `/worker` (embedding a `ConnectorWorker`, its
 * options, keys and operations), `/testing` (a test harness), `/backend` (the reference backend).
 *
 * @example
 * <!-- example: typecheck, because it runs until the process is signalled -->
 * ```ts
 * import { Connector, incremental, runWorker, task } from 'approval-connector-kit';
 *
 * class MyConnector extends Connector {
 *   readonly tasks = { approve: task({ input: Approve, run: ({ approval }) => source.approve(approval.id) }) };
 *   readonly source = incremental({ changes: ({ since }) => source.changedSince(since) });
 * }
 * await runWorker(() => new MyConnector());
 * ```
 * @module
 */

// First, so that an unsupported Node.js gets a clear error before any dependency fails on it.
import './node-guard.js';

// The author's contract: the connector, its declarations, the contexts its code is given, its failures.
export {
  AuthenticationError,
  type ChangeWindow,
  type ClassifyFailureOptions,
  Connector,
  type ConnectorSource,
  type Credentials,
  CredentialsUnreadableError,
  classifyFailure,
  type FailureClassification,
  type FailureMeta,
  type IncrementalDeclaration,
  type IncrementalSource,
  incremental,
  type Logger,
  type PrecheckVerdict,
  type PushContext,
  type PushDeclaration,
  type PushDelivery,
  push,
  Secret,
  ServiceUnavailableError,
  type SnapshotDeclaration,
  type SnapshotSource,
  type SourceApproval,
  type SourceContext,
  type StateAccess,
  StoppingError,
  type SyncCursor,
  SystemError,
  snapshot,
  type TaskAbortReason,
  type TaskContext,
  TaskDataInvalidError,
  TaskDeadlineError,
  type TaskDeclaration,
  type TaskDeclarations,
  type TaskOutcome,
  type TaskSignal,
  task,
  verifyHmacSignature,
  type WebhookLifecycle,
  type WebhookRegistration,
  type WebhookTarget,
} from './connector/index.js';
// The error hierarchy every part shares, and the union that narrows by `code`.
export { ApprovalKitError, type ErrorCode, ValidationError, type ValidationIssue } from './errors.js';
export { isKitError, type KitError } from './kit-error.js';
// Running it: one call for a connector's `main.ts`.
export {
  type ConnectorFactory,
  InvalidConnectorError,
  type RunWorkerOptions,
  runWorker,
  type WorkerContext,
  type WorkerRole,
} from './worker/index.js';
