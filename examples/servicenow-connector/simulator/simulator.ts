/**
 * A simulated ServiceNow instance serving the Table API (`/api/now/table/{tableName}`) on loopback: exactly the
 * calls the connector makes, with the instance's basic authentication, its ACLs, its paging (`sysparm_limit`,
 * `sysparm_offset`, the `Link` and `X-Total-Count` headers), its display values and its error bodies
 * (`{"error": {"message", "detail"}, "status": "failure"}`). Its records change over time (changes raised, items
 * ordered, edits, decisions taken in ServiceNow itself, cancellations), all drawn from a seed, and it calls out to
 * the push path's URL as the README's business rules do.
 *
 * It fails the way an instance does, each way a switch (`behaviour`): pages capped below `sysparm_limit`,
 * `sys_updated_on` collisions at one-second precision, records that change while a read pages through them, a rate
 * limit (`429` with `Retry-After`), an ACL's `403`, a locked-out user's refused sign-in, an approval cancelled while
 * its decision is on its way.
 *
 * @example
 * ```ts
 * const now = await ServiceNowSimulator.start({ seed: 7 });
 * const client = new ServiceNowClient({ instanceUrl: now.url, ...now.integrationUser });
 * now.advance(3); // three steps of activity
 * now.decisions(); // every decision taken, through the Table API or in ServiceNow itself
 * await now.close();
 * ```
 * @module
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BusinessRuleCallout, type CalloutBehaviour, type Delivery, type PushTarget } from './callout.js';
import { type AnsweredFault, type Fault, type FaultScope, Faults, type TableCall } from './faults.js';
import {
  APPROVERS,
  INTEGRATION_USER,
  type NewRecordChoices,
  type Row,
  type SimulatedDecision,
  type SimulatedEvent,
  SimulatedInstance,
} from './instance.js';
import { parseQuery, QueryError } from './query.js';
import { Rendering } from './rendering.js';
import { TABLES } from './tables.js';

/** How the simulated instance starts. */
export interface ServiceNowSimulatorOptions {
  /** The seed every record and every step of activity is drawn from. @default 1 */
  seed?: number;
  /** Approved records (changes, items) waiting for approval at the start, raised over the hours before. @default 8 */
  requests?: number;
  /** The instance's clock, in milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** Milliseconds between two steps of activity on their own; without it, only {@link ServiceNowSimulator.advance}. */
  activityIntervalMs?: number;
  /** The port to listen on, on 127.0.0.1. @default 0 (any free port) */
  port?: number;
  /** The switches; see {@link ServiceNowBehaviour}. */
  behaviour?: Partial<ServiceNowBehaviour>;
  /** Where the push path's business rules post, and the secret they sign with. @default none: no callouts */
  push?: PushTarget;
}

/**
 * Where the instance behaves as a ServiceNow instance may, in ways a client can get wrong; the defaults are what an
 * instance does by default. A test turns one on at the start or at any time through
 * {@link ServiceNowSimulator.behaviour}.
 */
export interface ServiceNowBehaviour {
  /**
   * No page holds more records than this, whatever `sysparm_limit` asks: its `Link` to the next page starts after
   * the records it answered.
   * @default undefined
   */
  pageCap: number | undefined;
  /** Every change is stamped with one second of `sys_updated_on` while on: collisions at one-second precision. */
  collisions: boolean;
  /**
   * Records change while a read pages through them: before each list call that follows another of the same user,
   * the first record that call answered is updated (its `sys_updated_on` and `sys_mod_count` move), until this
   * many were.
   * @default 0
   */
  changesWhilePaging: number;
  /**
   * A rate limit rule: a bucket of `capacity` calls refilled at `refillPerSecond` (on the real clock). A call that
   * finds it empty is answered `429`, with `Retry-After` (whole seconds until a call is allowed),
   * `X-RateLimit-Limit`, `X-RateLimit-Reset` and `X-RateLimit-Rule`, as ServiceNow answers.
   * @default undefined
   */
  rateLimit: { capacity: number; refillPerSecond: number } | undefined;
  /** Every update is refused `403` by an ACL. @default false */
  aclRefusesUpdates: boolean;
  /**
   * An approval is cancelled by its workflow while its decision is on its way: an update of a requested approval's
   * state finds it cancelled, and the instance's rule refuses it (`403`, "Operation Failed").
   * @default false
   */
  cancelDuringDecision: boolean;
}

const DEFAULT_BEHAVIOUR: ServiceNowBehaviour = {
  pageCap: undefined,
  collisions: false,
  changesWhilePaging: 0,
  rateLimit: undefined,
  aclRefusesUpdates: false,
  cancelDuringDecision: false,
};

/** The query parameters the Table API documents for the calls the simulator serves. */
const LIST_PARAMETERS = new Set([
  'sysparm_query',
  'sysparm_display_value',
  'sysparm_exclude_reference_link',
  'sysparm_fields',
  'sysparm_limit',
  'sysparm_offset',
  'sysparm_no_count',
  'sysparm_suppress_pagination_header',
  'sysparm_view',
  'sysparm_query_category',
  'sysparm_query_no_domain',
]);
const RECORD_PARAMETERS = new Set([
  'sysparm_display_value',
  'sysparm_exclude_reference_link',
  'sysparm_fields',
  'sysparm_view',
  'sysparm_query_no_domain',
]);
const UPDATE_PARAMETERS = new Set([
  'sysparm_display_value',
  'sysparm_fields',
  'sysparm_input_display_value',
  'sysparm_view',
  'sysparm_query_no_domain',
]);

/** One call the simulator answered, for tests that check what the client sent. */
export interface SimulatorRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  call: TableCall | undefined;
  /** The user the call signed in as, when the sign-in succeeded. */
  userName: string | undefined;
  status: number;
}

/** A running simulated instance; see the module's documentation. */
export class ServiceNowSimulator {
  readonly #server: Server;
  readonly #instance: SimulatedInstance;
  readonly #rendering: Rendering;
  readonly #faults = new Faults();
  readonly #callout: BusinessRuleCallout;
  readonly #requests: SimulatorRequest[] = [];
  /** Records the integration user's ACLs no longer let it read. */
  readonly #hidden = new Set<string>();
  /** Each user's last list call: what {@link ServiceNowBehaviour.changesWhilePaging} changes. */
  readonly #lastListed = new Map<string, { table: string; first: string | undefined }>();
  #bucket: { tokens: number; at: number } | undefined;
  #rateLimited = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Whether {@link close} was called: the port is not opened again. */
  #closed = false;
  #url = '';
  /** The switches; tests change them as they go. */
  readonly behaviour: ServiceNowBehaviour;

  private constructor(options: ServiceNowSimulatorOptions) {
    const seed = options.seed ?? 1;
    const requests = options.requests ?? 8;
    if (!Number.isSafeInteger(seed))
      throw new TypeError(`Expected \`seed\` to be an integer, got \`${seed}\``);
    if (!Number.isSafeInteger(requests) || requests < 0 || requests > 5000) {
      throw new TypeError(`Expected \`requests\` to be an integer from 0 to 5000, got \`${requests}\``);
    }
    const clock = options.now ?? Date.now;
    const behaviour = { ...DEFAULT_BEHAVIOUR, ...options.behaviour };
    this.#instance = new SimulatedInstance({
      seed,
      requests,
      now: clock,
      collisions: () => behaviour.collisions,
    });
    this.behaviour = behaviour;
    this.#rendering = new Rendering(this.#instance, () => this.#url);
    this.#callout = new BusinessRuleCallout(options.push);
    this.#instance.onChange = (table, row, operation) => this.#callout.fire(table, row, operation);
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        // Every answer is the instance's: a failure of the simulator itself is a 500 in its error shape.
        if (!response.headersSent) this.#error(response, 500, 'Internal Server Error', String(error));
        else response.destroy();
      });
    });
  }

  /** Starts a simulated instance on 127.0.0.1. */
  static async start(options: ServiceNowSimulatorOptions = {}): Promise<ServiceNowSimulator> {
    const port = options.port ?? 0;
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new TypeError(`Expected \`port\` to be an integer from 0 to 65535, got \`${port}\``);
    }
    const interval = options.activityIntervalMs;
    if (interval !== undefined && !(Number.isSafeInteger(interval) && interval >= 1)) {
      throw new TypeError(`Expected \`activityIntervalMs\` to be a positive integer, got \`${interval}\``);
    }
    const simulator = new ServiceNowSimulator(options);
    await simulator.#listen(port);
    simulator.#url = `http://127.0.0.1:${(simulator.#server.address() as AddressInfo).port}`;
    if (interval !== undefined) simulator.#timer = setInterval(() => simulator.advance(), interval).unref();
    return simulator;
  }

  /** The instance's URL, to give the client (`SERVICENOW_INSTANCE_URL`). */
  get url(): string {
    return this.#url;
  }

  /** The integration user the connector syncs with. */
  get integrationUser(): { username: string; password: string } {
    return { username: INTEGRATION_USER.userName, password: INTEGRATION_USER.password };
  }

  /** The approvers: their sys_id (the service's approver id), user name, password, name and email. */
  get approvers(): readonly {
    sysId: string;
    username: string;
    password: string;
    name: string;
    email: string;
  }[] {
    return APPROVERS.map(({ sysId, userName, password, firstName, lastName, email }) => ({
      sysId,
      username: userName,
      password,
      name: `${firstName} ${lastName}`,
      email,
    }));
  }

  /** The connector's variables for this instance: its URL and the integration user. */
  connectorEnv(): Record<string, string> {
    return {
      SERVICENOW_INSTANCE_URL: this.#url,
      SERVICENOW_USER: INTEGRATION_USER.userName,
      SERVICENOW_PASSWORD: INTEGRATION_USER.password,
    };
  }

  /** Runs `steps` steps of activity and tells what each did. */
  advance(steps = 1): SimulatedEvent[] {
    if (!Number.isSafeInteger(steps) || steps < 0) {
      throw new TypeError(`Expected \`steps\` to be a whole number, got \`${steps}\``);
    }
    return Array.from({ length: steps }, () => this.#instance.step());
  }

  /** The records of a table (a copy), as the instance holds them: values, in the order they were inserted. */
  records(table: string): Row[] {
    return (this.#instance.rows(table) ?? []).map((row) => ({ ...row }));
  }

  /**
   * A record's display values as the integration user reads them (choices by their labels, references by the
   * referenced record's display field, date-times in its time zone); `undefined` when there is no such record.
   */
  displayValues(table: string, sysId: string): Record<string, string> | undefined {
    const row = this.#instance.row(table, sysId);
    const viewer = this.#instance.row('sys_user', INTEGRATION_USER.sysId);
    if (row === undefined || viewer === undefined) return undefined;
    const params = new URLSearchParams({
      sysparm_display_value: 'true',
      sysparm_exclude_reference_link: 'true',
    });
    return this.#rendering.render(table, row, params, viewer) as Record<string, string>;
  }

  /** The approval records still waiting for their approver. */
  waitingApprovals(): Row[] {
    return this.records('sysapproval_approver').filter((row) => row.state === 'requested');
  }

  /** Every decision taken: through the Table API (`via: 'api'`) or in ServiceNow itself (`via: 'ui'`). */
  decisions(): readonly SimulatedDecision[] {
    return this.#instance.decisions();
  }

  /** The comments added to approval records, oldest first. */
  comments(): readonly { approval: string; userName: string; text: string }[] {
    return this.#instance.comments();
  }

  /** A change request or requested item waiting for approval, its approvers and title chosen or drawn. */
  raise(choices?: NewRecordChoices): { table: string; sysId: string; number: string; approvals: string[] } {
    return this.#instance.raise(choices);
  }

  /** Changes a record's short description in ServiceNow itself. */
  retitle(table: string, sysId: string, title: string): void {
    this.#instance.update(table, sysId, { short_description: title }, 'admin');
  }

  /** Decides a waiting approval in ServiceNow itself, as its approver. */
  decideInServiceNow(approvalId: string, state: 'approved' | 'rejected' = 'approved', comment = ''): void {
    const approval = this.#instance.row('sysapproval_approver', approvalId);
    if (approval?.state !== 'requested') throw new Error(`No approval ${approvalId} waits`);
    const userName = this.#instance.row('sys_user', approval.approver ?? '')?.user_name ?? 'admin';
    this.#instance.decide(approvalId, state, userName, comment, 'ui');
  }

  /** Cancels a record waiting for approval: its requested approvals are cancelled. */
  cancel(table: string, sysId: string): void {
    this.#instance.cancel(table, sysId);
  }

  /** Deletes a record (an approval record, or an approved record with its approval records). */
  delete(table: string, sysId: string): void {
    this.#instance.delete(table, sysId);
  }

  /** An ACL stops letting the integration user read this record: lists leave it out, a read of it is a `404`. */
  hide(sysId: string): void {
    this.#hidden.add(sysId);
  }

  /** The integration user may read the record again. */
  show(sysId: string): void {
    this.#hidden.delete(sysId);
  }

  /** Locks a user out (`locked_out`): the instance refuses their sign-in (`401`) until {@link unlock}. */
  lockOut(userName: string): void {
    this.#setUserFlag(userName, 'true');
  }

  unlock(userName: string): void {
    this.#setUserFlag(userName, 'false');
  }

  /** Sets faults going on some calls; the returned function ends them. See {@link Fault}. */
  disrupt(fault: Fault, scope?: FaultScope): () => void {
    return this.#faults.add(fault, scope);
  }

  /** How many calls a fault holds now, unanswered. */
  get waiting(): number {
    return this.#faults.waiting;
  }

  /**
   * The instance goes off the network: its port refuses connections and open ones are cut, until the returned
   * function is called, which listens on the same port again.
   */
  async goOffline(): Promise<() => Promise<void>> {
    if (!this.#server.listening) throw new Error('the simulator is not listening');
    await this.#unlisten();
    const port = Number(new URL(this.#url).port);
    let back = false;
    return async () => {
      if (back || this.#closed) return;
      back = true;
      await this.#listen(port);
    };
  }

  /** The push path's business rules: how their callouts go wrong, what they sent and dropped. */
  get callouts(): {
    behaviour: CalloutBehaviour;
    deliveries(): readonly Delivery[];
    dropped(): readonly Pick<Delivery, 'table' | 'sysId' | 'operation'>[];
    settled(): Promise<void>;
  } {
    return this.#callout;
  }

  /** Points the business rules' REST message at `target` (`undefined`: no callouts). */
  setPushTarget(target: PushTarget | undefined): void {
    this.#callout.target = target;
  }

  /** Every call answered so far, oldest first. */
  requests(): readonly SimulatorRequest[] {
    return [...this.#requests];
  }

  /** How many calls the rate limit refused. */
  get rateLimited(): number {
    return this.#rateLimited;
  }

  /** Stops the activity and the server; idempotent. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#closed = true;
    await this.#callout.settled();
    if (this.#server.listening) await this.#unlisten();
  }

  async #listen(port: number): Promise<void> {
    this.#server.listen(port, '127.0.0.1');
    await once(this.#server, 'listening');
  }

  /** Closes the port, cutting the connections open on it. */
  async #unlisten(): Promise<void> {
    const closed = once(this.#server, 'close');
    this.#server.close();
    this.#server.closeAllConnections();
    await closed;
  }

  #setUserFlag(userName: string, lockedOut: 'true' | 'false'): void {
    const user = this.#instance.user(userName);
    if (user === undefined) throw new Error(`No user ${userName}`);
    this.#instance.update('sys_user', user.sys_id!, { locked_out: lockedOut }, 'admin');
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'http://simulator');
    const method = request.method ?? 'GET';
    const route = /^\/api\/now\/(?:v[12]\/)?table\/([^/]+)(?:\/([^/]+))?$/.exec(url.pathname);
    const call = callOf(method, route?.[1], route?.[2], url.searchParams.get('sysparm_query') ?? '');
    const record: SimulatorRequest = {
      method,
      path: url.pathname,
      query: url.searchParams,
      call,
      userName: undefined,
      status: 0,
    };
    this.#requests.push(record);
    response.on('finish', () => {
      record.status = response.statusCode;
    });

    const fault = await this.#faults.take(call, response);
    if (fault === 'done') return;
    if (fault !== undefined) return this.#faulted(response, fault);
    const user = this.#signIn(request.headers.authorization);
    if (user === undefined) return this.#notAuthenticated(response);
    record.userName = user.user_name;
    if (this.#limited(response)) return;
    if (route === null) {
      return this.#error(response, 400, 'Requested URI does not represent any resource', null);
    }
    const [, table = '', sysId] = route;
    if (!Object.hasOwn(TABLES, table)) return this.#error(response, 400, `Invalid table ${table}`, null);
    if (method === 'GET' && sysId === undefined) return this.#list(table, url, user, response);
    if (method === 'GET') return this.#read(table, sysId!, url, user, response);
    if (method === 'PATCH' && sysId !== undefined) {
      return this.#update(table, sysId, url, request, Buffer.concat(chunks), user, response);
    }
    return this.#error(
      response,
      405,
      'Method not Supported',
      `The simulator serves GET and PATCH, not ${method}`,
    );
  }

  /** The signed-in user: basic authentication of an active user who is not locked out. */
  #signIn(authorization: string | undefined): Readonly<Row> | undefined {
    const [scheme, encoded = ''] = (authorization ?? '').split(' ');
    if (scheme?.toLowerCase() !== 'basic') return undefined;
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    const user = at < 0 ? undefined : this.#instance.user(decoded.slice(0, at));
    const password = [INTEGRATION_USER, ...APPROVERS].find(
      ({ userName }) => userName === user?.user_name,
    )?.password;
    if (user === undefined || password !== decoded.slice(at + 1)) return undefined;
    return user.active === 'true' && user.locked_out !== 'true' ? user : undefined;
  }

  /** The rate limit rule: whether this call found the bucket empty (and was answered `429`). */
  #limited(response: ServerResponse): boolean {
    const rule = this.behaviour.rateLimit;
    if (rule === undefined) {
      this.#bucket = undefined;
      return false;
    }
    const now = performance.now();
    const bucket = this.#bucket ?? { tokens: rule.capacity, at: now };
    bucket.tokens = Math.min(
      rule.capacity,
      bucket.tokens + ((now - bucket.at) / 1000) * rule.refillPerSecond,
    );
    bucket.at = now;
    this.#bucket = bucket;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return false;
    }
    this.#rateLimited += 1;
    this.#rateLimitAnswer(response, Math.ceil((1 - bucket.tokens) / rule.refillPerSecond), rule.capacity);
    return true;
  }

  #rateLimitAnswer(response: ServerResponse, retryAfterSeconds: number, limit: number): void {
    this.#json(
      response,
      429,
      {
        error: {
          message: 'Rate limit exceeded',
          detail: `Rate limit of ${limit} requests per hour for Table API exceeded`,
        },
        status: 'failure',
      },
      {
        'retry-after': String(retryAfterSeconds),
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + retryAfterSeconds),
        'x-ratelimit-rule': '5c1fadfb018b19f4d5ce2fe3c38ea9b0',
      },
    );
  }

  #faulted(response: ServerResponse, fault: AnsweredFault): void {
    if (fault === 'unauthorized') this.#notAuthenticated(response);
    else if (fault === 'forbidden') this.#forbidden(response);
    else if (fault.status === 429) this.#rateLimitAnswer(response, fault.retryAfterSeconds, 100);
    else this.#error(response, fault.status, 'Service Unavailable', 'The instance is not available');
  }

  #list(table: string, url: URL, user: Readonly<Row>, response: ServerResponse): void {
    const params = url.searchParams;
    const refused = unknownParameter(params, LIST_PARAMETERS);
    if (refused !== undefined) {
      this.#error(response, 400, 'Invalid query parameter', refused);
      return;
    }
    const limit = count(params.get('sysparm_limit'), 10_000);
    const offset = count(params.get('sysparm_offset'), 0);
    if (limit === undefined || offset === undefined) {
      this.#error(
        response,
        400,
        'Invalid query parameter',
        'sysparm_limit and sysparm_offset take whole numbers',
      );
      return;
    }
    let query: ReturnType<typeof parseQuery>;
    try {
      query = parseQuery(params.get('sysparm_query') ?? '', TABLES[table]!);
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      this.#error(response, 400, 'Invalid query', error.message);
      return;
    }
    this.#changeWhilePaging(user, table);
    // As the instance does: the query and the limit first, the ACLs on the page's records after.
    const rows = (this.#instance.rows(table) ?? []).filter((row) => query.matches(row));
    rows.sort(query.compare);
    const size = Math.min(limit, this.behaviour.pageCap ?? Number.POSITIVE_INFINITY);
    const page = rows.slice(offset, offset + size).filter((row) => this.#mayRead(user, table, row));
    this.#lastListed.set(user.sys_id!, { table, first: page[0]?.sys_id });
    const headers: Record<string, string> = {};
    if (params.get('sysparm_no_count') !== 'true') headers['x-total-count'] = String(rows.length);
    if (params.get('sysparm_suppress_pagination_header') !== 'true') {
      headers.link = this.#links(url, { offset, size: Math.max(size, 1), total: rows.length });
    }
    const result = page.map((row) => this.#rendering.render(table, row, params, user));
    this.#json(response, 200, { result }, headers);
  }

  /** Before a list call that follows another of the same user: the first record that call answered changes. */
  #changeWhilePaging(user: Readonly<Row>, table: string): void {
    const last = this.#lastListed.get(user.sys_id!);
    if (this.behaviour.changesWhilePaging <= 0 || last?.first === undefined) return;
    if (this.#instance.row(last.table, last.first) === undefined || last.table !== table) return;
    this.behaviour.changesWhilePaging -= 1;
    this.#instance.update(last.table, last.first, {}, 'system');
  }

  /** The `Link` header: first, previous, next and last pages, each the request with its `sysparm_offset` moved. */
  #links(url: URL, { offset, size, total }: { offset: number; size: number; total: number }): string {
    const at = (where: number) => {
      const link = new URL(`${this.#url}${url.pathname}`);
      for (const [name, value] of url.searchParams) link.searchParams.append(name, value);
      link.searchParams.set('sysparm_offset', String(where));
      return link.href;
    };
    const links = [`<${at(0)}>;rel="first"`];
    if (offset > 0) links.push(`<${at(Math.max(0, offset - size))}>;rel="prev"`);
    if (offset + size < total) links.push(`<${at(offset + size)}>;rel="next"`);
    links.push(`<${at(Math.max(0, Math.floor((total - 1) / size) * size))}>;rel="last"`);
    return links.join(',');
  }

  #read(table: string, sysId: string, url: URL, user: Readonly<Row>, response: ServerResponse): void {
    const refused = unknownParameter(url.searchParams, RECORD_PARAMETERS);
    if (refused !== undefined) {
      this.#error(response, 400, 'Invalid query parameter', refused);
      return;
    }
    const row = this.#instance.row(table, sysId);
    if (row === undefined || !this.#mayRead(user, table, row)) {
      this.#notFound(response);
      return;
    }
    this.#json(response, 200, { result: this.#rendering.render(table, row, url.searchParams, user) });
  }

  async #update(
    table: string,
    sysId: string,
    url: URL,
    request: IncomingMessage,
    body: Buffer,
    user: Readonly<Row>,
    response: ServerResponse,
  ): Promise<void> {
    const refused = unknownParameter(url.searchParams, UPDATE_PARAMETERS);
    if (refused !== undefined) return this.#error(response, 400, 'Invalid query parameter', refused);
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      return this.#error(
        response,
        400,
        'Exception while reading request',
        'Content-Type must be application/json',
      );
    }
    let changes: Record<string, unknown>;
    try {
      changes = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      if (typeof changes !== 'object' || changes === null || Array.isArray(changes))
        throw new TypeError('not an object');
    } catch {
      return this.#error(response, 400, 'Exception while reading request', 'The payload is not valid json');
    }
    const row = this.#instance.row(table, sysId);
    if (row === undefined || !this.#mayRead(user, table, row)) return this.#notFound(response);
    // Only an approver updates an approval, their own: its state and comments (other fields are not theirs).
    if (
      table !== 'sysapproval_approver' ||
      row.approver !== user.sys_id ||
      this.behaviour.aclRefusesUpdates
    ) {
      return this.#forbidden(response);
    }
    const { state, comments } = changes;
    if (
      (state !== undefined && (typeof state !== 'string' || !SimulatedInstance.isApprovalState(state))) ||
      (comments !== undefined && typeof comments !== 'string')
    ) {
      return this.#error(
        response,
        400,
        'Invalid value',
        'state must be an approval state, comments a string',
      );
    }
    if (state !== undefined && row.state === 'requested' && this.behaviour.cancelDuringDecision) {
      this.#instance.update(table, sysId, { state: 'cancelled' }, 'system');
    }
    // The instance's rule: an approval that no longer waits keeps its state.
    if (state !== undefined && state !== row.state && row.state !== 'requested') {
      return this.#error(
        response,
        403,
        'Operation Failed',
        'Error during update of sysapproval_approver: a business rule aborted it, the approval is no longer requested',
      );
    }
    if (state === 'approved' || state === 'rejected') {
      this.#instance.decide(sysId, state, user.user_name!, comments ?? '', 'api');
    } else {
      this.#instance.update(
        table,
        sysId,
        { ...(state === undefined ? {} : { state }), comments: comments ?? '' },
        user.user_name!,
      );
    }
    this.#json(response, 200, { result: this.#rendering.render(table, row, url.searchParams, user) });
  }

  /**
   * The ACLs: the integration user reads every record but those {@link hide} hides; an approver reads the users,
   * the catalog, their own approvals and the records those approve, and the records they asked for.
   */
  #mayRead(user: Readonly<Row>, table: string, row: Readonly<Row>): boolean {
    if (user.sys_id === INTEGRATION_USER.sysId) return !this.#hidden.has(row.sys_id ?? '');
    if (table === 'sys_user' || table === 'sc_cat_item') return true;
    if (table === 'sysapproval_approver') return row.approver === user.sys_id;
    return (
      row.requested_by === user.sys_id ||
      row.requested_for === user.sys_id ||
      this.#instance.approvalsOf(row.sys_id ?? '').some((approval) => approval.approver === user.sys_id)
    );
  }

  #notAuthenticated(response: ServerResponse): void {
    this.#error(response, 401, 'User Not Authenticated', 'Required to provide Auth information', {
      'www-authenticate': 'BASIC realm="Service-now"',
    });
  }

  #forbidden(response: ServerResponse): void {
    this.#error(response, 403, 'Operation Failed', 'ACL Exception Update Failed due to security constraints');
  }

  #notFound(response: ServerResponse): void {
    this.#error(
      response,
      404,
      'No Record found',
      "Record doesn't exist or ACL restricts the record retrieval",
    );
  }

  #error(
    response: ServerResponse,
    status: number,
    message: string,
    detail: string | null,
    headers: Record<string, string> = {},
  ): void {
    this.#json(response, status, { error: { message, detail }, status: 'failure' }, headers);
  }

  #json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    response.writeHead(status, {
      'content-type': 'application/json;charset=UTF-8',
      // The instance's clock, as an HTTP date (to the second): what a client learns of it.
      date: new Date(this.#instance.time()).toUTCString(),
      ...headers,
    });
    response.end(JSON.stringify(body));
  }
}

/** Which call of the Table API this is; `undefined` for one the simulator does not serve. */
function callOf(
  method: string,
  table: string | undefined,
  sysId: string | undefined,
  query: string,
): TableCall | undefined {
  if (table === undefined) return undefined;
  if (table === 'sysapproval_approver') {
    if (method === 'PATCH' && sysId !== undefined) return 'approvalUpdate';
    if (method !== 'GET') return undefined;
    if (sysId !== undefined) return 'approvalRead';
    return /(^|\^)sys_idIN/.test(query) ? 'approvalLookup' : 'approvalList';
  }
  if (method !== 'GET') return undefined;
  if (sysId !== undefined) return 'recordRead';
  return table === 'sys_user' ? 'userList' : 'recordList';
}

/** The first parameter the call does not take, by the Table API's reference; `undefined` when none. */
function unknownParameter(params: URLSearchParams, allowed: ReadonlySet<string>): string | undefined {
  return [...params.keys()].find((name) => !allowed.has(name));
}

/** A whole number parameter, its default when absent; `undefined` when it is not one. */
function count(value: string | null, fallback: number): number | undefined {
  if (value === null) return fallback;
  return /^\d+$/.test(value) ? Number(value) : undefined;
}
