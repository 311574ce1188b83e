/**
 * What every `connector` command (and `npm start`) does with its command line before it runs, and with a server
 * that cannot start: one way to answer `--help`, to refuse, and to tell a port in use from a failure.
 * @module
 */
import { PortInUseError, ValidationError } from '../errors.js';
import { EXIT_CODES } from './exit-codes.js';

// Where a worker reads its configuration too (`runWorker`), which loads nothing of the commands.
export { type CommandIo, type CommandLineParser, readCommandLine } from '../internal/command-line.js';

/**
 * A server a command starts could not start: prints why, in one line, and answers the exit code. A port in use is
 * named with the flag that changes it, and is a failure; a file or a seed it cannot use is refused.
 */
export function startFailure(
  caught: unknown,
  where: { port: number; host: string; setting: string },
): number {
  const error = PortInUseError.from(caught, where);
  console.error(error instanceof Error ? error.message : String(error));
  return error instanceof ValidationError ? EXIT_CODES.refused : EXIT_CODES.failed;
}
