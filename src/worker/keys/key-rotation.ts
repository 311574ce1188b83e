/**
 * Keeps a running connector's key current: each check is armed for the current key's rotation time, and after a
 * failure retried with backoff until the key is replaced. See `docs/keys.md`.
 * @module
 */
import { type Backoff, backoffDelay } from '../../internal/backoff.js';
import { startSpan, withContext } from '../../internal/tracing.js';
import type { ConnectorMetrics, PinoLogger, ReadinessCheck } from '../operations/index.js';
import type { KeyRing, NewKeyReason, PublicKeyInfo } from './key-ring.js';

/** What the rotation needs from the connector. */
export interface KeyRotationParts {
  ring: KeyRing;
  /** The key the service holds: the one registered when the connector started. */
  registered: PublicKeyInfo | undefined;
  /** Registers the ring's current public key with the service. */
  register: () => Promise<void>;
  logger: PinoLogger;
  metrics: ConnectorMetrics;
  now: () => number;
  random: () => number;
}

// The longest delay setTimeout takes; a longer one would fire at once. A check that comes early arms the next one.
const MAX_TIMER_MS = 2 ** 31 - 1;
// Retries while the key cannot be replaced: from a second, doubling, up to an hour, never after the key expires.
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 3_600_000;

const NEW_KEY_MESSAGES: Record<NewKeyReason, string> = {
  created: 'created a connector key',
  rotated: 'rotated the connector key',
  adopted: 'adopted a connector key from the key store',
};

/** Logs and counts each key the ring makes current: the `onNewKey` of the connector's key ring. */
export function announceNewKey(
  logger: PinoLogger,
  metrics: ConnectorMetrics,
): (key: PublicKeyInfo, reason: NewKeyReason) => void {
  return (key, reason) => {
    metrics.keyEvent(reason);
    logger.info({ publicKey: key.publicKey, expiresAt: key.expiresAt }, NEW_KEY_MESSAGES[reason]);
  };
}

/**
 * Checks the connector's key when it is due: rotates it (or adopts the key the operator put in a read-only store),
 * registers the new public key, and arms the next check at the new key's rotation time. While the key cannot be
 * replaced (the store or the service fails, the operator has not added a key), it checks again with backoff, and
 * logs and counts each check: a warning while the key the service holds approaches its expiry, an error once it has
 * expired. The key the service holds, not the ring's newest: a key rotated but not registered protects nothing.
 */
export class KeyRotation {
  readonly #parts: KeyRotationParts;
  readonly #retry: Backoff;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Checks in a row that left the key due, expired or unregistered. */
  #failures = 0;
  /** The key the service holds: the last one registered. */
  #registered: PublicKeyInfo | undefined;

  constructor(parts: KeyRotationParts) {
    this.#parts = parts;
    this.#registered = parts.registered;
    this.#retry = { baseMs: RETRY_MIN_MS, maxMs: RETRY_MAX_MS, jitter: 'full', random: parts.random };
  }

  /** Arms the first check, at the current key's rotation time (at once when it is due already). */
  start(): this {
    this.#arm();
    return this;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** One check, a trace of its own: a span `rotate key`, the parent of the registration it makes. */
  async #check(): Promise<void> {
    const { ring, register, logger } = this.#parts;
    const span = startSpan('rotate key', { root: true });
    let replaced = true;
    try {
      await withContext(span.context, async () => {
        await ring.rotateIfDue();
        // Any current key the service does not hold: rotated here, or adopted when a task's credentials made the
        // ring read its store again. A ring whose every key expired has nothing to register: the expiry is reported
        // below.
        const current = currentOf(ring);
        if (current !== undefined && current.publicKey !== this.#registered?.publicKey) {
          await register();
          this.#registered = current;
          span.set({ 'approval_connector.key.registered': true });
          logger.info({ expiresAt: ring.current.expiresAt }, 'registered the connector key with the service');
        }
      });
    } catch (error) {
      replaced = false;
      span.fail('key_not_replaced');
      if (!this.#stopped) logger.error({ err: error }, 'replacing the connector key failed; retrying');
    }
    if (this.#stopped) return span.end();
    const healthy = this.#reportExpiry() && replaced;
    span.set({
      'approval_connector.key.expires_at': (this.#registered ?? currentOf(ring))?.expiresAt.toISOString(),
      'approval_connector.key.healthy': healthy,
    });
    span.end();
    this.#failures = healthy ? 0 : this.#failures + 1;
    this.#arm();
  }

  /**
   * Logs and counts a key the service holds that is due and not replaced, or expired (or a ring with no key left).
   * True when neither.
   */
  #reportExpiry(): boolean {
    const { ring, logger, metrics, now } = this.#parts;
    let current: PublicKeyInfo;
    try {
      current = ring.current;
    } catch (error) {
      this.#reportExpired({ err: error });
      return false;
    }
    const held = this.#registered ?? current;
    const fields = { publicKey: held.publicKey, expiresAt: held.expiresAt };
    const standing = keyStanding(held, ring.rotationMarginMs, now());
    if (standing === 'expired') {
      this.#reportExpired(fields);
      return false;
    }
    if (standing === 'ok') return true;
    metrics.keyEvent('expiring');
    logger.warn(fields, 'the connector key is due for rotation and has not been replaced; it expires soon');
    return false;
  }

  #reportExpired(fields: object): void {
    this.#parts.metrics.keyEvent('expired');
    this.#parts.logger.error(
      fields,
      'the connector key has expired: the service creates no task for this connector until a new key is registered',
    );
  }

  #arm(): void {
    if (this.#stopped) return;
    const { ring, now } = this.#parts;
    const at = now();
    const current = currentOf(ring);
    let next: number;
    if (this.#failures === 0 && current !== undefined) {
      next = ring.rotationDueAt.getTime();
    } else {
      next = at + Math.max(RETRY_MIN_MS, backoffDelay(Math.max(0, this.#failures - 1), this.#retry));
      // Checked again at the expiry of the key the service holds, so that it is reported when it happens.
      const expiresAt = (this.#registered ?? current)?.expiresAt.getTime();
      if (expiresAt !== undefined && expiresAt > at) next = Math.min(next, expiresAt);
    }
    this.#timer = setTimeout(() => void this.#check(), Math.min(MAX_TIMER_MS, Math.max(0, next - at)));
    this.#timer.unref();
  }
}

/**
 * Where a key the service holds stands at `now`: `expired`, `expiring` (due for rotation: less than
 * `rotationMarginMs` before its expiry, and not replaced) or `ok`.
 */
export function keyStanding(
  key: PublicKeyInfo,
  rotationMarginMs: number,
  now: number,
): 'ok' | 'expiring' | 'expired' {
  const expiresAt = key.expiresAt.getTime();
  if (now >= expiresAt) return 'expired';
  return now >= expiresAt - rotationMarginMs ? 'expiring' : 'ok';
}

/**
 * The `keys` part of `/readyz`: when the key the service holds expires, and where it stands; `not registered`
 * before the worker registered one.
 */
export function keyCheck(
  key: PublicKeyInfo | undefined,
  rotationMarginMs: number,
  now: number,
): ReadinessCheck {
  if (key === undefined) return { status: 'not registered' };
  const expiresAt = key.expiresAt.getTime();
  return {
    status: keyStanding(key, rotationMarginMs, now),
    expiresAt: key.expiresAt.toISOString(),
    expiresInSeconds: Math.round(expiresAt - now) / 1000,
    rotatesAt: new Date(expiresAt - rotationMarginMs).toISOString(),
  };
}

function currentOf(ring: KeyRing): PublicKeyInfo | undefined {
  try {
    return ring.current;
  } catch {
    return undefined;
  }
}
