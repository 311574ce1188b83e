/**
 * The battery's place between a source and a worker's push ingress: an HTTP server in-process that receives what the
 * source delivers, answers it at once (so the source never delivers it again by itself), and holds it, byte for
 * byte, for a check to pass on to the worker once, several times, out of order, never, or forged.
 * @module
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** A delivery as the source sent it: its raw body and its headers, names in lower case. */
export interface HeldDelivery {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

// Headers of the hop from the source to the relay, not of the delivery: the next hop sets its own.
const HOP_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'upgrade',
  'expect',
  'proxy-connection',
]);

// More than any source delivers in one event: the ingress's own limit is what a check of size would test.
const MAX_BODY_BYTES = 64 * 1024 * 1024;

function headersOf(message: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function bodyOf(message: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    message.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    message.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : undefined));
    message.on('error', reject);
  });
}

/** Receives a source's deliveries on any path, answers `200` at once, and holds them in the order they came. */
export class DeliveryRelay {
  readonly #server: Server;
  #url = '';
  #held: HeldDelivery[] = [];

  private constructor() {
    this.#server = createServer((message, response) => {
      bodyOf(message).then(
        (body) => {
          if (body === undefined || message.method !== 'POST') {
            response.writeHead(body === undefined ? 413 : 405).end();
            return;
          }
          this.#held.push({ body, headers: headersOf(message) });
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        },
        () => response.destroy(),
      );
    });
    this.#server.on('clientError', (_error, socket) => socket.destroy());
  }

  static async open(): Promise<DeliveryRelay> {
    const relay = new DeliveryRelay();
    await new Promise<void>((resolve) => relay.#server.listen(0, '127.0.0.1', resolve));
    const { port } = relay.#server.address() as AddressInfo;
    relay.#url = `http://127.0.0.1:${port}/push`;
    return relay;
  }

  /** The address the source is told to deliver to. */
  get url(): string {
    return this.#url;
  }

  /** The deliveries received since the last call, oldest first. */
  take(): HeldDelivery[] {
    const taken = this.#held;
    this.#held = [];
    return taken;
  }

  async close(): Promise<void> {
    if (!this.#server.listening) return;
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}

/** Posts a delivery to a worker's push ingress as the source sent it, and answers the status the ingress gave. */
export async function passOn(url: string, delivery: HeldDelivery): Promise<number> {
  const { statusCode, body } = await request(url, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
  await body.dump();
  return statusCode;
}
