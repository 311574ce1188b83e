/**
 * approval-connector-kit: build connectors between source systems and the Approval Service.
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

// First, so that an unsupported Node.js gets a clear error before any dependency fails on it.
import './node-guard.js';

// The wire contract: schemas and the types inferred from them.
export {
  AddUserResult,
  APPROVALS_PAGE_SIZE,
  Approval,
  ApprovalFields,
  ApprovalId,
  ApprovalWrite,
  ConnectorRegistration,
  ConnectorState,
  EncryptedCredentials,
  type Endpoint,
  type EndpointName,
  endpoints,
  GetApprovalsQuery,
  GetUsersQuery,
  MANAGEMENT_BODY_LIMIT_BYTES,
  MAX_APPROVAL_ID_LENGTH,
  MAX_JSON_DEPTH,
  NewUser,
  NewUserMapping,
  PageQuery,
  parseV1ErrorMessage,
  System,
  Task,
  TaskResult,
  TaskResultStatus,
  UiTemplate,
  UiTemplateWrite,
  User,
  UserMapping,
  UserQueryField,
  V1ErrorBody,
  V2ErrorBody,
} from './api/index.js';
// The clients.
export * from './client/index.js';
// The connector.
export * from './connector/index.js';
// The error hierarchy's base and the validation error shared by every part.
export { ApprovalKitError, ValidationError, type ValidationIssue } from './errors.js';
