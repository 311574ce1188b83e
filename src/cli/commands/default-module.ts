/**
 * The module `connector run` loads when it is given none, which `connector dev` runs too: in a module of its own, so
 * that `connector dev` (and `connector backend` through it) need not load `connector run`, and with it the worker.
 * @module
 */

/** The module `connector run` loads when it is given none: the build of the project's `src/connector.ts`. */
export const DEFAULT_MODULE = 'dist/connector.js';
