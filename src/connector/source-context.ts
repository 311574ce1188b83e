/**
 * What the source's methods, and the push path's, are given besides their arguments.
 * @module
 */
import type { Logger } from './logger.js';
import type { StateAccess } from './state.js';

/** What a source method receives besides its arguments. */
export interface SourceContext<AppState extends object = Record<string, unknown>> {
  /** Aborted when the worker stops; pass it to the source's HTTP calls. */
  readonly signal: AbortSignal;
  /** A child logger bound to the run (`component: 'sync'`, `mode`). */
  readonly logger: Logger;
  /** The author's own part of connector state. */
  readonly state: StateAccess<AppState>;
}
