/**
 * What the kit's other parts use of the author's contract beyond its public face: parsing what a source yields, the
 * kinds of source, wrapping and redacting secrets. Not exported from any entry of the package.
 * @module
 */

export { REDACTED, redactSecrets, secretPattern, wrapCredentials } from './secret.js';
export { parseSourceApproval, type SourceKind, type SourceOfKind } from './source.js';
export { SyncCursor } from './state.js';
