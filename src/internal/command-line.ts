/**
 * The one command-line reader of the kit's commands (`connector backend`, `dev`, `keys`, `create`, `verify`, a
 * worker's flags) and of `npm start`: `node:util`'s `parseArgs` reads the words, and the options pipeline checks them together with
 * the environment variables the command reads, so that a flag and a variable are refused alike, each named as the
 * user wrote it, every problem in one message.
 * @module
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { WORKER_EXIT_CODES } from './exit-codes.js';
import { asFlags, parseOptions } from './options.js';

/**
 * A flag: its value's type as `parseArgs` reads it, a one-letter alias, whether it may be given more than once (its
 * values are then a list, in their order), and the schema that checks it.
 */
export interface FlagSpec<S extends z.ZodType = z.ZodType> {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  schema: S;
}

/** What a command reads from its command line and its environment. */
export interface CommandLineSpec<
  F extends Record<string, FlagSpec>,
  A extends Record<string, z.ZodType>,
  V extends Record<string, z.ZodType>,
> {
  /** What is checked, for the message: `'options of connector backend'`. */
  subject: string;
  /** The text `--help` prints, and a refusal ends with. */
  usage: string;
  /** The flags by their long name, without the dashes; `-h, --help` is every command's. */
  flags: F;
  /** The words that are no flag, in their order (`module`, `folder`); an extra one is refused. */
  arguments?: A;
  /** What the refusal of an extra word tells the user to do instead. @default 'every option is a --flag' */
  extraArgument?: string;
  /** The environment variables the command reads; an empty one is an unset one. */
  variables?: V;
  /** Variables whose values are never shown. */
  secret?: readonly string[];
}

export type CommandLineOptions<F extends Record<string, FlagSpec>, A, V> = {
  [K in keyof F & string as `--${K}`]: z.output<F[K]['schema']>;
} & { '--help': boolean } & { [K in keyof A]: A[K] extends z.ZodType ? z.output<A[K]> : never } & {
  [K in keyof V]: V[K] extends z.ZodType ? z.output<V[K]> : never;
};

/** A command's command line, declared once: its flags, its arguments, its variables and its usage. */
export class CommandLine<
  F extends Record<string, FlagSpec>,
  A extends Record<string, z.ZodType> = Record<never, never>,
  V extends Record<string, z.ZodType> = Record<never, never>,
> {
  readonly usage: string;
  readonly #spec: CommandLineSpec<F, A, V>;
  readonly #words: z.ZodObject;
  readonly #variables: z.ZodObject;

  constructor(spec: CommandLineSpec<F, A, V>) {
    this.#spec = spec;
    this.usage = spec.usage;
    this.#words = z.strictObject({
      ...spec.arguments,
      ...Object.fromEntries(Object.entries(spec.flags).map(([name, flag]) => [`--${name}`, flag.schema])),
      '--help': z.boolean().default(false),
    });
    this.#variables = z.strictObject({ ...spec.variables });
  }

  /** Its flags, by their names without the dashes: whether each takes a value (`string`) or is one (`boolean`). */
  get flagTypes(): Record<string, 'string' | 'boolean'> {
    return Object.fromEntries(Object.entries(this.#spec.flags).map(([name, flag]) => [name, flag.type]));
  }

  /**
   * The options the words and the environment give, every default applied; `'help'` for `--help`, whatever else
   * the words and the variables hold. Every problem of the words and the variables is one {@link ValidationError}.
   */
  parse(
    argv: readonly string[],
    env: Readonly<Record<string, string | undefined>> = {},
  ): CommandLineOptions<F, A, V> | 'help' {
    if (this.scan(argv).help) return 'help';
    const issues: ValidationIssue[] = [];
    const words = collectIssues(issues, () => this.#parseWords(argv));
    const variables = collectIssues(issues, () =>
      parseOptions(
        this.#variables,
        readVariables(env, Object.keys(this.#spec.variables ?? {})),
        this.#spec.subject,
        this.#spec.secret,
      ),
    );
    if (issues.length > 0) throw new ValidationError(this.#spec.subject, issues);
    return { ...words, ...variables } as CommandLineOptions<F, A, V>;
  }

  /** A refusal of this command line, for what its schemas cannot say: ``refuse('Expected a subcommand: generate')``. */
  refuse(message: string): ValidationError {
    return new ValidationError(this.#spec.subject, [{ code: 'custom', path: [], message }]);
  }

  /**
   * The words as `parseArgs` reads them, unchecked: the flags' values, whether `--help` is asked, and the words that
   * are no flag nor a flag's value, with their index in `argv`. A word after an unknown flag is that flag's value
   * (`--prot 80`), not an argument of its own.
   */
  scan(argv: readonly string[]): {
    values: Record<string, unknown>;
    help: boolean;
    words: Array<{ value: string; index: number }>;
  } {
    const { flags } = this.#spec;
    const { values, tokens } = parseArgs({
      args: [...argv],
      options: {
        ...Object.fromEntries(
          Object.entries(flags).map(([name, { type, short, multiple }]) => [
            name,
            {
              type,
              ...(short === undefined ? {} : { short }),
              ...(multiple === undefined ? {} : { multiple }),
            },
          ]),
        ),
        help: { type: 'boolean', short: 'h' },
      },
      // Unknown flags reach the options' check, which names the nearest known one.
      strict: false,
      allowPositionals: true,
      tokens: true,
    });
    const known = new Set(['help', ...Object.keys(flags)]);
    const words = tokens.flatMap((token, index) => {
      if (token.kind !== 'positional') return [];
      const before = tokens[index - 1];
      const valueOfUnknown =
        before?.kind === 'option' && !known.has(before.name) && before.inlineValue === undefined;
      return valueOfUnknown ? [] : [{ value: token.value, index: token.index }];
    });
    return { values, help: values.help === true, words };
  }

  #parseWords(argv: readonly string[]): z.output<z.ZodObject> {
    const { arguments: names = {}, extraArgument = 'every option is a --flag' } = this.#spec;
    const scanned = this.scan(argv);
    const words = scanned.words.map((word) => word.value);
    const values = scanned.values;
    const argumentNames = Object.keys(names);
    const given = Object.fromEntries(argumentNames.map((name, index) => [name, words[index]]));
    const issues: ValidationIssue[] = words.slice(argumentNames.length).map((word) => ({
      code: 'custom',
      path: [],
      message: `Unexpected argument \`${word}\`: ${extraArgument}`,
    }));
    const parsed = collectIssues(issues, () =>
      parseOptions(this.#words, { ...asFlags(values), ...given }, this.#spec.subject),
    );
    if (issues.length > 0 || parsed === undefined) throw new ValidationError(this.#spec.subject, issues);
    return parsed;
  }
}

/** Where a command reads its environment and prints; the process's own by default, stand-ins in tests. */
export interface CommandIo {
  env: Readonly<Record<string, string | undefined>>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** A command line as {@link readCommandLine} reads it: a {@link CommandLine}, or a worker's configuration. */
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
 * for a refusal, the usage and then its message (one line, the last) on stderr, refused. `check` takes the options further (a
 * project's name, a subcommand); a `ValidationError` it throws, `commandLine.refuse(…)`, is a refusal too. Every
 * command reads its command line with this, and a worker its configuration, so that they all refuse alike.
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
      return WORKER_EXIT_CODES.stopped;
    }
    for (const line of flagsNpmKept(commandLine.flagTypes ?? {}, argv, io.env)) io.stderr.write(`${line}\n`);
    return check(options);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    // The usage first and the problem last: on a terminal, the line to read is the one left above the prompt.
    io.stderr.write(`${commandLine.usage}\n\n${error.message}\n`);
    return WORKER_EXIT_CODES.refused;
  }
}

/**
 * Runs a check and answers what it gives; a {@link ValidationError} it throws adds its issues to `issues` instead,
 * so that several checks are reported in one message.
 */
export function collectIssues<T>(issues: ValidationIssue[], check: () => T): T | undefined {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    issues.push(...error.issues);
    return undefined;
  }
}

/** The variables of these names, an empty one (a shell's `VAR=`) read as unset. */
export function readVariables(
  env: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, env[name] === '' ? undefined : env[name]]));
}

const LINE_WIDTH = 116;

/**
 * Rows of a usage text, `  left  right`, the right column aligned and wrapped at word boundaries so that no line is
 * wider than the usage's other lines.
 */
export function usageColumns(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([left]) => left.length));
  const indent = ' '.repeat(width + 4);
  return rows
    .map(([left, right]) => {
      const lines = [`  ${left.padEnd(width)} `];
      for (const word of right.split(' ')) {
        const line = lines.at(-1)!;
        if (line.length + 1 + word.length > LINE_WIDTH && line.trim() !== left)
          lines.push(`${indent}${word}`);
        else lines[lines.length - 1] = `${line} ${word}`;
      }
      return lines.join('\n');
    })
    .join('\n');
}
