/**
 * The reference backend: the whole Approval Service (Management API v1 and Integration API v2) on an embedded
 * SQLite store, with an admin API, fault injection, seeding and an OpenAPI document. Start one per test file.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { startReferenceBackend } from 'approval-connector-kit/backend';
 *
 * const backend = await startReferenceBackend();
 * const tenant = backend.createTenant();
 * backend.faults.inject({ method: 'PUT', path: '/v2/rawapprovals', fault: { type: 'status', status: 429 } });
 * // ... run the connector against backend.url with tenant.connectorToken
 * await backend.close();
 * ```
 * @module
 */

// First, so that an unsupported Node.js gets a clear error before any dependency fails on it.
import '../node-guard.js';

export { PortInUseError } from '../errors.js';
export type { NewTenant, Tenant } from './admin/operations.js';
export { ReferenceBackend, startReferenceBackend } from './backend.js';
export type { DemoSignIn } from './console/index.js';
export { type Collection, ServiceError, type ServiceErrorKind } from './errors.js';
export type { FaultEvent, FaultInjector, FaultListener } from './faults/injector.js';
export { FaultAction, type FaultInfo, FaultRule, type FaultRuleInput } from './faults/schema.js';
export { buildOpenApiDocument, type OpenApiOptions } from './openapi/document.js';
export type { ReferenceBackendOptions } from './options.js';
export { parseSeed, readSeedFile } from './seed/load.js';
export {
  Seed,
  SeedConsoleSignIn,
  type SeedInput,
  SeedOrganization,
  SeedSystem,
  SeedUser,
  SeedUserMapping,
} from './seed/schema.js';
export type {
  ApprovalRecord,
  ConnectorRecord,
  ConnectorStateRecord,
  NewOrganization,
  NewSystem,
  NewTask,
  NewUserInput,
  Organization,
  StoreChange,
  StoreChangeListener,
  SystemRecord,
  TaskEvent,
  TaskInfo,
  TaskStatus,
  UserRecord,
} from './store/index.js';
