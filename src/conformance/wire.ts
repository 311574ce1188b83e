/**
 * The wire between a worker and the reference backend: it sees every request a worker sends, can hold one back while
 * a check looks at it, and can cut the worker off at a chosen request, as a crash would (`before`: the request never
 * arrives; `after`: it arrives, its answer never comes back). A worker cut off is abandoned: nothing it sends
 * afterwards reaches the service. A worker in this process is given the wire as its client's undici dispatcher
 * ({@link Wire.dispatcher}); a worker in a process of its own, as an HTTP proxy ({@link Wire.url}). Either way a cut
 * is what the worker's client sees of a connection closed under it: undici's `SocketError`.
 * @module
 */
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Dispatcher, errors, request } from 'undici';

/** A request as it passes the wire. */
export interface WireRequest {
  /** Its number on this wire, from 0. */
  index: number;
  method: string;
  /** The path, without the query. */
  path: string;
  /** The JSON body, parsed; `undefined` when there is none. */
  body: unknown;
}

/**
 * Where the wire cuts the worker off: at the `nth` (from 0) of its requests (`request`), of its pushes of approvals
 * (`push`) or of its state writes (`state`), before the service has it, or `after` it has it and before the answer.
 */
export interface CrashPoint {
  at: 'request' | 'push' | 'state';
  nth: number;
  after: boolean;
}

/** Which kind of request a crash point counts. */
function kindOf(method: string, path: string): CrashPoint['at'] | undefined {
  if (method === 'PUT' && path === '/v2/rawapprovals') return 'push';
  if (method === 'PUT' && path === '/v2/connector/state') return 'state';
  return undefined;
}

/** Whether the request pushes approvals: what a crash point counts as `push`, and what a check changes the source at. */
export function isPush(request: Pick<WireRequest, 'method' | 'path'>): boolean {
  return kindOf(request.method, request.path) === 'push';
}

/** An answer the wire gives in the service's place: a refusal the service could have sent. */
export interface WireAnswer {
  status: number;
  body: unknown;
}

/**
 * What a check may do with each request: look at it before it is forwarded (or answer it in the service's place),
 * and at the answer.
 */
export interface WireListener {
  /** Before the request is forwarded; the request waits for it. An answer returned is sent instead of forwarding. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a listener that only looks returns nothing, sync or async.
  request?(request: WireRequest, wire: Wire): void | WireAnswer | Promise<void | WireAnswer>;
  /** After the service answered, before the worker hears it. */
  response?(request: WireRequest, status: number, body: unknown, wire: Wire): void | Promise<void>;
}

export class Wire {
  /** The HTTP proxy, for a worker in a process of its own: only a wire {@link open}ed has one. */
  #server: Server | undefined;
  readonly #target: string;
  #url = '';
  #count = 0;
  readonly #counts = { push: 0, state: 0 };
  #crash: CrashPoint | undefined;
  #crashed = false;
  #listener: WireListener;
  /** Fired once, when the wire cuts the worker off. */
  readonly crashed: Promise<void>;
  #onCrash: () => void = () => {};
  /** Requests forwarded to the service whose answer has not come back yet. */
  #forwarding = 0;
  #idle: (() => void)[] = [];
  #dispatcher: WireDispatcher | undefined;

  private constructor(target: string, listener: WireListener, crash: CrashPoint | undefined) {
    this.#target = target;
    this.#listener = listener;
    this.#crash = crash;
    this.crashed = new Promise((resolve) => {
      this.#onCrash = resolve;
    });
  }

  /** A wire to `target` (the backend's base URL) for a worker in this process: give its client {@link dispatcher}. */
  static inProcess(target: string, listener: WireListener = {}, crash?: CrashPoint): Wire {
    return new Wire(target, listener, crash);
  }

  /**
   * A wire to `target` (the backend's base URL) for a worker in a process of its own: an HTTP proxy on 127.0.0.1 and
   * a free port, at {@link url}.
   */
  static async open(target: string, listener: WireListener = {}, crash?: CrashPoint): Promise<Wire> {
    const wire = new Wire(target, listener, crash);
    const server = createServer((req, res) => {
      wire.#handle(req, res).catch(() => res.destroy());
    });
    wire.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    wire.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return wire;
  }

  /** The base URL a worker in a process of its own is given as the service's: the proxy of a wire {@link open}ed. */
  get url(): string {
    if (this.#server === undefined)
      throw new Error('a wire for a worker in this process has no URL: use its dispatcher');
    return this.#url;
  }

  /** How many requests the wire has seen. */
  get requests(): number {
    return this.#count;
  }

  /** Whether the worker has been cut off. */
  get isCut(): boolean {
    return this.#crashed;
  }

  /** Cuts the worker off now: every request from here on is dropped. */
  cut(): void {
    if (this.#crashed) return;
    this.#crashed = true;
    this.#onCrash();
  }

  /**
   * Resolves once no request is on its way to the service: after a cut, what the worker had sent before it has
   * landed, so that nothing of a dead worker arrives after its successor has started.
   */
  idle(): Promise<void> {
    if (this.#forwarding === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The wire as the undici dispatcher of a worker's client in this process: no HTTP between them. */
  get dispatcher(): Dispatcher {
    this.#dispatcher ??= new WireDispatcher((method, url, headers, raw) =>
      this.#pass(method, url, headers, raw),
    );
    return this.#dispatcher;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const passed = await this.#pass(
      req.method ?? 'GET',
      req.url ?? '/',
      endToEnd(req.headers),
      Buffer.concat(chunks),
    );
    if (passed === undefined) return void res.destroy();
    res.writeHead(passed.status, passed.headers);
    res.end(passed.body);
  }

  /** What the wire does with one request: the answer the worker gets, or `undefined` when it is cut off. */
  async #pass(
    method: string,
    url: string,
    headers: Record<string, string>,
    raw: Buffer,
  ): Promise<Passed | undefined> {
    const index = this.#count++;
    if (this.#crashed) return undefined;
    const path = url.split('?')[0] ?? '/';
    const wireRequest: WireRequest = { index, method, path, body: parseJson(raw) };
    const kind = kindOf(wireRequest.method, path);
    const nth = kind === undefined ? undefined : this.#counts[kind as 'push' | 'state']++;
    const crash = this.#crash;
    const crashHere =
      crash !== undefined &&
      (crash.at === 'request' ? crash.nth === index : crash.at === kind && crash.nth === nth);
    if (crashHere && !crash?.after) {
      this.cut();
      return undefined;
    }
    const answer = await this.#listener.request?.(wireRequest, this);
    if (this.#crashed) return undefined;
    if (answer !== undefined) return answered(answer);
    this.#forwarding += 1;
    let forwarded: Awaited<ReturnType<typeof request>>;
    let body: Buffer;
    try {
      forwarded = await request(`${this.#target}${url}`, {
        method: method as 'GET',
        headers,
        body: raw.length > 0 ? raw : undefined,
      });
      body = Buffer.from(await forwarded.body.arrayBuffer());
    } finally {
      this.#forwarding -= 1;
      if (this.#forwarding === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
    if (crashHere) {
      this.cut();
      return undefined;
    }
    await this.#listener.response?.(wireRequest, forwarded.statusCode, parseJson(body), this);
    if (this.#crashed) return undefined;
    return {
      status: forwarded.statusCode,
      headers: { ...endToEnd(forwarded.headers), 'content-length': String(body.length) },
      body,
    };
  }
}

/** An answer as the wire passes it on. */
interface Passed {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

type Pass = (
  method: string,
  url: string,
  headers: Record<string, string>,
  raw: Buffer,
) => Promise<Passed | undefined>;

/**
 * The wire as an undici dispatcher: each request goes through the wire's {@link Pass}, and its outcome reaches the
 * worker's client as an answer or, when the wire cut the worker off (or could not reach the service), as a
 * `SocketError`, what a connection closed under it shows. A request the client aborts fails at once with the
 * client's reason; the wire goes on with it, as the service would with a request already sent.
 */
class WireDispatcher extends Dispatcher {
  readonly #pass: Pass;

  constructor(pass: Pass) {
    super();
    this.#pass = pass;
  }

  /** Takes a request as the kit's client sends it: a body of text or bytes, headers in an object. */
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const raw = bodyOf(options.body);
    const headers = headersOf(options.headers);
    const controller = new WireController((reason) => handler.onResponseError?.(controller, reason as Error));
    handler.onRequestStart?.(controller, {});
    if (controller.aborted) return true;
    void this.#pass(options.method, options.path, headers, raw)
      .catch(() => undefined)
      .then((passed) => {
        if (!controller.settle()) return;
        if (passed === undefined) {
          handler.onResponseError?.(controller, new errors.SocketError('other side closed'));
          return;
        }
        handler.onResponseStart?.(
          controller,
          passed.status,
          passed.headers,
          STATUS_CODES[passed.status] ?? '',
        );
        handler.onResponseData?.(controller, passed.body);
        handler.onResponseEnd?.(controller, {});
      });
    return true;
  }

  override close(): Promise<void> {
    return Promise.resolve();
  }

  override destroy(): Promise<void> {
    return Promise.resolve();
  }
}

/** The controller of one request through the {@link WireDispatcher}: it can be aborted until its outcome is given. */
class WireController implements Dispatcher.DispatchController {
  #settled = false;
  #reason: Error | null = null;
  readonly #onAbort: (reason: unknown) => void;

  constructor(onAbort: (reason: unknown) => void) {
    this.#onAbort = onAbort;
  }

  get aborted(): boolean {
    return this.#reason !== null;
  }

  get paused(): boolean {
    return false;
  }

  get reason(): Error | null {
    return this.#reason;
  }

  abort(reason: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reason = reason;
    this.#onAbort(reason);
  }

  pause(): void {}

  resume(): void {}

  /** Takes the request's outcome over from an abort: false when it was aborted already. */
  settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    return true;
  }
}

/** A request's body, which the kit's client sends as text (or none). */
function bodyOf(body: Dispatcher.DispatchOptions['body']): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string' || body instanceof Uint8Array) return Buffer.from(body);
  throw new TypeError("the conformance kit's wire takes a body of text or bytes, as the kit's client sends");
}

/** A request's headers, which the kit's client gives as an object, without the hop-by-hop ones. */
function headersOf(headers: Dispatcher.DispatchOptions['headers']): Record<string, string> {
  if (headers === undefined || headers === null) return {};
  if (Array.isArray(headers) || Symbol.iterator in headers) {
    throw new TypeError(
      "the conformance kit's wire takes headers in an object, as the kit's client sends them",
    );
  }
  const named = headers as Record<string, string | string[] | undefined>;
  return endToEnd(
    Object.fromEntries(Object.entries(named).map(([name, value]) => [name.toLowerCase(), value])),
  );
}

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
]);

/** The headers a proxy passes on: every one but the hop-by-hop ones, each as one value. */
function endToEnd(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

/** An answer in the service's place. */
function answered(answer: WireAnswer): Passed {
  const body = Buffer.from(JSON.stringify(answer.body));
  return {
    status: answer.status,
    headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
    body,
  };
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
