/**
 * What the kit's commands and test helpers use of the runtime beyond its public face: the worker's configuration
 * as the command line and environment give it, and its logger. Not exported from any entry of the package.
 * @module
 */

export { resolveConnectorOptions } from './connector-options.js';
export { createWorkerLogger } from './run-worker.js';
export {
  type LogFormat,
  loadWorkerConfig,
  WORKER_COMMAND_LINE,
  WORKER_USAGE,
  WORKER_VARIABLES,
  type WorkerConfig,
} from './worker-config.js';
