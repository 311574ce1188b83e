/**
 * What every `connector` command (and `npm start`) does with its command line before it runs, and with a server
 * that cannot start: one way to answer `--help`, to refuse, and to tell a port in use from a failure.
 * @module
 */
import { PortInUseError, ValidationError } from '../errors.js';
import { EXIT_CODES } from './exit-codes.js';

/** Where a command reads its environment and prints; the process's own by default, stand-ins in tests. */
export interface CommandIo {
  env: Readonly<Record<string, string | undefined>>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** A command line as {@link readCommandLine} reads it: the kit's `CommandLine`. */
export interface CommandLineParser<T> {
  readonly usage: string;
  /** Its flags, by their names without the dashes: whether each takes a value or is one. */
  readonly flagTypes?: Readonly<Record<string, 'string' | 'boolean'>>;
  parse(argv: readonly string[], env: CommandIo['env']): T | 'help';
}

/**
 * The flags of the command that npm kept for itself, as `npm run dev --port 8090` does: npm reads every flag before
 * `--` as its own configuration (`npm_config_port`, `true` for a flag it does not know) and passes the script none
 * of them, only the words that followed (`8090`, which the command then takes for an argument). One line each,
 * naming the command line that gives it to the script. Empty outside an npm script.
 */
export function flagsNpmKept(
  flagTypes: Readonly<Record<string, 'string' | 'boolean'>>,
  argv: readonly string[],
  env: CommandIo['env'],
): string[] {
  const script = env.npm_lifecycle_event;
  if (script === undefined || script === '') return [];
  // The words npm passed on, in order: each flag that takes a value left its value among them.
  const words = argv.filter((argument) => !argument.startsWith('-'));
  return Object.entries(flagTypes).flatMap(([name, type]) => {
    const value = env[`npm_config_${name.replaceAll('-', '_')}`];
    if (value === undefined || value === '' || value === 'false') return [];
    const shown = value !== 'true' ? value : type === 'string' ? words.shift() : undefined;
    const given = type === 'boolean' || shown === undefined ? `--${name}` : `--${name} ${shown}`;
    return [
      `npm kept --${name} for itself (npm reads the flags before \`--\` as its own): run \`npm run ${script} -- ${given}\` to give it to the command`,
    ];
  });
}

const PROCESS_IO: CommandIo = { env: process.env, stdout: process.stdout, stderr: process.stderr };

/**
 * The options a command line gives, or the exit code to end with: for `--help`, the usage printed on stdout, done;
 * for a refusal, its message (one line) and the usage on stderr, refused. `check` takes the options further (a
 * project's name, a subcommand); a `ValidationError` it throws, `commandLine.refuse(…)`, is a refusal too.
 */
export function readCommandLine<T, R = T>(
  commandLine: CommandLineParser<T>,
  argv: readonly string[],
  {
    io = PROCESS_IO,
    check = (options: T) => options as unknown as R,
  }: { io?: CommandIo; check?: (options: T) => R } = {},
): R | number {
  try {
    const options = commandLine.parse(argv, io.env);
    if (options === 'help') {
      io.stdout.write(`${commandLine.usage}\n`);
      return EXIT_CODES.done;
    }
    for (const line of flagsNpmKept(commandLine.flagTypes ?? {}, argv, io.env)) io.stderr.write(`${line}\n`);
    return check(options);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    io.stderr.write(`${error.message}\n\n${commandLine.usage}\n`);
    return EXIT_CODES.refused;
  }
}

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
