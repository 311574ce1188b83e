/**
 * The connector's keys: the key ring of x25519 key pairs that tasks' credentials are sealed to, where it is kept
 * between runs (key stores), and its rotation while the worker runs (`key-rotation.ts`); decrypted credentials
 * reach a handler as `Secret`s (`src/connector/secret.ts`). See `docs/keys.md`.
 *
 * @example
 * <!-- example: typecheck, because the task is the service's -->
 * ```ts
 * import { FileKeyStore, KeyRing } from 'approval-connector-kit/worker';
 *
 * const ring = await KeyRing.load(new FileKeyStore('.connector/keys.json'));
 * // A leased task's credentials, sealed when the connector registered `authRequired`: every field a Secret.
 * const credentials = await ring.open(leased.data.credentials!);
 * ```
 * @module
 */

export {
  generateKeyRingData,
  KeyRing,
  type KeyRingOptions,
  KeyRingUnavailableError,
  keyRingOptionsShape,
  marginUnderLifetime,
  type NewKeyReason,
  type PublicKeyInfo,
} from './key-ring.js';
export { announceNewKey, KeyRotation, type KeyRotationParts, keyCheck, keyStanding } from './key-rotation.js';
export {
  FileKeyStore,
  KeyRingData,
  KeyRingInvalidError,
  type KeyStore,
  KeyStoreReadOnlyError,
  MemoryKeyStore,
  ReadOnlyKeyStore,
  type ReadOnlyKeyStoreSource,
} from './key-store.js';
export { WorkerKeys, type WorkerKeysParts } from './worker-keys.js';
