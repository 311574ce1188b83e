import { randomBytes } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { ValidationError } from '../errors.js';
import { isPort } from '../internal/port.js';
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
   * so restarting with the same `dataFile` and `seed` does not duplicate anything.
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
   * Token of the admin API (`/admin/...`). Never opens v1 or v2, and no service token opens the admin API.
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
export type CompiledOptions = Required<Omit<ReferenceBackendOptions, 'dataFile' | 'seed'>> &
  Pick<ReferenceBackendOptions, 'dataFile' | 'seed'>;

/** Applies defaults and checks every option, naming the option and the value received when one is wrong. */
export function compileOptions(options: ReferenceBackendOptions = {}): CompiledOptions {
  const port = options.port ?? 0;
  if (!isPort(port)) {
    invalid(
      'port',
      `Expected \`port\` to be an integer from 0 to 65535, got \`${String(port)}\` (${typeof port})`,
    );
  }
  const leaseMs = options.leaseMs ?? 60_000;
  if (!Number.isInteger(leaseMs) || leaseMs < 1) {
    invalid(
      'leaseMs',
      `Expected \`leaseMs\` to be an integer from 1 and up, got \`${String(leaseMs)}\` (${typeof leaseMs})`,
    );
  }
  const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
  if (adminToken.length < 8) {
    invalid(
      'adminToken',
      `Expected \`adminToken\` to be at least 8 characters long, got ${adminToken.length}`,
    );
  }
  return {
    port,
    host: options.host ?? '127.0.0.1',
    dataFile: options.dataFile,
    seed: options.seed,
    leaseMs,
    now: options.now ?? Date.now,
    adminToken,
    logger: options.logger ?? pino({ level: 'silent' }),
  };
}

function invalid(option: string, message: string): never {
  throw new ValidationError('reference backend options', [{ path: [option], message, code: 'custom' }]);
}
