/**
 * What the kit's commands, test helpers and conformance kit use of the runtime beyond its public face: the worker's
 * configuration as the command line gives it, and its usage; the sync cursor saved in connector state, as a worker
 * reads it, and the order of cursors. Not exported from any entry of the package.
 * @module
 */

export { WORKER_COMMAND_LINE, WORKER_USAGE } from './process/index.js';
export { compareKeys, keyOfCursor, savedCursorOf } from './sync/index.js';
