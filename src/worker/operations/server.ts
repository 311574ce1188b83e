/**
 * The connector's operations port: liveness, readiness and Prometheus metrics over plain `node:http`. It knows the
 * connector only through callbacks. See `docs/operations.md`.
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { ApprovalKitError } from '../../errors.js';
import { listen } from '../../internal/listen.js';
import {
  func,
  host,
  type OptionsShape,
  parseOptions,
  pinoLogger,
  port,
  type Resolved,
  withMethods,
} from '../../internal/options.js';
import type { PinoLogger } from './logger.js';
import type { RenderedMetrics } from './metrics.js';

/** What `/healthz` reports. */
export interface HealthReport {
  /** `false` (the connector failed or stopped) turns `/healthz` into a 503, so an orchestrator restarts it. */
  healthy: boolean;
  /** The connector's lifecycle state, shown in the answer's body. */
  state: string;
}

/**
 * One part of the connector as `/readyz` details it: its `status` (`ok` while it is well, `off` where it does not run
 * in this worker, a word for what is wrong otherwise) and what it shows, as JSON.
 */
export interface ReadinessCheck {
  status: string;
  [field: string]: unknown;
}

/** What `/readyz` reports. */
export interface ReadinessReport {
  ready: boolean;
  /** Why the connector is not ready, shown in the 503 answer's body. */
  reason?: string;
  /** The connector's parts, each by its name, shown in both answers' bodies as `checks`. */
  checks?: Record<string, ReadinessCheck>;
}

/** Options of {@link OperationsServer}. */
export interface OperationsServerOptions {
  /**
   * TCP port to listen on. `0` picks a free port; read it from the URL that `start()` returns.
   * @default 9464
   */
  port?: number;
  /**
   * Interface to listen on. The default keeps the port off the network; in a container, probes and scrapes come
   * from outside it, so use `'0.0.0.0'` (or `'::'`) there.
   * @default '127.0.0.1'
   */
  host?: string;
  /** Answers `/healthz`. Called on every request; may be async. */
  health: () => HealthReport | Promise<HealthReport>;
  /** Answers `/readyz`. Called on every request; may be async. */
  isReady: () => ReadinessReport | Promise<ReadinessReport>;
  /** Renders `/metrics`, typically {@link ConnectorMetrics}. */
  metrics: { render(): Promise<RenderedMetrics> };
  /**
   * Where a callback that throws is logged.
   * @default nothing is logged
   */
  logger?: PinoLogger;
}

/** The operations server was closed; it cannot start again. */
export class OperationsServerClosedError extends ApprovalKitError<'operations_server_closed'> {
  constructor() {
    super('operations_server_closed', 'The operations server was closed; create a new one');
  }
}

/** The operations server could not listen on its port (in use, or not allowed). */
export class OperationsServerListenError extends ApprovalKitError<'operations_server_listen'> {
  constructor(host: string, port: number, options: { cause: unknown }) {
    const reason = (options.cause as { code?: unknown } | undefined)?.code;
    super(
      'operations_server_listen',
      `The operations server cannot listen on ${host}:${port}${typeof reason === 'string' ? ` (${reason})` : ''}`,
      options,
    );
  }
}

/** Operations server options with every default applied. */
export type ResolvedOperationsServerOptions = Resolved<OperationsServerOptions, 'logger'>;

/** The schema of {@link OperationsServerOptions}: checks them and applies every default. */
export const operationsServerOptionsSchema = z.strictObject({
  port: port().default(9464),
  host: host().default('127.0.0.1'),
  health: func<OperationsServerOptions['health']>(),
  isReady: func<OperationsServerOptions['isReady']>(),
  metrics: withMethods<OperationsServerOptions['metrics']>('an object with a render() method', 'render'),
  logger: pinoLogger().optional(),
} satisfies OptionsShape<OperationsServerOptions, ResolvedOperationsServerOptions>);

const ALLOWED_METHODS = 'GET, HEAD';

/**
 * A small HTTP server for orchestrators and Prometheus: `GET /healthz`, `GET /readyz` and `GET /metrics`.
 *
 * @example
 * <!-- example: typecheck, because the connector is a worker's -->
 * ```ts
 * import { OperationsServer } from 'approval-connector-kit/worker';
 *
 * // A ConnectorWorker opens one itself with its `operations` option; this is the same for a program of your own.
 * const server = new OperationsServer({
 *   port: 9464,
 *   health: () => ({ healthy: worker.lifecycle !== 'failed', state: worker.lifecycle }),
 *   isReady: () => (worker.ready ? { ready: true } : { ready: false, reason: worker.lifecycle }),
 *   metrics: worker.metrics,
 * });
 * const { url } = await server.start();
 * // ... later
 * await server.close();
 * ```
 */
export class OperationsServer {
  readonly #options: ResolvedOperationsServerOptions;
  readonly #server: Server;
  #starting: Promise<{ url: string }> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: OperationsServerOptions) {
    this.#options = parseOptions(operationsServerOptionsSchema, options, 'operations server options');
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => this.#fail(request, response, error));
    });
  }

  /**
   * Starts listening. Resolves with the base URL once the port is open; a second call answers the same.
   * Rejects with {@link OperationsServerListenError} when the port cannot be opened, and with
   * {@link OperationsServerClosedError} after `close()`.
   */
  start(): Promise<{ url: string }> {
    if (this.#closing !== undefined) return Promise.reject(new OperationsServerClosedError());
    const { port, host } = this.#options;
    this.#starting ??= listen(this.#server, port, host).then(
      (url) => ({ url }),
      (cause: unknown) => {
        // A later start() may try again, say once the port is free.
        this.#starting = undefined;
        throw new OperationsServerListenError(host, port, { cause });
      },
    );
    return this.#starting;
  }

  /** Stops listening and waits for answers in progress. Idempotent; after it, `start()` rejects. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    // A start() in progress would otherwise open the port after this close() resolved.
    await this.#starting?.catch(() => undefined);
    if (!this.#server.listening) return;
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      // Idle keep-alive connections of a scraper would otherwise hold close() open until they time out.
      this.#server.closeIdleConnections();
    });
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const route = ROUTES.get(path);
    if (route === undefined) {
      send(response, 404, { status: 'not found' });
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(response, 405, { status: 'method not allowed' }, { allow: ALLOWED_METHODS });
      return;
    }
    await route(this.#options, response, (error) => this.#log(path, error));
  }

  #log(path: string, error: unknown): void {
    this.#options.logger?.warn({ err: error, path }, 'operations check failed');
  }

  #fail(request: IncomingMessage, response: ServerResponse, error: unknown): void {
    this.#log(request.url ?? '', error);
    if (response.headersSent) response.destroy();
    else send(response, 500, { status: 'error' });
  }
}

type Route = (
  options: Pick<OperationsServerOptions, 'health' | 'isReady' | 'metrics'>,
  response: ServerResponse,
  log: (error: unknown) => void,
) => Promise<void>;

const ROUTES = new Map<string, Route>([
  [
    '/healthz',
    async ({ health }, response, log) => {
      const report = await settle(health, log);
      if (report === undefined) send(response, 503, { status: 'unhealthy', reason: 'health check failed' });
      else
        send(response, report.healthy ? 200 : 503, {
          status: report.healthy ? 'ok' : 'unhealthy',
          state: report.state,
        });
    },
  ],
  [
    '/readyz',
    async ({ isReady }, response, log) => {
      const report = await settle(isReady, log);
      const checks = report?.checks === undefined ? {} : { checks: report.checks };
      if (report?.ready === true) send(response, 200, { status: 'ready', ...checks });
      else {
        const reason = report?.reason ?? 'readiness check failed';
        send(response, 503, { status: 'not ready', reason, ...checks });
      }
    },
  ],
  [
    '/metrics',
    async ({ metrics }, response) => {
      const { contentType, body } = await metrics.render();
      response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      response.end(body);
    },
  ],
]);

// A probe callback that throws answers "not healthy/ready" instead of a 500, so an orchestrator acts on it.
async function settle<T>(check: () => T | Promise<T>, log: (error: unknown) => void): Promise<T | undefined> {
  try {
    return await check();
  } catch (error) {
    log(error);
    return undefined;
  }
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(JSON.stringify(body));
}
