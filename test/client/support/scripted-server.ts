import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the server received it. */
export interface Recorded {
  method: string;
  /** Path and query exactly as sent, still percent-encoded. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body text ('' when none). */
  body: string;
}

/**
 * What the server does with a request: answer, hang until the client gives up, drop the connection, or hand the
 * response to the test to write as it likes (a streamed or endless body).
 */
export type Reply =
  | { status?: number; json?: unknown; text?: string; headers?: Record<string, string> }
  | { respond: (response: ServerResponse) => void }
  | 'hang'
  | 'drop';

/**
 * A real HTTP server on 127.0.0.1, port 0, that records every request and answers from a queue of replies
 * (then from the default reply). Close it in `afterEach`/`afterAll`.
 */
export class ScriptedServer {
  readonly requests: Recorded[] = [];
  #queue: Reply[] = [];
  #fallback: Reply | ((request: Recorded) => Reply) = { status: 200, json: { status: 'success' } };
  readonly #server: Server;
  readonly #hung = new Set<ServerResponse>();

  private constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const recorded = {
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.requests.push(recorded);
        const fallback = this.#fallback;
        this.#answer(
          this.#queue.shift() ?? (typeof fallback === 'function' ? fallback(recorded) : fallback),
          response,
        );
      });
    });
  }

  static async start(): Promise<ScriptedServer> {
    const server = new ScriptedServer();
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Queues replies for the next requests, in order. */
  reply(...replies: Reply[]): this {
    this.#queue.push(...replies);
    return this;
  }

  /** The reply once the queue is empty, or a function that makes it from the request. */
  otherwise(reply: Reply | ((request: Recorded) => Reply)): this {
    this.#fallback = reply;
    return this;
  }

  /** Forgets the requests received and the replies still queued, so that one test's leftovers never answer the next. */
  reset(): void {
    this.requests.length = 0;
    this.#queue = [];
  }

  /** The one request received; fails when there were more or fewer. */
  only(): Recorded {
    if (this.requests.length !== 1) throw new Error(`expected one request, got ${this.requests.length}`);
    return this.requests[0] as Recorded;
  }

  async close(): Promise<void> {
    for (const response of this.#hung) response.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #answer(reply: Reply, response: ServerResponse): void {
    if (reply === 'hang') {
      this.#hung.add(response);
      return;
    }
    if (reply === 'drop') {
      response.socket?.destroy();
      return;
    }
    if ('respond' in reply) {
      reply.respond(response);
      return;
    }
    const body = reply.text ?? (reply.json === undefined ? '' : JSON.stringify(reply.json));
    response.writeHead(reply.status ?? 200, {
      ...(reply.json === undefined ? {} : { 'content-type': 'application/json' }),
      ...reply.headers,
    });
    response.end(body);
  }
}
