/**
 * The author's contract: the `Connector` base class a connector extends, `task()`, `incremental()` and `snapshot()`
 * to declare it, `push()` and `verifyHmacSignature()` for a push path beside its source, the contexts its code is
 * given, the failures its handlers throw and how they map to task result statuses, and `Secret`, in which decrypted
 * credentials reach a handler. What runs a connector is in `src/worker/`.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { Connector, incremental, task } from 'approval-connector-kit';
 *
 * class MyConnector extends Connector {
 *   readonly tasks = { approve: task({ input: Approve, run: ({ approval }) => source.approve(approval.id) }) };
 *   readonly source = incremental({ changes: ({ since }) => source.changedSince(since) });
 * }
 * ```
 * @module
 */

export {
  StoppingError,
  type TaskAbortReason,
  TaskDeadlineError,
  type TaskSignal,
} from './abort-reasons.js';
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
  CredentialsUnreadableError,
  classifyFailure,
  type FailureClassification,
  type FailureMeta,
  ServiceUnavailableError,
  SystemError,
  TaskDataInvalidError,
} from './failures.js';
export type { LogFn, Logger } from './logger.js';
export {
  type PushContext,
  type PushDeclaration,
  type PushDelivery,
  push,
  verifyHmacSignature,
  type WebhookLifecycle,
  type WebhookRegistration,
  type WebhookTarget,
} from './push.js';
export { type Credentials, Secret } from './secret.js';
export type {
  ChangeWindow,
  ConnectorSource,
  IncrementalSource,
  SnapshotSource,
  SourceApproval,
} from './source.js';
export type { SourceContext } from './source-context.js';
export type { StateAccess, SyncCursor } from './state.js';
export type { PrecheckVerdict, TaskContext, TaskDeclaration, TaskDeclarations, TaskOutcome } from './task.js';
