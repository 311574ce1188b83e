/**
 * The connector's operations side: its pino logger (secrets redacted, one child per component), its Prometheus
 * metrics, and the operations server that answers `/healthz`, `/readyz` and `/metrics`. See `docs/operations.md`.
 *
 * @example
 * <!-- example: typecheck, because it listens on the port of a worker's operations -->
 * ```ts
 * import { ConnectorMetrics, OperationsServer } from './index.js';
 *
 * const metrics = new ConnectorMetrics();
 * const health = () => ({ healthy: true, state: 'running' });
 * const server = new OperationsServer({ port: 9464, health, isReady: () => ({ ready: true }), metrics });
 * const { url } = await server.start();
 * ```
 * @module
 */

export {
  componentLogger,
  createLogger,
  type LoggerOptions,
  lazyChild,
  loggerOptionsSchema,
  type PinoLogger,
  secretScrubbingLogger,
} from './logger.js';
export {
  ConnectorMetrics,
  type ConnectorMetricsOptions,
  type KeyEvent,
  metricsOptionsShape,
  type RenderedMetrics,
  registryIsFree,
  type SyncMode,
  type SyncOutcome,
  type TaskReportFailure,
} from './metrics.js';
export type { PushMetrics, PushOutcome, WebhookCall } from './push-metrics.js';
export {
  type HealthReport,
  OperationsServer,
  OperationsServerClosedError,
  OperationsServerListenError,
  type OperationsServerOptions,
  operationsServerOptionsSchema,
  type ReadinessReport,
} from './server.js';
