/**
 * What the kit's other parts use of the clients beyond their public face: the schema of the client options (which
 * the worker's options and configuration embed), the options that hold secrets, and how options resolve to their
 * defaults; the path by which the worker's sync sends a batch of approvals it has already serialized; and
 * `syncUserMappings`, a helper over the `ManagementClient` that the worker's entry exports. Not exported from any
 * entry of the package.
 * @module
 */

export { CLIENT_SECRET_OPTIONS, type CompiledClientOptions, clientOptionsSchema } from './options.js';
export { sendSerializedApprovals } from './serialized-approvals.js';
export {
  type SyncUserMappingsOptions,
  syncUserMappings,
  type UserMappingEntry,
  type UserMappingFailure,
  type UserMappingsReport,
} from './user-mappings.js';
