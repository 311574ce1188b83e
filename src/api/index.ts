/**
 * The wire contract of the Approval Service: zod schemas for every resource, request and answer of the 18 endpoints,
 * with the TypeScript types inferred from them.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { Approval } from 'approval-connector-kit/client';
 *
 * const approval = Approval.parse(json); // throws on a missing required field; unknown fields pass through
 * ```
 * @module
 */

export { fromBase64, isPublicKey, openCredentials, sealCredentials, toBase64 } from './credentials.js';
export { buildPath, type Endpoint, type EndpointName, endpoints, type HttpMethod } from './endpoints.js';
export { parseV1ErrorMessage, V1ErrorBody, v1ErrorMessage } from './errors.js';
export {
  APPROVALS_PAGE_SIZE,
  Approval,
  ApprovalFields,
  ApprovalId,
  ApprovalWrite,
  ConnectorRegistration,
  ConnectorState,
  EncryptedCredentials,
  GetApprovalsQuery,
  isSuccessStatus,
  isTask,
  MAX_APPROVAL_ID_LENGTH,
  SuccessStatus,
  successEnvelope,
  Task,
  TaskResult,
  TaskResultStatus,
  UiTemplate,
  UiTemplateWrite,
  V2ErrorBody,
} from './integration.js';
export {
  AddUserResult,
  AddUserResultWire,
  DEFAULT_PAGE_LIMIT,
  GetUsersQuery,
  MANAGEMENT_BODY_LIMIT_BYTES,
  NewUser,
  NewUserMapping,
  PageQuery,
  System,
  User,
  UserMapping,
  UserQueryField,
} from './management.js';
export {
  DateTime,
  DateTimeInput,
  isDateTimeInputString,
  JsonObject,
  JsonObjectInput,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  parseOrThrow,
  Uuid,
} from './primitives.js';
