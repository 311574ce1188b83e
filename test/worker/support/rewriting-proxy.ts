import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** What a test does to a JSON answer on its way back: return the body to send instead (or the same one). */
export type Rewrite = (request: { method: string; path: string }, body: unknown) => unknown;

// Hop-by-hop headers and the ones the body's new length invalidates.
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/**
 * A real HTTP proxy on 127.0.0.1, port 0, in front of the reference backend: every request goes through as it is,
 * and `rewrite` may change each JSON answer, as a faulty service or a middlebox would. Close it in `afterEach`.
 */
export class RewritingProxy {
  rewrite: Rewrite = (_request, body) => body;
  /** What a request waits for before it goes through: a test holds requests with it to see them in flight. */
  hold: (request: { method: string; path: string }) => Promise<void> | void = () => {};
  readonly #server: Server;

  private constructor(target: string) {
    this.#server = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const method = incoming.method ?? 'GET';
        const url = incoming.url ?? '/';
        const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
        Promise.resolve(this.hold({ method, path: url.split('?')[0] ?? url }))
          .then(() =>
            request(`${target}${url}`, { method: method as 'GET', headers: kept(incoming.headers), body }),
          )
          .then(async (answer) => {
            let text = await answer.body.text();
            if (String(answer.headers['content-type'] ?? '').includes('json') && text !== '') {
              const path = url.split('?')[0] ?? url;
              text = JSON.stringify(this.rewrite({ method, path }, JSON.parse(text)));
            }
            outgoing.writeHead(answer.statusCode, kept(answer.headers));
            outgoing.end(text);
          })
          .catch(() => outgoing.socket?.destroy());
      });
    });
  }

  static async start(target: string): Promise<RewritingProxy> {
    const proxy = new RewritingProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function kept(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROPPED.has(name.toLowerCase())) continue;
    result[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}
