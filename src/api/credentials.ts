/**
 * The format in which a task carries the approver's credentials: a NaCl box (x25519-xsalsa20-poly1305) from a
 * one-time key pair to the connector's public key. See `docs/api-contract.md`, "Encrypted credentials in a task".
 */
import nacl from 'tweetnacl';
import { ValidationError } from '../errors.js';
import type { EncryptedCredentials } from './integration.js';

const ALGORITHM = 'x25519-xsalsa20-poly1305';

/** Seals a JSON object to a connector's public key (base64). What the service does when it creates a task. */
export function sealCredentials(
  credentials: Record<string, unknown>,
  publicKey: string,
): EncryptedCredentials {
  const recipient = decodeKey(publicKey, 'publicKey');
  const ephemeral = nacl.box.keyPair();
  const nonce = nacl.randomBytes(nacl.box.nonceLength);
  const plaintext = new TextEncoder().encode(JSON.stringify(credentials));
  const ciphertext = nacl.box(plaintext, nonce, recipient, ephemeral.secretKey);
  return {
    algorithm: ALGORITHM,
    publicKey,
    ephemeralPublicKey: toBase64(ephemeral.publicKey),
    nonce: toBase64(nonce),
    ciphertext: toBase64(ciphertext),
  };
}

/**
 * Opens sealed credentials with the connector's secret key. Returns `undefined` when they cannot be opened
 * (wrong key, tampered or malformed), never a partial result.
 */
export function openCredentials(
  sealed: EncryptedCredentials,
  secretKey: Uint8Array,
): Record<string, unknown> | undefined {
  if (sealed.algorithm !== ALGORITHM) return undefined;
  try {
    const plaintext = nacl.box.open(
      fromBase64(sealed.ciphertext),
      fromBase64(sealed.nonce),
      decodeKey(sealed.ephemeralPublicKey, 'ephemeralPublicKey'),
      secretKey,
    );
    if (plaintext === null) return undefined;
    const value: unknown = JSON.parse(new TextDecoder().decode(plaintext));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a string is a valid x25519 public key in the contract's encoding (32 bytes, standard base64). */
export function isPublicKey(value: string): boolean {
  return /^[A-Za-z0-9+/]{43}=$/.test(value) && fromBase64(value).length === nacl.box.publicKeyLength;
}

// Without Buffer: the console page seals credentials in the browser with this very module.
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Throws on a text that is not base64. */
export function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

function decodeKey(text: string, name: string): Uint8Array {
  if (!isPublicKey(text)) {
    throw new ValidationError('key', [
      { path: [name], message: 'must be a 32-byte key in standard base64', code: 'invalid_format' },
    ]);
  }
  return fromBase64(text);
}
