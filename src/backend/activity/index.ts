/**
 * What the backend saw of each system's connector, for the console's health view: its last poll for tasks, its
 * last push of approvals, its last saved state (the end of a sync run), and its recent failures by status. Kept in
 * memory, since the backend started; the service's API does not show it. Beside it, the connector's push health, as
 * its worker last saved it in connector state.
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { type SavedPushHealth, savedPushHealthOf } from '../../internal/saved-push-health.js';
import { bearerToken } from '../http/auth.js';
import type { Store } from '../store/index.js';

/** One request a connector made, as it ended: the status it was answered, or `dropped` when it never was. */
export interface ConnectorCall {
  at: string;
  method: string;
  /** The endpoint's path pattern, `/v2/connector/tasks/:taskId`. */
  path: string;
  status: number | 'dropped';
  /** Whether an injected fault answered it. */
  injected: boolean;
}

/** The health of one system's connector, as the backend saw its requests. */
export interface ConnectorHealth {
  /** Its last Get task. */
  lastPoll?: ConnectorCall;
  /** Its last Update approval(s). */
  lastPush?: ConnectorCall;
  /** Its last Put connector state: a sync run ends by saving its state. */
  lastSync?: ConnectorCall;
  /** Failed requests (a status of 400 or more, or dropped) since the backend started, by status. */
  failuresByStatus: Record<string, number>;
  /** The last {@link RECENT_FAILURES} failed requests, newest first. */
  recentFailures: ConnectorCall[];
  /**
   * Push health, as the connector's worker last saved it in its state (`kit.push.health`): whether the source's
   * events announce what the sync finds. Absent without a push path, or before the worker saved any.
   */
  push?: SavedPushHealth;
}

/** How many failed requests are kept per system. */
export const RECENT_FAILURES = 20;

const POLL = 'GET /v2/connector/tasks';
const PUSHES = new Set(['PUT /v2/rawapprovals/:approvalId', 'PUT /v2/rawapprovals']);
const SYNC = 'PUT /v2/connector/state';

/** Records the connectors' requests as they end, and tells listeners of each one. */
export class ConnectorActivity {
  readonly #health = new Map<string, ConnectorHealth>();
  readonly #systems = new WeakMap<IncomingMessage, { id: string | undefined }>();
  readonly #injected = new WeakSet<IncomingMessage>();
  readonly #listeners = new Set<(systemId: string) => void>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  /** The system whose connector token the request carries; looked up once per request. */
  systemOf(request: IncomingMessage): string | undefined {
    let known = this.#systems.get(request);
    if (known === undefined) {
      const token = bearerToken(request.headers.authorization);
      const principal = token === undefined ? undefined : this.store.tokens.resolve(token);
      known = { id: principal?.kind === 'connector' ? principal.systemId : undefined };
      this.#systems.set(request, known);
    }
    return known.id;
  }

  /** Notes that an injected fault answers this request. */
  injected(request: IncomingMessage): void {
    this.#injected.add(request);
  }

  /** Records a request that has ended, answered with `status` or `dropped`. */
  record(request: IncomingMessage, path: string, status: number | 'dropped'): void {
    const systemId = this.systemOf(request);
    if (systemId === undefined) return;
    const call: ConnectorCall = {
      at: new Date(this.now()).toISOString(),
      method: request.method ?? 'GET',
      path,
      status,
      injected: this.#injected.has(request),
    };
    const health = this.#of(systemId);
    const route = `${call.method} ${path}`;
    if (route === POLL) health.lastPoll = call;
    else if (PUSHES.has(route)) health.lastPush = call;
    else if (route === SYNC) health.lastSync = call;
    if (status === 'dropped' || status >= 400) {
      const key = String(status);
      health.failuresByStatus[key] = (health.failuresByStatus[key] ?? 0) + 1;
      health.recentFailures.unshift(call);
      if (health.recentFailures.length > RECENT_FAILURES) health.recentFailures.pop();
    }
    for (const listener of this.#listeners) listener(systemId);
  }

  /** What the backend saw of the system's connector since it started, and its push health as last saved. */
  health(systemId: string): ConnectorHealth {
    const health = this.#health.get(systemId);
    const push = savedPushHealthOf(this.store.states.get(systemId).state);
    return {
      ...health,
      failuresByStatus: { ...health?.failuresByStatus },
      recentFailures: [...(health?.recentFailures ?? [])],
      ...(push === undefined ? {} : { push }),
    };
  }

  /** Calls `listener` with the system after each request of its connector, until the returned function is called. */
  subscribe(listener: (systemId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #of(systemId: string): ConnectorHealth {
    let health = this.#health.get(systemId);
    if (health === undefined) {
      health = { failuresByStatus: {}, recentFailures: [] };
      this.#health.set(systemId, health);
    }
    return health;
  }
}

/** Records every v1 and v2 request as it ends. */
export function registerActivityHook(app: FastifyInstance, activity: ConnectorActivity): void {
  app.addHook('onResponse', async (request, reply) => {
    if (!request.url.startsWith('/v1/') && !request.url.startsWith('/v2/')) return;
    activity.record(
      request.raw,
      request.routeOptions.url ?? request.url.split('?', 1)[0] ?? '',
      reply.statusCode,
    );
  });
}
