/**
 * The kit's pino logger: secrets redacted by path in every line, one child logger per component, the ids of the
 * active span in each line written inside one, and every string of a line bounded.
 * @module
 */
import {
  type Bindings,
  type DestinationStream,
  type LevelWithSilent,
  type Logger as PinoLogger,
  pino,
  stdSerializers,
  symbols,
} from 'pino';
import { z } from 'zod';
import type { Secret } from '../../connector/index.js';
import { REDACTED, redactSecrets, secretPattern } from '../../connector/internal.js';
import { boundedLines, NETWORK_TEXT_LIMIT } from '../../internal/bounded.js';
import {
  logLevel,
  type OptionsShape,
  parseOptions,
  pinoLogger,
  type Resolved,
  withMethods,
} from '../../internal/options.js';
import { activeTraceIds, tracingAvailable } from '../../internal/tracing.js';

export type { Logger as PinoLogger } from 'pino';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /**
   * A pino logger of the application to log through. The kit logs through a child of it that redacts the kit's
   * secret paths and scrubs errors; the application's own `redact` paths do not carry over to that child (pino
   * replaces them), so list any that the kit's lines need in `redact`. A child cannot take pino `hooks`, so the
   * message of `logger.error(error)` is not scrubbed there; log `{ err: error }` with a message of your own.
   * @default a new pino logger writing JSON lines to stdout
   */
  logger?: PinoLogger;
  /**
   * Minimum level logged. Applies to a new logger only; an injected logger keeps its own level.
   * @default 'info'
   */
  level?: LevelWithSilent;
  /**
   * Where a new logger writes. Anything with a `write(line)` method.
   * @default stdout
   */
  destination?: DestinationStream;
  /**
   * More paths to redact, in pino's path syntax, beside {@link SECRET_FIELDS} at every depth up to
   * {@link REDACT_DEPTH}.
   * @default []
   */
  redact?: readonly string[];
}

/** Logger options with every default applied but the logger's and the destination's, which make a new logger. */
export type ResolvedLoggerOptions = Resolved<LoggerOptions, 'logger' | 'destination'>;

/** The schema of {@link LoggerOptions}: checks them and applies every default but the logger's. */
export const loggerOptionsSchema = z.strictObject({
  logger: pinoLogger().optional(),
  level: logLevel().default('info'),
  destination: withMethods<DestinationStream>('a stream with a write() method', 'write').optional(),
  redact: z
    .array(z.string(), { error: 'a list of paths' })
    .readonly()
    .default(() => []),
} satisfies OptionsShape<LoggerOptions, ResolvedLoggerOptions>);

/** Field names whose values are redacted wherever they appear in a log line's object, up to {@link REDACT_DEPTH}. */
export const SECRET_FIELDS: readonly string[] = Object.freeze([
  'authorization',
  'Authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'token',
  'accessToken',
  'refreshToken',
  'apiKey',
  'password',
  'passphrase',
  'secret',
  'clientSecret',
  'secretKey',
  'privateKey',
  'credentials',
]);

/**
 * How deep {@link SECRET_FIELDS} are redacted: from `password` to `a.b.c.d.password`, deep enough for an HTTP
 * client's error logged as `err` (`err.response.config.headers.Authorization`). pino's wildcards match one level
 * each, so every depth is a path of its own.
 */
export const REDACT_DEPTH = 5;

/** Every path the kit's logger redacts. */
export function redactPaths(extra: readonly string[] = []): string[] {
  const paths: string[] = [];
  for (let depth = 0; depth < REDACT_DEPTH; depth++) {
    const prefix = '*.'.repeat(depth);
    for (const field of SECRET_FIELDS) {
      paths.push(
        /^[A-Za-z_$][\w$]*$/.test(field) ? `${prefix}${field}` : `${prefix.slice(0, -1)}["${field}"]`,
      );
    }
  }
  return [...paths, ...extra];
}

/**
 * Creates the kit's logger, or wraps an injected one, so that every secret path is redacted. {@link Secret} values
 * print as `[redacted]` on their own; this covers plain strings under a known name.
 *
 * @example
 * <!-- example: typecheck, because it writes to standard output -->
 * ```ts
 * import { componentLogger, createLogger } from './logger.js';
 *
 * const logger = createLogger({ level: 'debug' });
 * const sync = componentLogger(logger, 'sync');
 * sync.info({ token }, 'pushed'); // {"component":"sync","token":"[redacted]",...}
 * ```
 */
export function createLogger(options: LoggerOptions = {}): PinoLogger {
  const {
    logger,
    level,
    destination,
    redact: extra,
  } = parseOptions(loggerOptionsSchema, options, 'logger options');
  const redact = { paths: redactPaths(extra), censor: REDACTED };
  const serializers = { err: serializeError };
  if (logger !== undefined) return withTraceIds(boundingLines(logger.child({}, { redact, serializers })));
  const settings = {
    level,
    redact,
    serializers,
    hooks: { logMethod: scrubMessage, streamWrite: boundLine },
    ...(tracingAvailable ? { mixin: traceFields } : {}),
  };
  return destination === undefined ? pino(settings) : pino(settings, destination);
}

// pino publishes its symbols for integrations that change what a child cannot be given (hooks, a mixin).
type Internals = Record<symbol, unknown>;

/** An injected logger's child, whose lines carry the active span's ids besides what the application's mixin adds. */
function withTraceIds(child: PinoLogger): PinoLogger {
  if (!tracingAvailable) return child;
  const holder = child as unknown as Internals;
  const own = holder[symbols.mixinSym] as ((...args: unknown[]) => object) | undefined;
  holder[symbols.mixinSym] =
    own === undefined
      ? traceFields
      : (...args: unknown[]) => ({ ...traceFields(), ...own.apply(child, args) });
  return child;
}

/**
 * The fields of a line written inside a span: `trace_id`, `span_id` and `trace_flags`, as OpenTelemetry's own pino
 * instrumentation names them. A new object each time: pino merges the line's fields into it.
 */
function traceFields(): object {
  return activeTraceIds() ?? {};
}

/** An injected logger's child whose lines are bounded ({@link boundLine}) before the application's hook sees them. */
function boundingLines(child: PinoLogger): PinoLogger {
  const holder = child as unknown as Internals;
  const hooks = (holder[symbols.hooksSym] ?? {}) as { streamWrite?: (line: string) => string };
  const write = hooks.streamWrite;
  holder[symbols.hooksSym] = {
    ...hooks,
    streamWrite: write === undefined ? boundLine : (line: string) => write(boundLine(line)),
  };
  return child;
}

/** A line under this length holds no string long enough to bound, and is written as it is, unparsed. */
const SHORT_LINE = 2 * NETWORK_TEXT_LIMIT;

/**
 * A log line with every line of text of each of its strings bounded (`boundedLines`): what the service, a source or
 * a client sends (a task id of 20,000 characters, an error body) is copied at most so far, however often the line
 * quotes it (a binding, an error's message, its stack, its path). A short line is not parsed.
 */
function boundLine(line: string): string {
  if (line.length <= SHORT_LINE) return line;
  try {
    const parsed: unknown = JSON.parse(line, (_key, value: unknown) =>
      typeof value === 'string' ? boundedLines(value) : value,
    );
    return `${JSON.stringify(parsed)}${/\s*$/.exec(line)?.[0] ?? ''}`;
  } catch {
    return line;
  }
}

// `logger.error(error)` makes the error's message the line's `msg`, out of reach of `redact` and serializers.
function scrubMessage(this: PinoLogger, args: unknown[], method: (...args: unknown[]) => void): void {
  const scrubbed = args.map((arg) => (typeof arg === 'string' ? redactSecrets(arg) : arg));
  const [first, second] = scrubbed;
  if (first instanceof Error && typeof second !== 'string' && first.message !== '') {
    scrubbed.splice(1, 0, redactSecrets(first.message));
  }
  method.apply(this, scrubbed);
}

// An error's message and stack often quote the request that failed; its secrets are unknown here, but bearer
// tokens, authorization header values and URL passwords are recognisable wherever they appear.
function serializeError(error: unknown): unknown {
  const serialized: unknown = error instanceof Error ? stdSerializers.err(error) : error;
  return scrubStrings(serialized, new WeakSet(), 0);
}

const MAX_SCRUB_DEPTH = 8;

function scrubStrings(value: unknown, seen: WeakSet<object>, depth: number): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (typeof value !== 'object' || value === null || depth > MAX_SCRUB_DEPTH || seen.has(value)) return value;
  if (Array.isArray(value)) {
    seen.add(value);
    return value.map((item) => scrubStrings(item, seen, depth + 1));
  }
  const prototype = Object.getPrototypeOf(value);
  // Only plain data is rebuilt; anything else (a socket, a Secret) serializes itself.
  if (prototype !== Object.prototype && prototype !== null && !isSerializedError(value)) return value;
  seen.add(value);
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = scrubStrings(item, seen, depth + 1);
  return copy;
}

function isSerializedError(value: object): boolean {
  return typeof (value as { type?: unknown }).type === 'string' && 'stack' in value;
}

/**
 * A child logger for one part of the kit, `{component}` bound once rather than written into messages. Redaction
 * carries over from the parent.
 */
export function componentLogger(
  parent: PinoLogger,
  component: string,
  bindings: Record<string, unknown> = {},
): PinoLogger {
  return parent.child({ ...bindings, component });
}

/**
 * A child of `parent` with `bindings`, built only when a line at a level `parent` writes is logged: a child per
 * task or request then costs nothing while its lines would be dropped (pino serializes a child's bindings when it
 * is built). A line at a level `parent` drops goes to pino's own no-op.
 */
export function lazyChild(parent: PinoLogger, bindings: Bindings): PinoLogger {
  let child: PinoLogger | undefined;
  const built = () => {
    child ??= parent.child(bindings);
    return child;
  };
  return new Proxy(parent, {
    get(_, property) {
      if (typeof property === 'string' && Object.hasOwn(parent.levels.values, property)) {
        if (!parent.isLevelEnabled(property)) return Reflect.get(parent, property);
      }
      const target = built();
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(_, property, value) {
      return Reflect.set(built(), property, value);
    },
  });
}

/**
 * A child logger that writes none of the given values, wherever one appears in a line: the message, an error's
 * message and stack, any field at any depth, a key. For secrets known only at run time, such as the credentials a
 * task carries, which no redaction path can name. Its own children keep the scrubbing. Without a non-empty value
 * it returns `logger` itself, so that tasks without credentials pay nothing.
 *
 * @example
 * <!-- example: typecheck, because it writes to standard output -->
 * ```ts
 * import { createLogger, secretScrubbingLogger } from './logger.js';
 *
 * const log = secretScrubbingLogger(createLogger(), Object.values(credentials));
 * log.error({ err: new Error(`login failed for ${credentials.password?.reveal()}`) }, 'login failed'); // "login failed for [redacted]" in err.message and err.stack
 * ```
 */
export function secretScrubbingLogger(
  logger: PinoLogger,
  secrets: Iterable<Secret | string | undefined>,
): PinoLogger {
  const values = [...secrets].map((secret) => (typeof secret === 'string' ? secret : secret?.reveal()));
  // A value also appears escaped twice when a field holds JSON text that quotes it (a response body, say).
  const pattern = secretPattern([
    ...values,
    ...values.map((value) => (value === undefined ? undefined : JSON.stringify(value).slice(1, -1))),
  ]);
  if (pattern === undefined) return logger;
  const scrubbing = logger.child({});
  // A child cannot be given hooks, and only the finished line holds every place a value can reach (pino's own
  // serializers and the application's run before it). Scrubbed before the parent's hooks: bounding a string first
  // could cut a value in two, and its first part would no longer be recognised.
  const holder = scrubbing as unknown as Record<symbol, { streamWrite?: (line: string) => string }>;
  const hooks = holder[symbols.hooksSym] ?? {};
  const write = hooks.streamWrite;
  holder[symbols.hooksSym] = {
    ...hooks,
    streamWrite: (line: string) => {
      const scrubbed = scrubLine(line, pattern);
      return write === undefined ? scrubbed : write(scrubbed);
    },
  };
  return scrubbing;
}

// A line is re-serialized only when it holds a value, and then string by string, so that the line stays valid
// JSON whatever the value looks like.
function scrubLine(line: string, pattern: RegExp): string {
  if (line.search(pattern) === -1) return line;
  const scrub = (text: string) => text.replace(pattern, REDACTED);
  try {
    const parsed: unknown = JSON.parse(line, (_key, value: unknown) => {
      if (typeof value === 'string') return scrub(value);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
      if (!Object.keys(value).some((key) => key.search(pattern) !== -1)) return value;
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [scrub(key), item]));
    });
    return `${JSON.stringify(parsed)}${/\s*$/.exec(line)?.[0] ?? ''}`;
  } catch {
    return scrub(line);
  }
}
