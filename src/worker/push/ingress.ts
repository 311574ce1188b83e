/**
 * The push ingress: the HTTP endpoint a source delivers its events to, on a port of its own. It reads a delivery's
 * raw body up to a limit and hands it over as bytes; what to answer is the receiver's. It knows nothing else of the
 * connector. Each delivery is a span, `push delivery`, which the receiver tells what became of it. See
 * `docs/push.md` and `docs/tracing.md`.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { PushDelivery } from '../../connector/index.js';
import { PortInUseError } from '../../errors.js';
import { listen } from '../../internal/listen.js';
import { errorTypeOf, startSpan, type TraceSpan } from '../../internal/tracing.js';
import type { PinoLogger } from '../operations/index.js';

/** What the ingress answers a delivery: a status code, and a word of it for the body. */
export interface IngressAnswer {
  status: number;
  outcome: string;
  /** The work after the answer that the delivery's span still covers (its approvals read and queued). */
  settled?: Promise<void>;
}

/** What a {@link PushIngress} needs. */
export interface PushIngressOptions {
  port: number;
  host: string;
  path: string;
  maxBodyBytes: number;
  /**
   * Answers a delivery of the right path and method, its body read whole, and tells its span what became of it.
   * Never rejects.
   */
  receive: (delivery: PushDelivery, span: TraceSpan) => Promise<IngressAnswer>;
  /** Told of a request too large to read, with its span. */
  tooLarge: (span: TraceSpan) => void;
  logger: PinoLogger;
}

// A source waits for the answer before it delivers the next: a slow or stalled client must not hold a socket long.
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** The ingress's HTTP server: `POST <path>` and nothing else. */
export class PushIngress {
  readonly #options: PushIngressOptions;
  readonly #server: Server;
  #closing: Promise<void> | undefined;

  constructor(options: PushIngressOptions) {
    this.#options = options;
    this.#server = createServer(
      { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
      (request, response) => {
        this.#handle(request, response).catch((error: unknown) => {
          options.logger.warn({ err: error }, 'push ingress failed to answer a request');
          if (response.headersSent) response.destroy();
          else send(response, { status: 500, outcome: 'error' });
        });
      },
    );
    // A client that breaks off mid-request is no failure of the worker's.
    this.#server.on('clientError', (_error, socket) => socket.destroy());
  }

  /**
   * Listens, and resolves with the base URL (`http://127.0.0.1:9465`). A port in use is a `PortInUseError` naming
   * `PUSH_PORT`.
   */
  start(): Promise<{ url: string }> {
    const { port, host } = this.#options;
    return listen(this.#server, port, host).then(
      (url) => ({ url }),
      (error: unknown) => {
        throw PortInUseError.from(error, { port, host, setting: 'PUSH_PORT (push.port)' });
      },
    );
  }

  /** Stops listening and waits for the answers in progress. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      if (!this.#server.listening) {
        resolve();
        return;
      }
      this.#server.close(() => resolve());
      this.#server.closeIdleConnections();
    });
    return this.#closing;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== this.#options.path) {
      send(response, { status: 404, outcome: 'not found' });
      return;
    }
    if (request.method !== 'POST') {
      send(response, { status: 405, outcome: 'method not allowed' }, { allow: 'POST' });
      return;
    }
    const span = this.#deliverySpan(request);
    let settled: Promise<void> | undefined;
    try {
      const answer = await this.#deliver(request, response, span);
      settled = answer.settled;
      span.set({ 'http.response.status_code': answer.status });
      // A server span is failed by a 5xx only (OpenTelemetry's HTTP conventions): a refusal is the ingress working.
      if (answer.status >= 500) span.fail(String(answer.status));
    } catch (error) {
      span.set({ 'http.response.status_code': 500 });
      span.fail(errorTypeOf(error));
      throw error;
    } finally {
      if (settled === undefined) span.end();
      else void settled.finally(() => span.end());
    }
  }

  /** Reads a delivery and answers it; what it answered. */
  async #deliver(
    request: IncomingMessage,
    response: ServerResponse,
    span: TraceSpan,
  ): Promise<IngressAnswer> {
    const body = await readBody(request, this.#options.maxBodyBytes);
    if (body === undefined) {
      this.#options.tooLarge(span);
      // The rest of the body is not read: the connection closes once the answer is out.
      response.once('finish', () => request.destroy());
      const answer = { status: 413, outcome: 'too large' };
      send(response, answer, { connection: 'close' });
      return answer;
    }
    span.set({ 'http.request.body.size': body.length });
    const answer = await this.#options.receive({ body, headers: headersOf(request) }, span);
    send(response, answer);
    return answer;
  }

  /**
   * The span of a delivery: a trace of its own (a `traceparent` the request carries is not followed: the ingress
   * faces networks it does not trust), of kind server, with the HTTP server span's attributes; never its body or
   * headers.
   */
  #deliverySpan(request: IncomingMessage): TraceSpan {
    const { path } = this.#options;
    return startSpan('push delivery', {
      kind: 'server',
      root: true,
      attributes: {
        'http.request.method': 'POST',
        'http.route': path,
        'url.path': path,
        'url.scheme': 'http',
        'server.port': request.socket.localPort,
        'network.protocol.version': request.httpVersion,
      },
    });
  }
}

/**
 * The request's body, or `undefined` when it is larger than `limit` bytes (as its `content-length` says, or as found
 * while reading): the rest is then left unread.
 */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (body: Buffer | undefined, error?: unknown) => {
      request.off('data', onData).off('end', onEnd).off('error', onError);
      if (error === undefined) resolve(body);
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        request.pause();
        done(undefined);
      }
    };
    const onEnd = () => done(Buffer.concat(chunks, size));
    const onError = (error: unknown) => done(undefined, error);
    request.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** The request's headers, names in lower case (as Node gives them), a repeated one joined with `, `. */
function headersOf(request: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function send(response: ServerResponse, answer: IngressAnswer, headers: Record<string, string> = {}): void {
  response.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(JSON.stringify({ status: answer.outcome }));
}
