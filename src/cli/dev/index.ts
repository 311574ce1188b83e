/**
 * The local loop of `connector dev`, for that command and for whatever else runs connectors against a reference
 * backend of its own while a developer watches: the backend with a development seed and its banner, each
 * connector's worker in a child process, rebuilt and restarted on every change, and a status line per connector.
 *
 * @example
 * <!-- example: typecheck, because it runs until the process is signalled -->
 * ```ts
 * import { onShutdownSignal } from '../../internal/signals.js';
 * import { startDev } from './index.js';
 *
 * const session = await startDev({
 *   connectors: [
 *     { name: 'jira', project: 'examples/jira-connector' },
 *     { name: 'sap', project: 'examples/sap-connector' },
 *   ],
 * });
 * await onShutdownSignal();
 * await session.close();
 * ```
 * @module
 */
export { backendBanner, type ConnectorTenant } from './backend.js';
export { DevOutput, type DevStream } from './output.js';
export {
  type DevConnector,
  type DevOptions,
  type DevSession,
  type DevSessionConnector,
  startDev,
} from './session.js';
export { type ConnectorStatus, RateWindow, renderStatusLine } from './status.js';
