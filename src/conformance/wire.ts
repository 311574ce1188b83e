/**
 * The wire between a worker and the reference backend: an HTTP proxy in-process that sees every request a worker
 * sends, can hold one back while a check looks at it, and can cut the worker off at a chosen request, as a crash
 * would (`before`: the request never arrives; `after`: it arrives, its answer never comes back). A worker cut off
 * is abandoned: nothing it sends afterwards reaches the service.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

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
  readonly #server: Server;
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

  private constructor(target: string, listener: WireListener, crash: CrashPoint | undefined) {
    this.#target = target;
    this.#listener = listener;
    this.#crash = crash;
    this.crashed = new Promise((resolve) => {
      this.#onCrash = resolve;
    });
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch(() => res.destroy());
    });
  }

  /** Opens a wire to `target` (the backend's base URL) on 127.0.0.1 and a free port. */
  static async open(target: string, listener: WireListener = {}, crash?: CrashPoint): Promise<Wire> {
    const wire = new Wire(target, listener, crash);
    await new Promise<void>((resolve) => wire.#server.listen(0, '127.0.0.1', resolve));
    wire.#url = `http://127.0.0.1:${(wire.#server.address() as AddressInfo).port}`;
    return wire;
  }

  /** The base URL a worker should be given as the service's. */
  get url(): string {
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
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const index = this.#count++;
    if (this.#crashed) return void res.destroy();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const wireRequest: WireRequest = { index, method: req.method ?? 'GET', path, body: parseJson(raw) };
    const kind = kindOf(wireRequest.method, path);
    const nth = kind === undefined ? undefined : this.#counts[kind as 'push' | 'state']++;
    const crash = this.#crash;
    const crashHere =
      crash !== undefined &&
      (crash.at === 'request' ? crash.nth === index : crash.at === kind && crash.nth === nth);
    if (crashHere && !crash?.after) {
      this.cut();
      return void res.destroy();
    }
    const answer = await this.#listener.request?.(wireRequest, this);
    if (this.#crashed) return void res.destroy();
    if (answer !== undefined) return void answerWith(res, answer);
    const headers = endToEnd(req.headers);
    this.#forwarding += 1;
    let forwarded: Awaited<ReturnType<typeof request>>;
    let body: Buffer;
    try {
      forwarded = await request(`${this.#target}${req.url ?? '/'}`, {
        method: wireRequest.method as 'GET',
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
      return void res.destroy();
    }
    await this.#listener.response?.(wireRequest, forwarded.statusCode, parseJson(body), this);
    if (this.#crashed) return void res.destroy();
    res.writeHead(forwarded.statusCode, {
      ...endToEnd(forwarded.headers),
      'content-length': String(body.length),
    });
    res.end(body);
  }
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

/** Answers in the service's place. */
function answerWith(res: ServerResponse, answer: WireAnswer): void {
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
