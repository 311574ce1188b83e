/**
 * approval-connector-kit: build connectors between source systems and the Approval Service.
 *
 * @example
 * ```ts
 * import { IntegrationClient } from 'approval-connector-kit';
 *
 * const client = new IntegrationClient({ baseUrl: 'https://approvals.example.com', token: process.env.CONNECTOR_TOKEN });
 * await client.putApprovals([{ id: 'PO-1', schemaId: 'purchase-order', approver: 'u-7', resolved: false }]);
 * ```
 * @module
 */
export * from './api/index.js';
export * from './client/index.js';
export * from './connector/index.js';
export { ApprovalKitError, formatIssues, ValidationError, type ValidationIssue } from './errors.js';
