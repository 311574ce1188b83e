/**
 * An HTTP proxy for tests that injects network faults between a client and a server on this machine: connections
 * dropped before or after the request is forwarded, requests cut off mid-body, answers reset mid-body, delays, and
 * `503` / `429` answers with `Retry-After`. Which request gets which fault is drawn from a seeded stream in the order
 * the requests arrive, so a seed fixes the sequence of faults.
 *
 * @example
 * ```ts
 * const proxy = await FaultProxy.start({ target: backend.url, seed: 7, faultRate: 0.1 });
 * const client = new IntegrationClient({ baseUrl: proxy.url, token });
 * // ...
 * await proxy.close();
 * ```
 * @module
 */
import { once } from 'node:events';
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { parseOptions } from '../../src/internal/options.js';
import { sleep } from '../../src/internal/wait.js';
import { pick, seededRandom } from './random.js';

/** What the proxy does to one request. */
export type FaultKind =
  | 'none'
  /** Waits up to `maxDelayMs`, then forwards the request. */
  | 'delay'
  /** Closes the client's connection without forwarding anything: the request never reached the server. */
  | 'drop-before'
  /** Forwards the request and reads the whole answer (the server has done the work), then closes unanswered. */
  | 'drop-after'
  /** Forwards the headers and half of the body, then closes both connections: the server sees a cut request. */
  | 'truncate-request'
  /** Forwards the request, sends the answer's headers and half its body, then resets the connection. */
  | 'reset-mid-body'
  /** Answers `503` with `Retry-After`, in the API's error shape, without forwarding. */
  | 'status-503'
  /** Answers `429` with `Retry-After`, in the API's error shape, without forwarding. */
  | 'status-429';

/** The faults the proxy injects, each with the same weight. */
export const FAULT_KINDS: readonly Exclude<FaultKind, 'none'>[] = [
  'delay',
  'drop-before',
  'drop-after',
  'truncate-request',
  'reset-mid-body',
  'status-503',
  'status-429',
];

/** One request as it passed through the proxy. */
export interface Exchange {
  /** Its place in the order of arrival, from 0. */
  seq: number;
  method: string;
  /** The path and query, as sent. */
  path: string;
  fault: FaultKind;
  body: Buffer;
}

/**
 * Called synchronously at each step of an exchange, so a test can act (kill a process, say) at an exact point:
 * `received` before the request is forwarded, `answered` once the server has answered and before the client gets
 * the answer (or the fault that replaces it).
 */
export interface ExchangeListener {
  received?(exchange: Exchange): void;
  answered?(exchange: Exchange, status: number): void;
}

/** Options of {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  /** The server to forward to: an `http:` URL on a loopback address. */
  target: string;
  /** Seeds the stream the faults are drawn from. */
  seed: number;
  /**
   * The share of requests that get a fault, in [0, 1].
   * @default 0.05
   */
  faultRate?: number;
  /**
   * The share of requests that start a burst: the requests after it get a fault too, up to `maxBurst` in a row
   * (each fault but `delay`), so that a call's retries can all fail.
   * @default 0.002
   */
  burstRate?: number;
  /**
   * The longest burst, in requests.
   * @default 6
   */
  maxBurst?: number;
  /**
   * The longest `delay`, in milliseconds.
   * @default 100
   */
  maxDelayMs?: number;
  /**
   * Every forwarded request first waits a random time up to this, in milliseconds, so that requests sent together
   * may reach the server in another order, as over a slow network. Settable later, through `latencyMs`.
   * @default 0
   */
  latencyMs?: number;
  /**
   * Which faults to draw from, each with the same weight.
   * @default every kind in {@link FAULT_KINDS}
   */
  kinds?: readonly Exclude<FaultKind, 'none'>[];
  /** Told about each exchange. */
  listener?: ExchangeListener;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

const OptionsSchema = z.object({
  target: z.string().refine(
    (value) => {
      const url = URL.canParse(value) ? new URL(value) : undefined;
      return url?.protocol === 'http:' && LOOPBACK.has(url.hostname);
    },
    { message: 'an http URL on a loopback address (127.0.0.1, localhost, [::1])' },
  ),
  seed: z.number().int(),
  faultRate: z.number().min(0).max(1).optional(),
  burstRate: z.number().min(0).max(1).optional(),
  maxBurst: z.number().int().min(1).max(100).optional(),
  maxDelayMs: z.number().int().min(0).max(10_000).optional(),
  latencyMs: z.number().int().min(0).max(10_000).optional(),
  kinds: z
    .array(z.enum(FAULT_KINDS as [string, ...string[]]))
    .min(1)
    .optional(),
});

// Headers the proxy sets itself, or that belong to one connection rather than to the message they came with.
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'host',
]);

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The proxy. Listens on 127.0.0.1, on a port of its own. */
export class FaultProxy {
  readonly #server: Server;
  readonly #agent = new Agent({ keepAlive: true });
  readonly #target: URL;
  readonly #random: () => number;
  readonly #faultRate: number;
  readonly #burstRate: number;
  readonly #maxBurst: number;
  readonly #maxDelayMs: number;
  readonly #kinds: readonly Exclude<FaultKind, 'none'>[];
  readonly #listener: ExchangeListener;
  readonly #counts = new Map<FaultKind, number>();
  #latencyMs: number;
  #burstLeft = 0;
  #seq = 0;
  #severedBefore = 0;
  #severed = 0;
  /** Wakes the requests waiting out a delay or latency when {@link sever} drops them. */
  #severing = new AbortController();
  #inFlight = 0;
  #idle: (() => void)[] = [];
  #url = '';

  private constructor(options: FaultProxyOptions) {
    this.#target = new URL(options.target);
    this.#random = seededRandom(options.seed);
    this.#faultRate = options.faultRate ?? 0.05;
    this.#burstRate = options.burstRate ?? 0.002;
    this.#maxBurst = options.maxBurst ?? 6;
    this.#maxDelayMs = options.maxDelayMs ?? 100;
    this.#latencyMs = options.latencyMs ?? 0;
    this.#kinds = options.kinds ?? FAULT_KINDS;
    this.#listener = options.listener ?? {};
    this.#server = createServer((req, res) => {
      void this.#handle(req, res);
    });
  }

  /** Starts a proxy in front of `options.target`. A bad option is a `ValidationError` naming it. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    parseOptions(OptionsSchema, options, 'fault proxy options');
    const proxy = new FaultProxy(options);
    proxy.#server.listen(0, '127.0.0.1');
    await once(proxy.#server, 'listening');
    proxy.#url = `http://127.0.0.1:${(proxy.#server.address() as AddressInfo).port}`;
    return proxy;
  }

  /** Where clients send their requests, such as `http://127.0.0.1:41234`. */
  get url(): string {
    return this.#url;
  }

  /** How many requests got each fault (`none` included), in all. */
  counts(): Record<FaultKind, number> {
    const counts = Object.fromEntries(['none', ...FAULT_KINDS].map((kind) => [kind, 0])) as Record<
      FaultKind,
      number
    >;
    for (const [kind, count] of this.#counts) counts[kind] = count;
    return counts;
  }

  /** The longest wait before a request is forwarded; see {@link FaultProxyOptions.latencyMs}. */
  get latencyMs(): number {
    return this.#latencyMs;
  }

  set latencyMs(ms: number) {
    this.#latencyMs = parseOptions(OptionsSchema.shape.latencyMs, ms, 'fault proxy latencyMs') ?? 0;
  }

  /** Requests dropped by {@link sever}. */
  get severed(): number {
    return this.#severed;
  }

  /**
   * Drops every request that has arrived and is not forwarded yet (waiting out a delay or latency, say), as a
   * network loses what a process was still sending when it died. Requests already forwarded still complete.
   */
  sever(): void {
    this.#severedBefore = this.#seq;
    this.#severing.abort();
    this.#severing = new AbortController();
  }

  /** Resolves once no request is in flight: everything the proxy took in has been forwarded, or will never be. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Closes every connection, both sides. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#agent.destroy();
    if (this.#server.listening) {
      this.#server.close();
      await once(this.#server, 'close');
    }
  }

  // Drawn as the request arrives, before any await, so the sequence of faults depends only on the seed.
  #decide(): FaultKind {
    if (this.#burstLeft > 0) {
      this.#burstLeft -= 1;
      return this.#failing();
    }
    if (this.#random() < this.#burstRate) {
      this.#burstLeft = Math.floor(this.#random() * this.#maxBurst);
      return this.#failing();
    }
    return this.#random() < this.#faultRate ? pick(this.#random, this.#kinds) : 'none';
  }

  /** A fault that makes the request fail (a delay does not), for bursts. */
  #failing(): FaultKind {
    const failing = this.#kinds.filter((kind) => kind !== 'delay');
    return failing.length > 0 ? pick(this.#random, failing) : 'delay';
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const seq = this.#seq++;
    let fault = this.#decide();
    const delayMs = Math.floor(this.#random() * (this.#maxDelayMs + 1));
    const retryAfter = this.#random() < 0.85 ? 0 : 1;
    const latency = Math.floor(this.#random() * (this.#latencyMs + 1));
    const severing = this.#severing.signal;
    const wait = (ms: number) => sleep(ms, severing).catch(() => {});
    this.#inFlight += 1;
    // Writing to a client that has gone (killed, say) is expected here, not an error of the proxy.
    res.on('error', () => {});
    try {
      const body = await readBody(req);
      if (fault === 'truncate-request' && body.length < 2) fault = 'drop-before';
      this.#counts.set(fault, (this.#counts.get(fault) ?? 0) + 1);
      const exchange: Exchange = { seq, method: req.method ?? 'GET', path: req.url ?? '/', fault, body };
      this.#listener.received?.(exchange);
      switch (fault) {
        case 'drop-before':
          req.socket.destroy();
          return;
        case 'status-503':
        case 'status-429':
          res.writeHead(fault === 'status-503' ? 503 : 429, {
            'content-type': 'application/json',
            'retry-after': String(retryAfter),
          });
          res.end(errorBody(exchange.path, fault === 'status-503' ? 503 : 429));
          return;
        case 'delay':
          await wait(delayMs);
          break;
        default:
          break;
      }
      if (latency > 0) await wait(latency);
      if (seq < this.#severedBefore) {
        this.#severed += 1;
        req.socket.destroy();
        return;
      }
      if (fault === 'truncate-request') {
        await this.#forwardHalf(exchange, req.headers);
        req.socket.destroy();
        return;
      }
      const answer = await this.#forward(exchange, req.headers);
      this.#listener.answered?.(exchange, answer.status);
      const headers = { ...answerHeaders(answer.headers), 'content-length': String(answer.body.length) };
      if (fault === 'drop-after') {
        req.socket.destroy();
      } else if (fault === 'reset-mid-body') {
        res.writeHead(answer.status, headers);
        res.write(answer.body.subarray(0, Math.floor(answer.body.length / 2)), () =>
          req.socket.resetAndDestroy(),
        );
      } else {
        res.writeHead(answer.status, headers);
        res.end(answer.body);
      }
    } catch {
      // The client went away mid-request, or the server could not be reached: the client sees its connection close.
      req.socket.destroy();
    } finally {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  #forward(exchange: Exchange, headers: IncomingHttpHeaders): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const upstream = request(this.#options(exchange, headers), (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () =>
          resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }),
        );
        answer.on('error', reject);
      });
      upstream.on('error', reject);
      upstream.end(exchange.body);
    });
  }

  async #forwardHalf(exchange: Exchange, headers: IncomingHttpHeaders): Promise<void> {
    const upstream = request(this.#options(exchange, headers));
    upstream.on('error', () => {
      // Destroyed on purpose below.
    });
    await new Promise<void>((resolve) =>
      upstream.write(exchange.body.subarray(0, Math.floor(exchange.body.length / 2)), () => resolve()),
    );
    upstream.destroy();
    await once(upstream, 'close');
  }

  #options(exchange: Exchange, headers: IncomingHttpHeaders) {
    const forwarded: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined && !NOT_FORWARDED.has(name)) forwarded[name] = value;
    }
    forwarded['content-length'] = String(exchange.body.length);
    return {
      host: this.#target.hostname.replace(/^\[|\]$/g, ''),
      port: this.#target.port || 80,
      method: exchange.method,
      path: exchange.path,
      headers: forwarded,
      agent: this.#agent,
    };
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('the client closed the connection mid-request'));
    });
  });
}

function answerHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) kept[name] = value;
  }
  return kept;
}

/** An error in the shape of the API the path belongs to (see docs/api-contract.md). */
function errorBody(path: string, status: 503 | 429): string {
  if (path.startsWith('/v1/')) {
    const kind = status === 429 ? 'Too Many Requests' : 'Internal Server Error';
    return JSON.stringify({ Error: `${kind}. injected by the fault proxy` });
  }
  return JSON.stringify({ status: 'failure' });
}
