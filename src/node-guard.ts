/**
 * Refuses an unsupported Node.js with a clear {@link UnsupportedNodeError} (code `unsupported_node`) before any
 * dependency loads and fails in its own way (on Node 20, undici crashes and `node:sqlite` does not exist).
 *
 * Every entry point imports this module first, for its side effect: ES modules run in the order they are imported.
 * The build keeps that true (see tsup.config.ts), and package.json lists `dist/node-guard.js` under `sideEffects` so
 * that a bundler building a connector keeps it too. One case stays out of reach: an ES module bundle that leaves
 * the kit's dependencies external hoists their imports above all bundled code, this check included.
 * @module
 */
import { UnsupportedNodeError } from './errors.js';
import { unsupportedNodeMessage } from './internal/node-version.js';

const problem = unsupportedNodeMessage();
if (problem !== undefined) throw new UnsupportedNodeError(problem);
