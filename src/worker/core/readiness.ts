import type { PinoLogger, ReadinessCheck } from '../operations/index.js';

/**
 * The parts of the connector that `/readyz` details, each by its name, in the order they joined: each part joins
 * with {@link set} and a function that reads its {@link ReadinessCheck} at each request. A part whose check throws
 * shows `{"status":"error"}`, and the error is logged: a fault of one part never hides the others, nor fails the
 * answer.
 */
export class ReadinessChecks {
  readonly #checks = new Map<string, () => ReadinessCheck>();
  readonly #logger: PinoLogger;

  constructor(logger: PinoLogger) {
    this.#logger = logger;
  }

  /** Adds a part, or replaces the part of that name. */
  set(name: string, check: () => ReadinessCheck): this {
    this.#checks.set(name, check);
    return this;
  }

  /** Every part's check now. */
  read(): Record<string, ReadinessCheck> {
    const read: Record<string, ReadinessCheck> = {};
    for (const [name, check] of this.#checks) {
      try {
        read[name] = check();
      } catch (error) {
        this.#logger.warn({ err: error, check: name }, 'a readiness check failed');
        read[name] = { status: 'error' };
      }
    }
    return read;
  }
}
