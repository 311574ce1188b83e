/**
 * The process around a worker: `runConnector`, which runs one until a shutdown signal, and `runWorker`, which also
 * reads its configuration (`worker-config.ts`: file, environment, command line) and makes its logger. See
 * `docs/worker.md`.
 * @module
 */

export { type RunConnectorOptions, runConnector, type SignalSource } from './run.js';
export { type ConnectorFactory, type RunWorkerOptions, runWorker, type WorkerContext } from './run-worker.js';
export { WORKER_COMMAND_LINE, WORKER_USAGE, type WorkerRole } from './worker-config.js';
