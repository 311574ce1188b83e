/**
 * What the kit's other parts use of the reference backend beyond its public face: the schema of its options, so
 * that the `connector backend` and `connector dev` commands check theirs (the admin token among them) by the same
 * rules. Not exported from any entry of the package.
 * @module
 */

export { backendOptionsSchema } from './options.js';
