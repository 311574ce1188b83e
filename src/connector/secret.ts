/**
 * Values that must never be printed: tokens, passwords, decrypted credentials. A {@link Secret} shows a placeholder
 * wherever a value is turned into text (string conversion, JSON, `util.inspect`, template strings, log lines) and
 * gives its value only through an explicit {@link Secret.reveal}.
 * @module
 */
import { ValidationError } from '../errors.js';

/** What a {@link Secret} shows instead of its value. */
export const REDACTED = '[redacted]';

const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/**
 * A string that does not print. `String(secret)`, `${secret}`, `JSON.stringify(secret)`, `util.inspect(secret)` and
 * pino all see `[redacted]`; `secret.reveal()` returns the value. The value sits in a private field, so it is not
 * an own property either: spreading, `Object.keys` and `structuredClone` do not copy it.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { Secret } from 'approval-connector-kit';
 *
 * const password = new Secret(process.env.SAP_PASSWORD ?? '');
 * logger.info({ password }, 'logging in'); // {"password":"[redacted]",...}
 * await sap.login('APPROVAL_SYNC', password.reveal());
 * ```
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    if (typeof value !== 'string') {
      throw new ValidationError('secret', [
        { path: [], message: `Expected a string, got ${typeof value}`, code: 'invalid_type' },
      ]);
    }
    this.#value = value;
  }

  /** The value itself. Call it only where the value leaves the process for its intended recipient. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }

  [inspectSymbol](): string {
    return `Secret(${REDACTED})`;
  }
}

/**
 * The approver's decrypted credentials as a task handler receives them, for example `{username, password}`, every
 * field a {@link Secret}: `credentials.password?.reveal()` returns the password.
 */
export type Credentials = Readonly<Record<string, Secret>>;

/**
 * Wraps every field of a decrypted credentials object in a {@link Secret}, so that no part of it prints by accident.
 * A string is wrapped as it is; any other JSON value (a number, a nested object) as its JSON text.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { wrapCredentials } from './secret.js';
 *
 * const credentials = wrapCredentials({ username: 'ada', password: 's3cret' });
 * `${credentials.password}`; // '[redacted]'
 * ```
 */
export function wrapCredentials(plain: Readonly<Record<string, unknown>>): Credentials {
  const wrapped: Record<string, Secret> = {};
  for (const [key, value] of Object.entries(plain)) {
    if (value instanceof Secret) wrapped[key] = value;
    else if (typeof value === 'string') wrapped[key] = new Secret(value);
    else {
      const json = JSON.stringify(value);
      if (json !== undefined) wrapped[key] = new Secret(json);
    }
  }
  return Object.freeze(wrapped);
}

// Credentials that are recognisable by their place whatever their value: a bearer token, an authorization header
// quoted in a message, the `user:password@` of a URL.
const GENERIC_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/\bBearer\s+[A-Za-z0-9\-._~+/]+=*/gi, `Bearer ${REDACTED}`],
  [/(\bauthorization["']?\s*[:=]\s*["']?)[^"'\r\n,}]+/gi, `$1${REDACTED}`],
  [/(\/\/)[^/\s:@]+:[^/\s@]+@/g, `$1${REDACTED}@`],
];

/**
 * Replaces every occurrence of the given secrets in a text with `[redacted]`, for messages that leave the process
 * (task result `meta`, errors, log messages). Besides each value as is, its JSON-escaped and URL-encoded forms are
 * replaced, because a source system's error often quotes the request it received. A bearer token, the value of an
 * authorization header and the password in a URL are redacted whatever their value.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { redactSecrets, Secret } from './secret.js';
 *
 * redactSecrets('login failed for s3cret', [new Secret('s3cret')]); // 'login failed for [redacted]'
 * ```
 */
export function redactSecrets(text: string, secrets: Iterable<Secret | string | undefined> = []): string {
  const given = secretPattern(secrets);
  let result = given === undefined ? text : text.replace(given, REDACTED);
  for (const [pattern, replacement] of GENERIC_PATTERNS) result = result.replace(pattern, replacement);
  return result;
}

/**
 * A global pattern matching each of the given secrets as is, JSON-escaped and URL-encoded: what
 * {@link redactSecrets} replaces. `undefined` when no secret is a non-empty string, so that callers skip the work.
 */
export function secretPattern(secrets: Iterable<Secret | string | undefined>): RegExp | undefined {
  const needles = new Set<string>();
  for (const secret of secrets) {
    const value = secret instanceof Secret ? secret.reveal() : secret;
    if (typeof value !== 'string' || value === '') continue;
    needles.add(value);
    needles.add(JSON.stringify(value).slice(1, -1));
    needles.add(encodeURIComponent(value));
  }
  if (needles.size === 0) return undefined;
  // One pass, longest first: a secret containing another is replaced whole, and a short secret cannot match
  // inside a placeholder written by an earlier replacement.
  const alternatives = [...needles].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return new RegExp(alternatives.join('|'), 'g');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
