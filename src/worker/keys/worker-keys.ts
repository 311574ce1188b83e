import type { ConnectorMetrics, PinoLogger, ReadinessCheck } from '../operations/index.js';
import { KeyRing, type KeyRingOptions, type PublicKeyInfo } from './key-ring.js';
import { announceNewKey, KeyRotation, keyCheck } from './key-rotation.js';
import type { KeyStore } from './key-store.js';

/** What a {@link WorkerKeys} needs of the worker. */
export interface WorkerKeysParts {
  /** The worker's `keys` options. */
  options: Pick<KeyRingOptions, 'keyLifetimeMs'> & { rotationMarginMs: number };
  logger: PinoLogger;
  metrics: ConnectorMetrics;
  now: () => number;
  random: () => number;
}

/**
 * A worker's keys, for a connector whose actions need credentials: its ring, the key the service holds, the job
 * that rotates it, and the `keys` part of `/readyz`.
 */
export class WorkerKeys {
  /** The key ring that tasks' credentials are opened with. */
  readonly ring: KeyRing;
  readonly #parts: WorkerKeysParts;
  /** The public key the service holds: the last one registered. */
  #registered: PublicKeyInfo | undefined;

  private constructor(ring: KeyRing, parts: WorkerKeysParts) {
    this.ring = ring;
    this.#parts = parts;
  }

  /** Loads the ring from its store and rotates its key when due, announcing each new key. */
  static async load(store: KeyStore, parts: WorkerKeysParts): Promise<WorkerKeys> {
    const { options, logger, metrics, now } = parts;
    const ring = await KeyRing.load(store, { ...options, now, onNewKey: announceNewKey(logger, metrics) });
    await ring.rotateIfDue();
    return new WorkerKeys(ring, parts);
  }

  /** The key to register. Throws `KeyRingUnavailableError` when every key has expired. */
  get current(): PublicKeyInfo {
    return this.ring.current;
  }

  /** Records that the service now holds this key. */
  registered(key: PublicKeyInfo): void {
    this.#registered = key;
  }

  /** Starts the job that rotates the key when due, and registers each new one with `register`. */
  rotation(register: () => Promise<void>): KeyRotation {
    const { logger, metrics, now, random } = this.#parts;
    return new KeyRotation({
      ring: this.ring,
      registered: this.#registered,
      register,
      logger,
      metrics,
      now,
      random,
    }).start();
  }

  /** The `keys` part of `/readyz`. */
  check(): ReadinessCheck {
    return keyCheck(this.#registered, this.#parts.options.rotationMarginMs, this.#parts.now());
  }
}
