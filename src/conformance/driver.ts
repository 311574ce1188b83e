/**
 * The source driver: what the conformance battery needs of the author's test double of their source system.
 * @module
 */
import type { Connector } from '../connector/index.js';

/** A request as the battery asks the driver to create it. */
export interface NewSourceRequest {
  /** Who decides it: an approver's id in the Approval Service. */
  approver: string;
  /** A short text the app shows (a title, a summary): what {@link SourceDriver.change} changes. */
  title: string;
}

/**
 * What the service should hold for one request of the source, as the driver knows it: the approval the connector
 * should have pushed. A field left out is not compared.
 */
export interface ExpectedApproval {
  /** The approval's id: the id {@link SourceDriver.create} returned. */
  id: string;
  /** The approver's id. */
  approver: string;
  /** Whether the request is resolved in the source (decided, closed, withdrawn). */
  resolved: boolean;
  /** The schema the approval follows. */
  schemaId?: string;
  /** When it last changed in the source: compared as an instant. */
  lastModified?: Date | string;
  /** What the app should show, compared as JSON. */
  data?: Record<string, unknown>;
}

/**
 * The ways a source can fail that the battery knows how to expect, each with the task result status the failure
 * table documents (docs/failure-mapping.md) for a handler's error of that kind:
 *
 * | failure | what the source does | status |
 * | --- | --- | --- |
 * | `unavailable` | answers `503` | `serviceUnavailable` |
 * | `rateLimited` | answers `429` | `serviceUnavailable` |
 * | `unreachable` | refuses the connection (`ECONNREFUSED`) | `serviceUnavailable` |
 * | `unauthorized` | refuses the credentials (`401`) | `authenticationError` |
 * | `forbidden` | forbids the action (`403`) | `authenticationError` |
 * | `refused` | answers and refuses the action (`409`, `422`, a business rule) | `systemError` |
 * | `hang` | never answers until the call's `signal` aborts it | `serviceUnavailable` (the task's deadline) |
 * | `slow` | answers, and carries the call out, only after {@link FailureScope.delayMs}, unless the call's `signal` aborts it first | `serviceUnavailable` (the task's deadline) |
 */
export type SourceFailure =
  | 'unavailable'
  | 'rateLimited'
  | 'unreachable'
  | 'unauthorized'
  | 'forbidden'
  | 'refused'
  | 'hang'
  | 'slow';

/**
 * The source's operations, as the battery names them when it makes one of them fail:
 *
 * | operation | the calls of the source it means |
 * | --- | --- |
 * | `changes` | reading what changed, or the whole listing of a snapshot: every page of it |
 * | `lookup` | reading requests by id, as `lookup()` does for reconciliation and after tasks |
 * | `precheck` | what a task's pre-check reads of the request before the handler acts |
 * | `action` | carrying a decision out: what a handler does to the source |
 *
 * A source whose pre-check and lookup read the same endpoint may treat `precheck` and `lookup` alike: the battery
 * makes the pre-check's read fail only while a pre-check runs.
 */
export type SourceOperation = 'changes' | 'lookup' | 'precheck' | 'action';

/** Every {@link SourceOperation}, in the order of the table. */
export const SOURCE_OPERATIONS: readonly SourceOperation[] = ['changes', 'lookup', 'precheck', 'action'];

/** Where, and for how long, {@link SourceDriver.fail} makes the source fail. */
export interface FailureScope {
  /** The operation whose calls fail; the others answer as usual. `'any'`: every call of the source. */
  operation: SourceOperation | 'any';
  /**
   * How many calls of that operation fail: that many, the next ones, then the source answers again by itself; or
   * `'until-restored'`, every call until the {@link RestoreSource} returned is called.
   */
  times: number | 'until-restored';
  /** For `slow`: how long each call takes before it answers, in milliseconds. */
  delayMs?: number;
}

/** Undoes what {@link SourceDriver.fail} did: the source answers normally again. */
export type RestoreSource = () => void | Promise<void>;

/** Where {@link PushDriver.deliverTo} sends the source's deliveries, and what it signs them with. */
export interface PushTarget {
  /** The address the source is to post its deliveries to: the battery's, which holds them for the check. */
  url: string;
  /** The webhook secret the source is to sign them with: the worker is given the same one (`push.secret`). */
  secret: string;
}

/**
 * The source's push, for the push checks (`push.*`): the driver makes its test double deliver events as the source
 * does, over HTTP, byte for byte, signed. The battery stands between the source and the worker: it receives every
 * delivery, answers it at once, and passes it on to the worker's push ingress as a check needs: once, three times,
 * out of order, never, or forged.
 *
 * @example
 * <!-- example: fragment, because it sketches a driver over a source of the reader's own -->
 * ```ts
 * const driver: SourceDriver = {
 *   // ...create, change, resolve, holds, as above
 *   push: {
 *     deliverTo: ({ url, secret }) => source.webhooks.send({ url, secret }),
 *     sent: () => source.webhooks.idle(),
 *   },
 * };
 * ```
 */
export interface PushDriver {
  /**
   * Makes the source deliver an event for every change made from now on (a request created, changed, resolved,
   * deleted) to `target.url`, as a `POST` with the body and headers the source sends, signed with `target.secret`
   * as the source signs. Called once per driver, before the worker starts. A connector that registers its webhook
   * itself (`push({ webhook })`) registers it for the same address (the worker's `push.publicUrl`), with the same
   * secret: a source that learns both that way may do nothing here.
   */
  deliverTo(target: PushTarget): void | Promise<void>;
  /**
   * Resolves once the source has sent every delivery of the changes made so far, and had each answered: the
   * battery then knows which deliveries a change made.
   */
  sent(): void | Promise<void>;
}

/**
 * The author's handle on their test double of the source system, for the conformance battery. The battery creates
 * a fresh driver (and source) for each check and each generated run, changes the source through it, and compares
 * what the service holds with what {@link holds} says. An error a member throws makes the check an `error` (the
 * driver's, not the connector's failure).
 *
 * Only `create`, `change`, `resolve` and `holds` are required. Each optional member turns on the checks that need
 * it; a check that cannot run says so in the report (`skip`), with the member it needs.
 *
 * @example
 * <!-- example: fragment, because it sketches a driver over a source and a clock of the reader's own -->
 * ```ts
 * const driver: SourceDriver = {
 *   create: ({ approver, title }) => source.add({ approver, title, status: 'open', updatedAt: clock.next() }).id,
 *   change: (id, { title }) => source.update(id, { title, updatedAt: clock.next() }),
 *   resolve: (id) => source.update(id, { status: 'approved', updatedAt: clock.next() }),
 *   delete: (id) => source.remove(id),
 *   sameInstant: (changes) => clock.hold(changes),
 *   holds: () => source.all().map((r) => ({ id: r.id, approver: r.approver, resolved: r.status !== 'open',
 *     lastModified: r.updatedAt, data: { title: r.title } })),
 * };
 * ```
 */
export interface SourceDriver {
  /** Creates an open request; returns its id, the approval's id. */
  create(request: NewSourceRequest): string | Promise<string>;
  /**
   * Changes what the app shows of a request (its title), as an edit in the source would; it moves `lastModified`.
   * The battery may change, and resolve, a request it resolved before: do what the source does (an edit, or
   * nothing where the source no longer changes a resolved request).
   */
  change(id: string, change: { title: string }): void | Promise<void>;
  /** Resolves a request in the source (approved, closed, withdrawn): nobody needs to act on it any more. */
  resolve(id: string): void | Promise<void>;
  /**
   * Deletes a request from the source. For a snapshot source it then vanishes from the listing and must be marked
   * resolved; for an incremental one only reconciliation (`lookup()`) can notice. Without it, no request is deleted.
   */
  delete?(id: string): void | Promise<void>;
  /**
   * Runs `changes` so that every change it makes in the source shares one `lastModified`. Without it the ties
   * check is skipped: give it whenever the source can stamp two changes alike (most sources can: a clock to the
   * second or the minute).
   */
  sameInstant?<T>(changes: () => Promise<T>): Promise<T>;
  /**
   * Every request the source holds now (resolved ones included, deleted ones not), as the service should show it
   * once synced. For a snapshot source, this is also what the source lists as open (the unresolved ones).
   */
  holds(): readonly ExpectedApproval[] | Promise<readonly ExpectedApproval[]>;
  /**
   * How many times the source has carried out an action (a decision) on the request: what the idempotency and
   * pre-check checks count. Without it they compare {@link holds} before and after instead, and the idempotency
   * check is skipped.
   */
  actions?(id: string): number | Promise<number>;
  /**
   * Makes the source fail the given way: the calls of `scope.operation`, `scope.times` times or until the returned
   * function is called (which also ends a count not yet used up). The failures it can provoke are listed in
   * {@link failures}. The battery switches a failure on at the moment it aims at (when a handler starts, after its
   * pre-check; while a pre-check runs; after a sync run's first page) and restores the source right after.
   */
  fail?(failure: SourceFailure, scope: FailureScope): RestoreSource | Promise<RestoreSource>;
  /** The failures {@link fail} can provoke: each is a task check. @default [] */
  failures?: readonly SourceFailure[];
  /**
   * The approvers to create requests for. @default ['conformance-approver-1', 'conformance-approver-2']
   */
  approvers?: readonly string[];
  /**
   * The approver's credentials a task carries when the connector has `authRequired`: what the source double
   * accepts. Each value is a secret the battery looks for in logs and state.
   * @default { username: 'conformance-user', password: <random> }
   */
  credentials?(approver: string): Record<string, string>;
  /**
   * How many records one page of the source's listing holds, when it pages: ties are made to cross pages, and the
   * reconciliation and snapshot checks hold at least 2.5 times as many requests (and no fewer than 500).
   */
  pageSize?: number;
  /**
   * Sets the clock the source stamps its changes with (milliseconds since the epoch, as `Date.now()` gives them):
   * from now on every change takes its `lastModified` from `now()`, floored to the source's precision, and
   * {@link sameInstant} holds it still. The battery runs the sync checks with the source's clock behind the
   * machine's, equal to it and ahead of it. Without it the source keeps a clock of its own, and a cursor taken from
   * the machine's clock is caught only as far as that clock allows.
   */
  setClock?(now: () => number): void;
  /**
   * Makes the source answer pages shorter than asked (at least one record, and not only the last page) while
   * `enabled`, as real servers do under load or when they filter records after paging. The snapshot and
   * reconciliation checks turn it on: a connector that takes a short page for the last one must fail them.
   */
  shortPages?(enabled: boolean): void;
  /**
   * Makes the source deliver its events, as it does to a connector's push path: the push checks (`push.*`) need it,
   * for a connector that declares one. Without it they are skipped.
   */
  push?: PushDriver;
  /**
   * Releases what the driver holds, such as a simulator's server: called once the battery is done with the driver
   * (at the end of each check and generated run), after the workers reading its source have stopped.
   */
  close?(): void | Promise<void>;
}

/**
 * What an author gives the battery: a fresh source and its driver, and the connector that reads it.
 *
 * @example
 * <!-- example: typecheck, because its driver and connector are the reader's own -->
 * ```ts
 * import type { ConformanceSubject } from 'approval-connector-kit/conformance';
 *
 * const subject: ConformanceSubject<RequestsDriver> = {
 *   driver: () => new RequestsDriver(new Requests()),
 *   connector: (driver) => new MyConnector(driver.requests),
 * };
 * ```
 */
export interface ConformanceSubject<D extends SourceDriver = SourceDriver> {
  /** A name for the report. @default the connector's class name */
  name?: string;
  /** A new, empty source and its driver: called for each check, and for each run a generated check makes. */
  driver(): D | Promise<D>;
  /**
   * A connector that reads the driver's source. Called once for each simulated process, as production builds one
   * per process: a stage's first run, the run after a simulated crash or restart, each task worker; and once to
   * read what the connector declares. A connector instance lives across the runs of its process, so what it keeps
   * in memory lives as long as in production (docs/conformance.md, "When the battery builds a connector").
   */
  connector(driver: D): Connector<object>;
  /**
   * How to run the connector as a process of its own, `connector run <module>`: what the opt-in check
   * `sync.sigkill` needs to kill it with SIGKILL and restart it. Only for a source another process can reach (a
   * simulator over HTTP, a file, a database). Without it, that check is skipped.
   */
  process?: ConnectorProcess<D>;
}

/**
 * A connector run as a process: `connector run <module>`, with the worker's variables set by the battery
 * (`APPROVAL_SERVICE_URL`, `APPROVAL_CONNECTOR_TOKEN`, `CONNECTOR_ROLE=sync`, `CONNECTOR_CONFIG`,
 * `CONNECTOR_KEYS_FILE`, `LOG_FORMAT=json`; no operations port)
 * and the module's own from {@link env}.
 *
 * @example
 * <!-- example: fragment, because its driver is the reader's own -->
 * ```ts
 * const subject: ConformanceSubject<JiraDriver> = {
 *   driver: () => JiraDriver.start(),
 *   connector: (driver) => new JiraConnector(driver.client()),
 *   process: { module: 'dist/connector.js', env: (driver) => ({ JIRA_SITE: driver.url, JIRA_TOKEN: 'test' }) },
 * };
 * ```
 */
export interface ConnectorProcess<D extends SourceDriver = SourceDriver> {
  /**
   * The connector module `connector run` imports, from {@link cwd}: its default export (a connector, or a function
   * that builds one from its context's `env`). A module in TypeScript needs a loader: `NODE_OPTIONS` in {@link env}.
   */
  module: string;
  /** The module's own variables, for this driver's source (its URL, its file). @default none */
  env?(driver: D): Record<string, string>;
  /** The working directory of the process. @default process.cwd() */
  cwd?: string;
}
