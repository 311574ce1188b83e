/**
 * The exit codes of a worker process, which every `connector` command answers too: in a module of their own, so that
 * a command that runs no worker does not load the worker (its client, metrics and tracing) for three numbers.
 * @module
 */

/** The exit codes of a worker process. */
export const WORKER_EXIT_CODES = Object.freeze({
  /** Stopped cleanly after SIGTERM or SIGINT (or `--help` answered). */
  stopped: 0,
  /** The connector failed: it could not be built or started, or it did not stop cleanly. */
  failed: 1,
  /** The configuration or the connector was refused: nothing was started. */
  refused: 2,
});
