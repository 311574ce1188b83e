/**
 * A simulated SAP system serving the task-processing service (`/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/`) on
 * loopback: exactly the calls the SAP connector makes, with SAP's basic-authentication logon, its CSRF protection
 * and its OData V2 answers and error bodies. Its inbox changes over time: new tasks, edits, reservations and
 * decisions taken in SAP itself, all drawn from a seed.
 *
 * @example
 * ```ts
 * const sap = await SapInboxSimulator.start({ seed: 7 });
 * const client = new SapInboxClient({ serviceUrl: sap.serviceUrl });
 * sap.advance(10); // ten steps of activity
 * sap.decisions(); // every decision taken, through the Decision import or in SAP
 * await sap.close();
 * ```
 * @module
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatODataDate, readLiteral } from '../src/odata.js';
import {
  APPROVERS,
  type NewTaskChoices,
  ORIGIN,
  type SimulatedDecision,
  type SimulatedEvent,
  SimulatedInbox,
  type SimulatedTask,
  type SimulatedUser,
  seededRandom,
  TECHNICAL_USER,
} from './inbox.js';
import {
  type Expandable,
  parseCount,
  parseExpand,
  parseFilter,
  parseOrderBy,
  parseTaskKey,
  QueryError,
} from './query.js';

/** Where the service lives on the simulated system, as on a real one. */
export const SERVICE_PATH = '/sap/opu/odata/IWPGW/TASKPROCESSING;mo;v=2/';

const SYSTEM = 'SIM';
const SAP_CLIENT = '100';
const SESSION_COOKIE = `SAP_SESSIONID_${SYSTEM}_${SAP_CLIENT}`;
// Sessions are kept for the CSRF check only; the oldest go first past this many.
const MAX_SESSIONS = 1_000;

/** How the simulated system starts. */
export interface SapInboxSimulatorOptions {
  /**
   * The seed all sample data and activity are drawn from.
   * @default 1
   */
  seed?: number;
  /**
   * Tasks in the inbox at the start, created over the two simulated days before it.
   * @default 12
   */
  initialTasks?: number;
  /**
   * Milliseconds between two steps of activity on their own; without it, only {@link SapInboxSimulator.advance}
   * moves the inbox.
   * @default none
   */
  activityIntervalMs?: number;
  /**
   * The port to listen on, on 127.0.0.1.
   * @default 0 (any free port)
   */
  port?: number;
  /** How the system behaves where SAP's behaviour matters to a client; see {@link SapBehaviour}. */
  behaviour?: Partial<SapBehaviour>;
}

/**
 * Where the simulated system behaves as an SAP system may, in ways a client can get wrong. The defaults are what
 * every system does; a test turns on what only some do (their customizing, their release), or changes them at any
 * time through {@link SapInboxSimulator.behaviour}. Some behaviours are always on: `sap-client` is accepted on every
 * URL, and a CSRF token is valid only with the session cookie its fetch set, for the user who fetched it.
 */
export interface SapBehaviour {
  /**
   * Decision options without a `Nature`: SAP documents it as a hint, empty where the workflow step's customizing
   * does not maintain it.
   * @default false
   */
  emptyNatures: boolean;
  /**
   * Server-side paging of the task collection: at most this many tasks per answer, however many `$top` asks for;
   * the rest of the `$top` window follows the answer's `d.__next` link (with a `$skiptoken`).
   * @default undefined (no server-side paging)
   */
  serverPageSize: number | undefined;
  /**
   * Whether a page cut by {@link SapBehaviour.serverPageSize} says so with `d.__next`. Without it, the page is only
   * shorter than `$top`, as when a service drops tasks after its database read.
   * @default true
   */
  nextLinks: boolean;
  /**
   * Answers of the task collection shorter than they could be: each holds a random 1 to n - 1 of the n tasks it
   * could (n above 1), drawn from the seed, with `d.__next` to the rest of the `$top` window when
   * {@link SapBehaviour.nextLinks} (OData's server-side paging), or without, only shorter than `$top`.
   * @default false
   */
  shortPages: boolean;
}

const DEFAULT_BEHAVIOUR: SapBehaviour = {
  emptyNatures: false,
  serverPageSize: undefined,
  nextLinks: true,
  shortPages: false,
};

/**
 * The requests of the service, as {@link SapInboxSimulator.disrupt} names them: `GET` of the service root (the
 * CSRF token's fetch), `GET TaskCollection`, `GET TaskCollection(SAP__Origin='…',InstanceID='…')` (one task),
 * `GET DecisionOptions` and `POST Decision`.
 */
export type SapCall = 'serviceDocument' | 'taskCollection' | 'task' | 'decisionOptions' | 'decision';

/**
 * What goes wrong with the requests {@link SapInboxSimulator.disrupt} takes: `'unavailable'`, the `503` of the
 * system behind the gateway; `'unauthorized'`, the logon refused (`401`, the password expired); `'forbidden'`, a
 * `403`: the CSRF token refused (`x-csrf-token: Required`) for a modifying request, no authorization for a read;
 * `'cut'`, the connection closed before any answer; `'hang'`, no answer until the disruption ends (then the request
 * is cut) or the client gives up; `{ delayMs }`, answered and carried out only that much later, and not at all when
 * the client gave up meanwhile.
 */
export type SapDisruption =
  | 'unavailable'
  | 'unauthorized'
  | 'forbidden'
  | 'cut'
  | 'hang'
  | { delayMs: number };

/** Which requests {@link SapInboxSimulator.disrupt} takes. */
export interface SapDisruptionScope {
  /** Only requests of these. @default every request */
  calls?: readonly SapCall[];
  /** Only the next this many of them. @default every one until the disruption ends */
  times?: number;
}

interface ActiveDisruption {
  disruption: SapDisruption;
  calls: readonly SapCall[] | undefined;
  left: number;
  held: Set<ServerResponse>;
}

/** One request the simulator answered, for tests that check what the client sent. */
export interface SimulatorRequest {
  method: string;
  /** The resource below the service root: '' for the root, 'TaskCollection', 'Decision', … */
  resource: string;
  /** The user the request logged on as, when the logon succeeded. */
  username: string | undefined;
  /** The `x-csrf-token` header sent, if any. */
  csrfToken: string | undefined;
  /** Whether it carried the session cookie. */
  sessionCookie: boolean;
  status: number;
}

/** A running simulated SAP system; see the module's documentation. */
export class SapInboxSimulator {
  readonly #server: Server;
  readonly #inbox: SimulatedInbox;
  readonly #users = new Map<string, SimulatedUser>();
  readonly #expired = new Set<string>();
  readonly #sessions = new Map<string, { username: string; token: string }>();
  readonly #requests: SimulatorRequest[] = [];
  #refuseTokens = 0;
  /** Whether every request is answered `503`: {@link outage}. */
  #outage = false;
  /** The requests held, unanswered, during {@link hang}. */
  #hanging: Set<ServerResponse> | undefined;
  /** Whether {@link goOffline} closed the port, to be opened again. */
  #offline = false;
  /** What {@link disrupt} set going, oldest first. */
  readonly #disruptions: ActiveDisruption[] = [];
  /** The requests a disruption holds now: {@link waiting}. */
  #waiting = 0;
  /** Draws {@link SapBehaviour.shortPages}. */
  readonly #random: () => number;
  #timer: NodeJS.Timeout | undefined;
  #url = '';
  /** How the system behaves; tests change it as they go. */
  readonly behaviour: SapBehaviour;

  private constructor(options: SapInboxSimulatorOptions) {
    this.behaviour = { ...DEFAULT_BEHAVIOUR, ...options.behaviour };
    const seed = options.seed ?? 1;
    const initialTasks = options.initialTasks ?? 12;
    if (!Number.isInteger(seed)) throw new TypeError(`Expected \`seed\` to be an integer, got \`${seed}\``);
    if (!Number.isInteger(initialTasks) || initialTasks < 0 || initialTasks > 10_000) {
      throw new TypeError(
        `Expected \`initialTasks\` to be an integer from 0 to 10000, got \`${initialTasks}\``,
      );
    }
    this.#inbox = new SimulatedInbox({ seed, initialTasks });
    this.#random = seededRandom(seed ^ 0x5eed);
    for (const user of [TECHNICAL_USER, ...APPROVERS]) this.#users.set(user.username, user);
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        // Every answer is SAP's: a failure of the simulator itself is a 500 in OData's error shape.
        if (!response.headersSent) this.#odataError(response, 500, 'SIM/500', String(error));
        else response.destroy();
      });
    });
  }

  /** Starts a simulated system on 127.0.0.1. */
  static async start(options: SapInboxSimulatorOptions = {}): Promise<SapInboxSimulator> {
    const port = options.port ?? 0;
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new TypeError(`Expected \`port\` to be an integer from 0 to 65535, got \`${port}\``);
    }
    const interval = options.activityIntervalMs;
    if (interval !== undefined && (!Number.isInteger(interval) || interval < 1)) {
      throw new TypeError(`Expected \`activityIntervalMs\` to be a positive integer, got \`${interval}\``);
    }
    const simulator = new SapInboxSimulator(options);
    simulator.#server.listen(port, '127.0.0.1');
    await once(simulator.#server, 'listening');
    const address = simulator.#server.address() as AddressInfo;
    simulator.#url = `http://127.0.0.1:${address.port}`;
    if (interval !== undefined) {
      simulator.#timer = setInterval(() => simulator.advance(), interval);
      simulator.#timer.unref();
    }
    return simulator;
  }

  /** The service root to give the client, ending in `/`. */
  get serviceUrl(): string {
    return `${this.#url}${SERVICE_PATH}`;
  }

  /** The user the connector syncs with: a substitute of every approver, so its inbox holds all their tasks. */
  get technicalUser(): { username: string; password: string } {
    return { username: TECHNICAL_USER.username, password: TECHNICAL_USER.password };
  }

  /** The approvers and their passwords. */
  get approvers(): readonly { username: string; password: string; email: string; displayName: string }[] {
    return APPROVERS.map(({ username, password, email, firstName, lastName }) => ({
      username,
      password,
      email,
      displayName: `${firstName} ${lastName}`,
    }));
  }

  /** Runs `steps` steps of activity (five simulated minutes each) and tells what each did. */
  advance(steps = 1): SimulatedEvent[] {
    if (!Number.isInteger(steps) || steps < 0) {
      throw new TypeError(`Expected \`steps\` to be a whole number, got \`${steps}\``);
    }
    return Array.from({ length: steps }, () => this.#inbox.step());
  }

  /** Every task, completed ones included. */
  tasks(): readonly SimulatedTask[] {
    return this.#inbox.tasks();
  }

  /** The tasks still waiting for a decision. */
  openTasks(): readonly SimulatedTask[] {
    return this.#inbox.tasks().filter((task) => task.status !== 'COMPLETED');
  }

  /** Every decision taken: through the Decision import (`via: 'odata'`) or in SAP itself (`via: 'activity'`). */
  decisions(): readonly SimulatedDecision[] {
    return this.#inbox.decisions();
  }

  /** Decides an open task in SAP itself, as one of its agents: it leaves the inbox. */
  decideInSap(instanceId: string, decisionKey = '0001'): SimulatedDecision {
    const task = this.#inbox.task(ORIGIN, instanceId);
    if (task === undefined || task.status === 'COMPLETED') throw new Error(`No open task ${instanceId}`);
    const option = task.options.find((candidate) => candidate.key === decisionKey);
    if (option === undefined) throw new Error(`Task ${instanceId} offers no decision ${decisionKey}`);
    const decider = task.processor ?? (task.potentialOwners[0] as SimulatedUser);
    this.#inbox.decide(task, option, decider, option.commentMandatory ? 'Decided in SAP' : '', 'activity');
    return this.#inbox.decisions().at(-1) as SimulatedDecision;
  }

  /** Reserves an open task in SAP itself, for one of its potential owners: only that user can decide it now. */
  reserveInSap(instanceId: string, username: string): void {
    const task = this.#inbox.task(ORIGIN, instanceId);
    if (task === undefined || task.status !== 'READY') throw new Error(`No ready task ${instanceId}`);
    const owner = task.potentialOwners.find((candidate) => candidate.username === username);
    if (owner === undefined) throw new Error(`${username} is no potential owner of task ${instanceId}`);
    this.#inbox.reserve(task, owner);
  }

  /** Lets the user's password expire: SAP refuses its logon from now on, as it does an expired password. */
  expirePassword(username: string): void {
    if (!this.#users.has(username)) throw new Error(`No user ${username}`);
    this.#expired.add(username);
  }

  /** The user's password is valid again (after {@link expirePassword}): an administrator reset it. */
  renewPassword(username: string): void {
    if (!this.#users.has(username)) throw new Error(`No user ${username}`);
    this.#expired.delete(username);
  }

  /**
   * A new task in the inbox, with the task definition, title, potential owners and decision options (with or without
   * a `Nature`) given, or drawn from the seed.
   */
  createTask(chosen?: NewTaskChoices): SimulatedTask {
    return this.#inbox.create(chosen);
  }

  /** Changes an open task's title in SAP itself. */
  retitleInSap(instanceId: string, title: string): void {
    const task = this.#inbox.task(ORIGIN, instanceId);
    if (task === undefined || task.status === 'COMPLETED') throw new Error(`No open task ${instanceId}`);
    this.#inbox.retitle(task, title);
  }

  /** Withdraws a task in SAP itself (its workflow logically deleted): it leaves the inbox, and reads find nothing. */
  withdrawInSap(instanceId: string): void {
    const task = this.#inbox.task(ORIGIN, instanceId);
    if (task === undefined) throw new Error(`No task ${instanceId}`);
    this.#inbox.withdraw(task);
  }

  /**
   * Refuses every CSRF token, as {@link refuseNextCsrfTokens} does the next ones, until the returned function is
   * called: every modifying request is a `403`.
   */
  refuseCsrfTokens(): () => void {
    this.#refuseTokens = Number.POSITIVE_INFINITY;
    return () => {
      this.#refuseTokens = 0;
    };
  }

  /**
   * An outage of the system behind the gateway: every request is answered `503` (SAP Gateway's OData error) until
   * the returned function is called.
   */
  outage(): () => void {
    this.#outage = true;
    return () => {
      this.#outage = false;
    };
  }

  /**
   * The system stops answering: every request is held, unanswered, until the returned function is called, which
   * cuts the held ones and answers the next requests again.
   */
  hang(): () => void {
    this.#hanging ??= new Set();
    return () => {
      for (const response of this.#hanging ?? []) response.destroy();
      this.#hanging = undefined;
    };
  }

  /**
   * The system goes off the network: its port refuses connections and open ones are cut, until the returned
   * function is called, which listens on the same port again.
   */
  async goOffline(): Promise<() => Promise<void>> {
    if (!this.#server.listening) throw new Error('the simulator is not listening');
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#offline = true;
    return async () => {
      if (!this.#offline) return;
      this.#offline = false;
      this.#server.listen(Number(new URL(this.#url).port), '127.0.0.1');
      await once(this.#server, 'listening');
    };
  }

  /**
   * Requests go wrong as `disruption` says: those of `scope.calls` (every request without), the next `scope.times`
   * of them or every one until the returned function is called, which ends it (a count not used up included) and
   * cuts the requests it holds. It comes before an {@link outage}; of two that take a request, the older.
   */
  disrupt(disruption: SapDisruption, scope: SapDisruptionScope = {}): () => void {
    if (
      typeof disruption === 'object' &&
      (!Number.isSafeInteger(disruption.delayMs) || disruption.delayMs < 0)
    ) {
      throw new TypeError(`Expected \`delayMs\` to be a whole number from 0, got \`${disruption.delayMs}\``);
    }
    const { calls, times = Number.POSITIVE_INFINITY } = scope;
    if (times !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(times) || times < 1)) {
      throw new TypeError(`Expected \`times\` to be a whole number from 1, got \`${times}\``);
    }
    const active: ActiveDisruption = { disruption, calls, left: times, held: new Set() };
    this.#disruptions.push(active);
    return () => {
      const at = this.#disruptions.indexOf(active);
      if (at >= 0) this.#disruptions.splice(at, 1);
      for (const response of active.held) response.destroy();
      active.held.clear();
    };
  }

  /** How many requests {@link disrupt} holds now, unanswered: hung, or slow and not yet carried out. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * Answers the next `count` modifying requests `403` with `x-csrf-token: Required`, as when the session behind a
   * token expired between the fetch and the POST.
   */
  refuseNextCsrfTokens(count = 1): void {
    this.#refuseTokens += count;
  }

  /** Every request answered so far, in order. */
  requests(): readonly SimulatorRequest[] {
    return [...this.#requests];
  }

  /** Stops the activity and the server; idempotent. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#offline = false;
    if (!this.#server.listening) return;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (this.#hanging !== undefined) {
      this.#hanging.add(response);
      return;
    }
    for await (const _ of request) {
      // Function imports take no body; it is read and dropped.
    }
    const url = new URL(request.url ?? '/', 'http://simulator');
    const path = decodeURIComponent(url.pathname);
    const cookies = parseCookies(request.headers.cookie);
    const record: SimulatorRequest = {
      method: request.method ?? '',
      resource: path.startsWith(SERVICE_PATH) ? path.slice(SERVICE_PATH.length) : path,
      username: undefined,
      csrfToken: header(request, 'x-csrf-token'),
      sessionCookie: cookies.has(SESSION_COOKIE),
      status: 0,
    };
    this.#requests.push(record);
    response.on('finish', () => {
      record.status = response.statusCode;
    });
    const disrupted = this.#disruptionOf(request.method ?? '', record.resource);
    if (disrupted !== undefined && !(await this.#disrupted(disrupted, request, response))) return;

    // Every URL may name the client to log on to; a client the system does not have refuses the logon.
    if (this.#outage) {
      return this.#odataError(response, 503, 'SIM/503', 'The system behind the gateway is not available');
    }
    const client = url.searchParams.get('sap-client');
    url.searchParams.delete('sap-client');
    const user =
      client !== null && client !== SAP_CLIENT
        ? `Logon failed: client ${client} does not exist`
        : this.#logOn(request);
    if (typeof user === 'string') return logonRefused(response, user);
    record.username = user.username;
    if (!path.startsWith(SERVICE_PATH)) {
      return this.#odataError(response, 404, '/IWFND/MED/170', `No service found for ${path}`);
    }
    const modifying = request.method !== 'GET' && request.method !== 'HEAD';
    if (modifying && !this.#csrfValid(request, cookies, user)) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'x-csrf-token': 'Required' });
      response.end('CSRF token validation failed');
      return;
    }
    const resource = path.slice(SERVICE_PATH.length);
    const route = `${request.method} ${resource}`;
    if (route === 'GET ') return this.#serviceDocument(request, response, user);
    if (route === 'GET TaskCollection') return this.#taskCollection(url, response, user);
    const entity = /^TaskCollection\((.*)\)$/.exec(resource);
    if (entity !== null && request.method === 'GET')
      return this.#task(entity[1] as string, url, response, user);
    if (route === 'GET DecisionOptions') return this.#decisionOptions(url, response, user);
    if (route === 'POST Decision') return this.#decision(url, response, user);
    if (entity !== null || ['', 'TaskCollection', 'DecisionOptions', 'Decision'].includes(resource)) {
      return this.#odataError(
        response,
        405,
        '/IWBEP/CM_MGW_RT/021',
        `Method ${request.method} is not allowed here`,
      );
    }
    return this.#odataError(
      response,
      404,
      '/IWBEP/CM_MGW_RT/020',
      `Resource not found for segment '${resource}'`,
    );
  }

  /** The disruption that takes this request, counted down; `undefined` when none does. */
  #disruptionOf(method: string, resource: string): ActiveDisruption | undefined {
    if (this.#disruptions.length === 0) return undefined;
    const call = callOf(method, resource);
    const at = this.#disruptions.findIndex(
      ({ calls }) => calls === undefined || (call !== undefined && calls.includes(call)),
    );
    if (at < 0) return undefined;
    const active = this.#disruptions[at] as ActiveDisruption;
    active.left -= 1;
    if (active.left <= 0) this.#disruptions.splice(at, 1);
    return active;
  }

  /** Carries a disruption out: whether the request goes on to its answer (a slow one, once through). */
  async #disrupted(
    { disruption, held }: ActiveDisruption,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<boolean> {
    switch (disruption) {
      case 'unavailable':
        this.#odataError(response, 503, 'SIM/503', 'The system behind the gateway is not available');
        return false;
      case 'unauthorized':
        logonRefused(response, 'Logon failed: the password has expired and must be changed');
        return false;
      case 'forbidden':
        if (request.method !== 'GET' && request.method !== 'HEAD') {
          response.writeHead(403, {
            'content-type': 'text/plain; charset=utf-8',
            'x-csrf-token': 'Required',
          });
          response.end('CSRF token validation failed');
        } else {
          this.#odataError(response, 403, 'SIM/403', 'No authorization to use the task-processing service');
        }
        return false;
      case 'cut':
        response.destroy();
        return false;
      case 'hang':
        held.add(response);
        this.#waiting += 1;
        response.once('close', () => {
          held.delete(response);
          this.#waiting -= 1;
        });
        return false;
      default: {
        // Slow: nothing is carried out before the delay; a client gone by then gets nothing.
        this.#waiting += 1;
        const gone = await closesWithin(response, disruption.delayMs).finally(() => {
          this.#waiting -= 1;
        });
        return !gone;
      }
    }
  }

  /** The user of the request's basic authentication, or why the logon failed. */
  #logOn(request: IncomingMessage): SimulatedUser | string {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header(request, 'authorization') ?? '');
    if (match === null) return 'Logon failed: no user name and password were sent';
    const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const user = colon < 0 ? undefined : this.#users.get(decoded.slice(0, colon).toUpperCase());
    if (user === undefined || decoded.slice(colon + 1) !== user.password) {
      return 'Logon failed: name or password is incorrect';
    }
    if (this.#expired.has(user.username)) return 'Logon failed: the password has expired and must be changed';
    return user;
  }

  #csrfValid(request: IncomingMessage, cookies: Map<string, string>, user: SimulatedUser): boolean {
    if (this.#refuseTokens > 0) {
      this.#refuseTokens -= 1;
      return false;
    }
    const session = this.#sessions.get(cookies.get(SESSION_COOKIE) ?? '');
    return (
      session !== undefined &&
      session.username === user.username &&
      session.token === header(request, 'x-csrf-token')
    );
  }

  #serviceDocument(request: IncomingMessage, response: ServerResponse, user: SimulatedUser): void {
    const headers: Record<string, string | string[]> = {};
    if (header(request, 'x-csrf-token')?.toLowerCase() === 'fetch') {
      const id = randomBytes(24).toString('base64url');
      const token = randomBytes(16).toString('base64');
      this.#sessions.set(id, { username: user.username, token });
      if (this.#sessions.size > MAX_SESSIONS)
        this.#sessions.delete(this.#sessions.keys().next().value as string);
      headers['x-csrf-token'] = token;
      headers['set-cookie'] = [
        `${SESSION_COOKIE}=${id}; path=/; HttpOnly`,
        `sap-usercontext=sap-client=${SAP_CLIENT}; path=/`,
      ];
    }
    this.#json(response, 200, { d: { EntitySets: ENTITY_SETS } }, headers);
  }

  #taskCollection(url: URL, response: ServerResponse, user: SimulatedUser): void {
    let filter: ((task: SimulatedTask) => boolean) | undefined;
    let order: ((a: SimulatedTask, b: SimulatedTask) => number) | undefined;
    let skip = 0;
    let top: number | undefined;
    let skipToken = 0;
    let expand = new Set<Expandable>();
    try {
      for (const [name, value] of url.searchParams) {
        if (name === '$filter') filter = parseFilter(value);
        else if (name === '$orderby') order = parseOrderBy(value);
        else if (name === '$skip') skip = parseCount(name, value);
        else if (name === '$top') top = parseCount(name, value);
        else if (name === '$skiptoken') skipToken = parseCount(name, value);
        else if (name === '$expand') expand = parseExpand(value);
        else if (name === '$format' && value === 'json') continue;
        else if (name.startsWith('$'))
          throw new QueryError(`The system query option ${name} is not supported here`);
      }
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      this.#odataError(response, 400, '/IWBEP/CM_MGW_RT/004', error.message);
      return;
    }
    let tasks = this.#inbox.tasks().filter((task) => this.#sees(user, task) && (filter?.(task) ?? true));
    if (order !== undefined) tasks = tasks.sort(order);
    // The window $skip/$top asks for; with server-side paging, the part of it from $skiptoken on.
    const window = tasks.slice(skip, top === undefined ? undefined : skip + top);
    const pageSize = this.behaviour.serverPageSize;
    let size = Math.min(pageSize ?? Number.POSITIVE_INFINITY, window.length - skipToken);
    if (this.behaviour.shortPages && size > 1) size = 1 + Math.floor(this.#random() * (size - 1));
    const page = window.slice(skipToken, skipToken + Math.max(size, 0));
    const d: Record<string, unknown> = { results: page.map((task) => this.#taskEntity(task, expand)) };
    if (skipToken + page.length < window.length && this.behaviour.nextLinks) {
      const next = new URL(`${this.serviceUrl}TaskCollection`);
      for (const [name, value] of url.searchParams)
        if (name !== '$skiptoken') next.searchParams.append(name, value);
      next.searchParams.set('$skiptoken', String(skipToken + page.length));
      d.__next = next.href;
    }
    this.#json(response, 200, { d });
  }

  /** One task by its key, completed or not, when the user may see it. */
  #task(key: string, url: URL, response: ServerResponse, user: SimulatedUser): void {
    let origin: string;
    let instanceId: string;
    try {
      ({ origin, instanceId } = parseTaskKey(key));
      for (const [name, value] of url.searchParams) {
        if (name === '$format' && value === 'json') continue;
        throw new QueryError(`The query option ${name} is not supported here`);
      }
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      this.#odataError(response, 400, '/IWBEP/CM_MGW_RT/004', error.message);
      return;
    }
    const task = this.#visibleTask(origin, instanceId, response, user);
    if (task !== undefined) this.#json(response, 200, { d: this.#taskEntity(task, new Set()) });
  }

  #decisionOptions(url: URL, response: ServerResponse, user: SimulatedUser): void {
    const found = this.#taskOf(url, response, user);
    if (found === undefined) return;
    this.#json(response, 200, {
      d: {
        results: found.options.map((option) => ({
          __metadata: { type: 'TASKPROCESSING.DecisionOption' },
          InstanceID: found.instanceId,
          DecisionKey: option.key,
          DecisionText: option.text,
          CommentMandatory: option.commentMandatory,
          Nature: this.behaviour.emptyNatures ? '' : option.nature,
        })),
      },
    });
  }

  #decision(url: URL, response: ServerResponse, user: SimulatedUser): void {
    const task = this.#taskOf(url, response, user);
    if (task === undefined) return;
    const key = readLiteral(url.searchParams.get('DecisionKey') ?? '');
    const comments = readLiteral(url.searchParams.get('Comments') ?? '');
    if (key === undefined || comments === undefined) {
      const missing = key === undefined ? 'DecisionKey' : 'Comments';
      this.#odataError(
        response,
        400,
        '/IWBEP/CM_MGW_RT/105',
        `Parameter ${missing} is missing or not a string`,
      );
      return;
    }
    if (task.status === 'COMPLETED') {
      this.#odataError(response, 400, 'SIM/TASK_COMPLETED', `Task ${task.instanceId} is already completed`);
      return;
    }
    if (task.status === 'RESERVED' && task.processor?.username !== user.username && user !== TECHNICAL_USER) {
      this.#odataError(
        response,
        400,
        'SIM/TASK_RESERVED',
        `Task ${task.instanceId} is reserved by ${task.processor?.username}; only that user can decide it`,
      );
      return;
    }
    const option = task.options.find((candidate) => candidate.key === key);
    if (option === undefined) {
      this.#odataError(
        response,
        400,
        'SIM/NO_SUCH_DECISION',
        `Task ${task.instanceId} offers no decision ${key}`,
      );
      return;
    }
    if (option.commentMandatory && comments.trim() === '') {
      this.#odataError(
        response,
        400,
        'SIM/COMMENT_REQUIRED',
        `Enter a comment to ${option.text.toLowerCase()}`,
      );
      return;
    }
    this.#inbox.decide(task, option, user, comments, 'odata');
    this.#json(response, 200, { d: this.#taskEntity(task, new Set()) });
  }

  /** The task a function import names, when the user may see it; otherwise answers the refusal. */
  #taskOf(url: URL, response: ServerResponse, user: SimulatedUser): SimulatedTask | undefined {
    const origin = readLiteral(url.searchParams.get('SAP__Origin') ?? '');
    const instanceId = readLiteral(url.searchParams.get('InstanceID') ?? '');
    if (origin === undefined || instanceId === undefined) {
      const missing = origin === undefined ? 'SAP__Origin' : 'InstanceID';
      this.#odataError(
        response,
        400,
        '/IWBEP/CM_MGW_RT/105',
        `Parameter ${missing} is missing or not a string`,
      );
      return undefined;
    }
    return this.#visibleTask(origin, instanceId, response, user);
  }

  /** The task, when the user may see it; otherwise answers `404`, as SAP does for a task of someone else. */
  #visibleTask(
    origin: string,
    instanceId: string,
    response: ServerResponse,
    user: SimulatedUser,
  ): SimulatedTask | undefined {
    const task = this.#inbox.task(origin, instanceId);
    if (task === undefined || !this.#sees(user, task)) {
      this.#odataError(response, 404, 'SIM/TASK_NOT_FOUND', `Task ${instanceId} of ${origin} was not found`);
      return undefined;
    }
    return task;
  }

  /** The technical user substitutes every approver; an approver sees the tasks it is an agent of. */
  #sees(user: SimulatedUser, task: SimulatedTask): boolean {
    if (user === TECHNICAL_USER) return true;
    return task.potentialOwners.includes(user) || task.processor === user;
  }

  #taskEntity(task: SimulatedTask, expand: ReadonlySet<Expandable>): Record<string, unknown> {
    const root = this.serviceUrl;
    const key = `TaskCollection(SAP__Origin='${task.origin}',InstanceID='${task.instanceId}')`;
    const reserved = task.status === 'RESERVED';
    const entity: Record<string, unknown> = {
      __metadata: {
        id: `${root}${key}`,
        uri: `${root}${key}`,
        type: 'TASKPROCESSING.Task',
        content_type: 'application/octet-stream',
        media_src: `${root}${key}/$value`,
      },
      TaskSupports: {
        __metadata: { type: 'TASKPROCESSING.TaskSupports' },
        ...Object.fromEntries(SUPPORTED.map((name) => [name, true])),
        CancelResubmission: false,
        Confirm: false,
        Claim: task.status === 'READY',
        Forward: true,
        Release: reserved,
        Resubmit: true,
        SetPriority: false,
      },
      SAP__Origin: task.origin,
      InstanceID: task.instanceId,
      TaskDefinitionID: task.definition.id,
      TaskDefinitionName: task.definition.name,
      TaskTitle: task.title,
      Priority: task.priority,
      Status: task.status,
      StatusText: '',
      CreatedOn: formatODataDate(task.createdOn),
      CreatedBy: task.createdBy.username,
      CreatedByName: displayName(task.createdBy),
      Processor: task.processor?.username ?? '',
      ProcessorName: task.processor === undefined ? '' : displayName(task.processor),
      SubstitutedUser: '',
      SubstitutedUserName: '',
      StartDeadLine: null,
      CompletionDeadLine: task.dueOn === undefined ? null : formatODataDate(task.dueOn),
      ExpiryDate: null,
      IsEscalated: false,
      SupportsComments: true,
      HasComments: false,
      SupportsAttachments: true,
      HasAttachments: false,
      HasPotentialOwners: true,
      SupportsClaim: task.status === 'READY',
      SupportsRelease: reserved,
      SupportsForward: true,
      GUI_Link: '',
    };
    for (const navigation of NAVIGATIONS)
      entity[navigation] = { __deferred: { uri: `${root}${key}/${navigation}` } };
    if (expand.has('PotentialOwners')) {
      entity.PotentialOwners = { results: task.potentialOwners.map((owner) => this.#userEntity(owner)) };
    }
    if (expand.has('CustomAttributeData')) {
      entity.CustomAttributeData = {
        results: task.attributes.map(([name, value]) => {
          const uri = `${root}CustomAttributeCollection(SAP__Origin='${task.origin}',InstanceID='${task.instanceId}',Name='${name}')`;
          return {
            __metadata: { id: uri, uri, type: 'TASKPROCESSING.CustomAttribute' },
            SAP__Origin: task.origin,
            InstanceID: task.instanceId,
            Name: name,
            Value: value,
          };
        }),
      };
    }
    return entity;
  }

  #userEntity(user: SimulatedUser): Record<string, unknown> {
    const uri = `${this.serviceUrl}UserInfoCollection(SAP__Origin='${ORIGIN}',UniqueName='${user.username}')`;
    return {
      __metadata: {
        id: uri,
        uri,
        type: 'TASKPROCESSING.UserInfo',
        content_type: 'application/octet-stream',
        media_src: `${uri}/$value`,
        edit_media: `${uri}/$value`,
      },
      SAP__Origin: ORIGIN,
      Address: {
        __metadata: { type: 'TASKPROCESSING.Address' },
        Street: null,
        StreetNumber: null,
        City: null,
        PostalCode: null,
        State: null,
        Country: '',
      },
      UniqueName: user.username,
      DisplayName: displayName(user),
      FirstName: user.firstName,
      LastName: user.lastName,
      Email: user.email,
      WorkPhone: null,
      MobilePhone: null,
      mime_type: null,
    };
  }

  #json(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string | string[]> = {},
  ): void {
    response.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      dataserviceversion: '2.0',
      ...headers,
    });
    response.end(JSON.stringify(body));
  }

  /** An OData V2 error as SAP Gateway writes it (`error.code`, `error.message`, `innererror`). */
  #odataError(response: ServerResponse, status: number, code: string, message: string): void {
    this.#json(response, status, {
      error: {
        code,
        message: { lang: 'en', value: message },
        innererror: {
          application: {
            component_id: 'CA-INB-FIO',
            service_namespace: '/IWPGW/',
            service_id: 'TASKPROCESSING',
            service_version: '0002',
          },
          transactionid: randomBytes(16).toString('hex').toUpperCase(),
          timestamp: this.#inbox
            .now()
            .toISOString()
            .replace(/[-:T]/g, '')
            .replace(/\.(\d{3})Z$/, '.$10000'),
          errordetails: [{ code, message, propertyref: '', severity: 'error', target: '' }],
        },
      },
    });
  }
}

/** Which of the service's requests this is; `undefined` for one it does not serve. */
function callOf(method: string, resource: string): SapCall | undefined {
  if (resource === '' && method === 'GET') return 'serviceDocument';
  if (resource === 'TaskCollection' && method === 'GET') return 'taskCollection';
  if (/^TaskCollection\(.*\)$/.test(resource) && method === 'GET') return 'task';
  if (resource === 'DecisionOptions' && method === 'GET') return 'decisionOptions';
  if (resource === 'Decision' && method === 'POST') return 'decision';
  return undefined;
}

/** Whether the request's connection closes (its client gave up) within `ms`. */
function closesWithin(response: ServerResponse, ms: number): Promise<boolean> {
  if (response.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const closed = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      response.off('close', closed);
      resolve(false);
    }, ms);
    response.once('close', closed);
  });
}

/** SAP's answer to a failed logon: `401` with a basic-authentication challenge and an HTML page. */
function logonRefused(response: ServerResponse, reason: string): void {
  response.writeHead(401, {
    'content-type': 'text/html; charset=utf-8',
    'www-authenticate': `Basic realm="SAP NetWeaver Application Server [${SYSTEM}/${SAP_CLIENT}]"`,
  });
  response.end(`<html><head><title>Logon Error Message</title></head><body><p>${reason}</p></body></html>`);
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function parseCookies(text: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (text ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0) cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
  return cookies;
}

function displayName(user: SimulatedUser): string {
  return `${user.firstName} ${user.lastName}`;
}

const ENTITY_SETS = [
  'TaskCollection',
  'SubstitutionRuleCollection',
  'SubstitutesRuleCollection',
  'CustomAttributeDefinitionCollection',
  'FilterOptionCollection',
  'TaskDescriptionCollection',
  'UIExecutionCollection',
  'CustomAttributeCollection',
  'TaskDefinitionCollection',
  'UserInfoCollection',
  'SubstitutedUsersCollection',
  'ObjectLinkExecutionCollection',
  'CommentsCollection',
];

const SUPPORTED = [
  'AddAttachments',
  'AddComments',
  'Attachments',
  'Comments',
  'CreatedByDetails',
  'CustomAttributeData',
  'Description',
  'PossibleAgents',
  'PotentialOwners',
  'ProcessingLogs',
  'ProcessorDetails',
  'TaskDefinitionData',
  'TaskObject',
  'UIExecutionLink',
];

const NAVIGATIONS = [
  'TaskDefinitionData',
  'Description',
  'UIExecutionLink',
  'CustomAttributeData',
  'Comments',
  'Attachments',
  'CreatedByDetails',
  'ProcessorDetails',
  'PossibleAgents',
  'PotentialOwners',
  'ProcessingLogs',
  'TaskObjects',
];
