/**
 * The one options pipeline: every part of the kit validates its options with {@link parseOptions} when the object
 * is built, against a strict zod schema that also applies every default, and gets back one fully defaulted object.
 * The schema helpers here give each kind of option one wording of what it expects.
 * @module
 */
import type { LevelWithSilent, Logger as PinoLogger } from 'pino';
import { z } from 'zod';
import { formatPath, ValidationError, type ValidationIssue } from '../errors.js';

/**
 * Keys the values `node:util`'s `parseArgs` read as they were typed (`--port`, `-h`), so that `parseOptions` names
 * a command-line flag, unknown ones included, the way the user wrote it.
 */
export function asFlags(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name.length === 1 ? `-${name}` : `--${name}`, value]),
  );
}

/**
 * Validates options against a strict schema and returns them with every default applied. A bad option is a
 * {@link ValidationError} with one issue per problem, each in one format that names the option and what was
 * received, ``Expected `poller.concurrency` to be an integer from 1 and up, got `0` (number)``; an unknown key is
 * refused with the nearest known one, ``Unknown option `sync.shedule`; did you mean `sync.schedule`?``.
 *
 * @param subject what is validated, for the error message (`'connector options'`)
 * @param secret options whose values are never shown (`'service.token'`), nor the values of anything under them
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  options: unknown,
  subject: string,
  secret: readonly string[] = [],
): z.output<S> {
  const knownKeys = new Map<unknown, string[]>();
  const result = schema.safeParse(options, {
    reportInput: true,
    error: (issue) => {
      if (issue.code === 'unrecognized_keys' && issue.inst instanceof z.ZodObject) {
        knownKeys.set(issue.input, Object.keys(issue.inst.shape));
      }
      return expectation(issue as z.core.$ZodIssue);
    },
  });
  if (result.success) return result.data;
  const issues = result.error.issues.flatMap((issue) =>
    toOptionIssues(issue, [], { subject, secret, knownKeys }),
  );
  throw new ValidationError(subject, issues);
}

/**
 * A rule across several options (a margin less than a lifetime), checked only once each of them is valid on its own:
 * `schema.check(crossCheck((options, context) => { … context.addIssue({ … }) }))`.
 */
export function crossCheck<T>(rule: (options: T, context: z.RefinementCtx<T>) => void) {
  return z.superRefine(rule, { when: ({ issues }) => issues.length === 0 });
}

/**
 * Options with every default applied, derived from the interface that documents them, so that each option is
 * documented once and its JSDoc shows on both: every option is there and never `undefined`, but those in
 * `NoDefault`, which stay as they were given; an option that is an object of options of its own is resolved as
 * `Nested` says.
 */
export type Resolved<
  Settings extends object,
  NoDefault extends keyof Settings = never,
  Nested extends { [K in keyof Settings]?: unknown } = Record<never, never>,
> = OneObject<
  {
    [K in keyof Settings as K extends NoDefault ? never : K]-?: K extends keyof Nested
      ? Nested[K]
      : Exclude<Settings[K], undefined>;
  } & Pick<Settings, NoDefault>
>;

/** The properties of an intersection as one object type (their JSDoc kept). */
type OneObject<T> = { [K in keyof T]: T[K] };

/**
 * What the strict schema of the options documented on `Settings` is made of: a schema for each of them and for no
 * other, taking what the interface allows and giving what `Output` holds. Written `z.strictObject({ … } satisfies
 * OptionsShape<XOptions, ResolvedXOptions>)`, an option added to the interface and not to the schema, or the other
 * way round, does not compile.
 */
export type OptionsShape<Settings extends object, Output extends { [K in keyof Settings]?: unknown }> = {
  [K in keyof Settings]-?: z.ZodType<Output[K], Settings[K]>;
};

/** An integer in a range, expected as `an integer from <min> and up` or `an integer from <min> to <max>`. */
export function integer(min: number, max?: number): z.ZodNumber {
  const error = max === undefined ? `an integer from ${min} and up` : `an integer from ${min} to ${max}`;
  const from = z.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? from : from.max(max, { error });
}

/** A TCP port: `0` asks the system for a free one. */
export function port(): z.ZodNumber {
  return integer(0, 65535);
}

/** A TCP port written as text, as a flag or an environment variable gives it: digits only, then {@link port}. */
export function portText() {
  const error = 'an integer from 0 to 65535';
  return z.string({ error }).regex(/^\d+$/, { error }).transform(Number).pipe(port());
}

/** An interface to listen on: a host name or an address. */
export function host(): z.ZodString {
  return z.string({ error: 'a host name or address' }).min(1, { error: 'a host name or address' });
}

/** A pino logger, recognised by its methods. */
export function pinoLogger(): z.ZodType<PinoLogger, PinoLogger> {
  return withMethods<PinoLogger>('a pino logger', 'child', 'info');
}

/** A pino level, `silent` included. */
export function logLevel(): z.ZodEnum<{ [L in LevelWithSilent]: L }> {
  return z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] satisfies LevelWithSilent[]);
}

/** A non-empty string. */
export function nonEmptyString(): z.ZodString {
  return z.string({ error: 'a non-empty string' }).min(1, { error: 'a non-empty string' });
}

/** A function, kept as given (zod's own `z.function()` would wrap it). */
export function func<F extends (...args: never[]) => unknown>(): z.ZodType<F, F> {
  return z.custom<F>((value) => typeof value === 'function', { error: 'a function' });
}

/** An object that has these methods (a logger, a key store, a dispatcher), kept as given. */
export function withMethods<T extends object>(
  expected: string,
  ...methods: readonly string[]
): z.ZodType<T, T> {
  return z.custom<T>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
    { error: expected },
  );
}

interface Context {
  subject: string;
  secret: readonly string[];
  knownKeys: ReadonlyMap<unknown, string[]>;
}

type Path = ReadonlyArray<string | number>;

function toOptionIssues(issue: z.core.$ZodIssue, prefix: Path, context: Context): ValidationIssue[] {
  const path = [...prefix, ...issue.path.filter((part): part is string | number => typeof part !== 'symbol')];
  if (issue.code === 'unrecognized_keys') {
    const known = context.knownKeys.get(issue.input) ?? [];
    return issue.keys.map((key) => {
      const keyPath = [...path, key];
      return {
        path: keyPath,
        message: `Unknown option \`${formatPath(keyPath)}\`; ${hint(key, known, path)}`,
        code: issue.code,
      };
    });
  }
  // A union whose input got past the type check of exactly one of its forms (an object for `false | {…}`) is that
  // form's problem: report it, not the union's.
  if (issue.code === 'invalid_union') {
    const reached = issue.errors.filter((branch) =>
      branch.some((inner) => inner.path.length > 0 || inner.code === 'unrecognized_keys'),
    );
    if (reached.length === 1) return reached[0]!.flatMap((inner) => toOptionIssues(inner, path, context));
  }
  const name = path.length === 0 ? context.subject : `\`${formatPath(path)}\``;
  const shown = formatPath(path);
  const hidden = context.secret.some((secret) => shown === secret || shown.startsWith(`${secret}.`));
  return [
    {
      path,
      message: `Expected ${name} to be ${issue.message}, got ${received(issue.input, hidden)}`,
      code: issue.code,
    },
  ];
}

function hint(key: string, all: readonly string[], parent: Path): string {
  const named = (option: string) => `\`${formatPath([...parent, option])}\``;
  // A command's flags and its environment variables are checked together: a flag is told of the flags alone.
  const known = key.startsWith('--') ? all.filter((option) => option.startsWith('--')) : all;
  const nearest = nearestKey(key, known);
  if (nearest !== undefined) return `did you mean ${named(nearest)}?`;
  return known.length === 0 ? 'none is known here' : `the known ones are ${known.map(named).join(', ')}`;
}

/** The known key closest to a misspelt one, when it is close enough to be what was meant. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { key: candidate, distance };
  }
  // A third of the longer name may differ: `shedule` is `schedule`, `xyz` is not `host`.
  const allowed = Math.max(1, Math.floor(Math.max(key.length, best?.key.length ?? 0) / 3));
  return best !== undefined && best.distance <= allowed ? best.key : undefined;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (`timoeutMs`). */
/**
 * The variable set in `env` whose name is a slip of `name` (two edits at most, a swap of two letters included),
 * when `name` itself is not set: what a person meant to set.
 */
export function misspeltVariable(
  name: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (env[name] !== undefined) return undefined;
  return Object.keys(env).find(
    (candidate) => candidate !== name && env[candidate] !== undefined && editDistance(candidate, name) <= 2,
  );
}

function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i]!;
      const previous = rows[i - 1]!;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
      }
    }
  }
  return rows[a.length]![b.length]!;
}

/** What an option was expected to be, in words, for the schemas that do not say it themselves. */
function expectation(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'int' ? 'an integer' : withArticle(issue.expected);
    case 'too_small':
    case 'too_big':
      return bound(issue);
    case 'invalid_value': {
      const values = issue.values.map((value) => `\`${typeof value === 'string' ? value : show(value)}\``);
      return values.length === 1 ? values[0]! : `one of ${values.join(', ')}`;
    }
    case 'invalid_format':
      return issue.format === 'regex' && 'pattern' in issue
        ? `a string matching ${String(issue.pattern)}`
        : `a valid ${issue.format}`;
    case 'not_multiple_of':
      return `a multiple of ${String(issue.divisor)}`;
    case 'invalid_union':
      return 'one of the forms it takes';
    default:
      return 'valid';
  }
}

function bound(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const limit = Number(small ? issue.minimum : issue.maximum);
  if (issue.origin === 'string') {
    if (small && limit === 1) return 'a non-empty string';
    return `a string of ${small ? 'at least' : 'at most'} ${limit} characters`;
  }
  if (issue.origin === 'array' || issue.origin === 'set') {
    return `a list of ${small ? 'at least' : 'at most'} ${limit} items`;
  }
  if (issue.inclusive === false) return `a number ${small ? 'above' : 'below'} ${limit}`;
  return small ? `a number from ${limit} and up` : `a number up to ${limit}`;
}

function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}

const SHOWN_LENGTH = 80;

/** The value received, p-queue style: ``` `0` (number)```; a secret's is never shown, only its type. */
function received(value: unknown, hidden: boolean): string {
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (hidden) return `${withArticle(type)} (not shown: it is secret)`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      return `an instance of ${(value.constructor as { name?: string } | undefined)?.name || 'a class'}`;
    }
  }
  return `\`${show(value)}\` (${type})`;
}

function show(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'symbol')
    return String(value);
  if (value === undefined) return 'undefined';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > SHOWN_LENGTH ? `${text.slice(0, SHOWN_LENGTH - 1)}…` : text;
}
