// Not from the worker's index, which would load the whole worker (its client, metrics, tracing) into every command.
import { WORKER_EXIT_CODES } from '../internal/exit-codes.js';

/**
 * The exit codes of every `connector` command, those of a worker for all of them, so that a script reads any
 * command's alike: 0 done (or `--help` answered), 1 failed (something it tried did not work), 2 refused (the command
 * line, a variable or a file it was given is wrong: nothing was done).
 */
export const EXIT_CODES = Object.freeze({
  done: WORKER_EXIT_CODES.stopped,
  failed: WORKER_EXIT_CODES.failed,
  refused: WORKER_EXIT_CODES.refused,
});
