import { randomBytes } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { z } from 'zod';
import {
  func,
  host,
  integer,
  nonEmptyString,
  type OptionsShape,
  parseOptions,
  pinoLogger,
  port,
  type Resolved,
} from '../internal/options.js';
import type { SeedInput } from './seed/schema.js';

/** Options of {@link startReferenceBackend}. Every field is optional. */
export interface ReferenceBackendOptions {
  /**
   * TCP port to listen on. `0` picks a free port; read the chosen one from the handle's `url`.
   * @default 0
   */
  port?: number;
  /**
   * Interface to listen on. The default keeps the backend off the network.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * SQLite file that holds the data. Everything survives a restart with the same file.
   * @default undefined (an in-memory database, gone when the backend closes)
   */
  dataFile?: string;
  /**
   * Data to load at start: a seed object, or the path of a seed JSON file. Applied only when the store is empty,
   * so restarting with the same `dataFile` and `seed` does not duplicate anything; its systems' `consoleSignIns`,
   * which are not stored, are taken at every start.
   * @default undefined (start empty)
   */
  seed?: SeedInput | string;
  /**
   * How long, in milliseconds, a task handed out by Get task stays leased before it is offered again.
   * @default 60_000
   */
  leaseMs?: number;
  /**
   * The clock, in milliseconds since the epoch. Inject one in tests to move time without sleeping.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Token of the admin API (`/admin/...`), at least 8 characters. Never opens v1 or v2, and no service token opens
   * the admin API.
   * @default a random token, readable as the handle's `adminToken`
   */
  adminToken?: string;
  /**
   * Logger for the server and its requests. The authorization header is redacted in every line.
   * @default a silent pino logger
   */
  logger?: Logger;
}

/** Options with every default applied. */
export type CompiledOptions = Resolved<ReferenceBackendOptions, 'dataFile' | 'seed'>;

/** The schema of {@link ReferenceBackendOptions}: checks them and applies every default. */
export const backendOptionsSchema = z.strictObject({
  port: port().default(0),
  host: host().default('127.0.0.1'),
  dataFile: nonEmptyString().optional(),
  seed: z
    .union(
      [
        nonEmptyString(),
        z.custom<SeedInput>((value) => typeof value === 'object' && value !== null && !Array.isArray(value)),
      ],
      { error: 'a seed object or the path of a seed file' },
    )
    .optional(),
  leaseMs: integer(1).default(60_000),
  now: func<() => number>().default(() => Date.now),
  adminToken: z
    .string({ error: 'a string of at least 8 characters' })
    .min(8, { error: 'a string of at least 8 characters' })
    .default(() => randomBytes(24).toString('base64url')),
  logger: pinoLogger().default(() => pino({ level: 'silent' })),
} satisfies OptionsShape<ReferenceBackendOptions, CompiledOptions>);

/**
 * Checks every option and applies the defaults: a bad option is a `ValidationError` naming it and what was received
 * (never the admin token's value).
 */
export function compileOptions(options: ReferenceBackendOptions = {}): CompiledOptions {
  return parseOptions(backendOptionsSchema, options, 'reference backend options', ['adminToken']);
}
