/**
 * Telling a TLS mismatch from other network failures: an `https` URL whose server answers in plain HTTP (OpenSSL
 * reads the answer's first bytes as a record of a TLS version that does not exist), or an `http` URL whose server
 * speaks only TLS (it closes the connection without a word, which a TLS handshake to the same port then explains).
 * @module
 */
import { connect } from 'node:tls';
import { causeChain, property } from '../internal/causes.js';
import { ProtocolMismatchError } from './errors.js';

/** OpenSSL's codes for an answer that is not TLS at all. */
const NOT_TLS_CODES: ReadonlySet<string> = new Set([
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'ERR_SSL_HTTP_REQUEST',
]);

/** A connection closed before any answer: what a TLS server does with a plain-HTTP request. */
const CLOSED_CODES: ReadonlySet<string> = new Set(['UND_ERR_SOCKET', 'ECONNRESET']);

/** How long the handshake that tells whether an `http` URL's server speaks TLS may take. */
const PROBE_TIMEOUT_MS = 2_000;

/** The codes of `error` and of its causes. */
function codes(error: unknown): string[] {
  return [...causeChain(error)]
    .map((link) => property(link, 'code'))
    .filter((code): code is string => typeof code === 'string');
}

/**
 * Finds out, once per base URL, whether a failure of a request to it is a TLS mismatch. Only a failure that could be
 * one costs anything: a TLS handshake to an `http` URL's port after its first connection closed without an answer.
 */
export class TlsMismatchCheck {
  readonly #baseUrl: URL;
  readonly #probe: boolean;
  // Whether the `http` URL's server speaks TLS: asked once, on the first connection closed without an answer.
  #speaksTls: Promise<boolean> | undefined;

  /** `probe: false` never makes the handshake: an `http` URL's TLS server is then not told from a closed connection. */
  constructor(baseUrl: URL, { probe }: { probe: boolean }) {
    this.#baseUrl = baseUrl;
    this.#probe = probe;
  }

  /** The {@link ProtocolMismatchError} that `error` stands for, or `undefined` when it is no TLS mismatch. */
  async of(error: unknown): Promise<ProtocolMismatchError | undefined> {
    const found = codes(error);
    const url = this.#baseUrl;
    if (url.protocol === 'https:') {
      return found.some((code) => NOT_TLS_CODES.has(code))
        ? new ProtocolMismatchError(url, 'http', { cause: error })
        : undefined;
    }
    if (!this.#probe || !found.some((code) => CLOSED_CODES.has(code))) return undefined;
    this.#speaksTls ??= speaksTls(url.hostname, Number(url.port || 80));
    return (await this.#speaksTls) ? new ProtocolMismatchError(url, 'https', { cause: error }) : undefined;
  }
}

/** Whether the server at `host:port` completes a TLS handshake (its certificate is not checked: only its speech). */
function speaksTls(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({
      host: host.replace(/^\[|\]$/g, ''),
      port,
      rejectUnauthorized: false,
      // An IP address is no server name.
      ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
    });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
  });
}
