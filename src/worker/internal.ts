/**
 * What the kit's commands and test helpers use of the runtime beyond its public face: the worker's configuration
 * as the command line gives it, and its usage. Not exported from any entry of the package.
 * @module
 */

export { WORKER_COMMAND_LINE, WORKER_USAGE } from './process/index.js';
