/**
 * One run of a check: a tenant on the reference backend, a fresh source and its driver, the connector instances
 * that read it (one for the life of a simulated process, as in production), and the workers a check starts against
 * them, each behind a {@link Wire} that can cut it off.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { ReferenceBackend } from '../backend/index.js';
import type { ClientOptions } from '../client/index.js';
import type { Connector, SyncCursor } from '../connector/index.js';
import { TestHarness } from '../testing/index.js';
import { type ConnectorOptions, ConnectorWorker } from '../worker/index.js';
import { savedCursorOf } from '../worker/internal.js';
import type { ConformanceSubject, ExpectedApproval, SourceDriver } from './driver.js';
import { ConformanceFailure } from './report.js';
import { labelledDriver, newConnector, newDriver, type ReadHook, watchReads } from './subject.js';
import { type CrashPoint, Wire, type WireListener } from './wire.js';

/**
 * How long a connector instance lives in a stage: `process`, as in production, one instance across every run and
 * task of a worker's process, replaced only when the process dies (a run cut off) or a check restarts it; `restart`,
 * a new instance for every run, as if every run were a process of its own. Each sync check runs under both.
 */
export type Lifetime = 'process' | 'restart';

/** Both lifetimes, in the order the sync checks run them. */
export const LIFETIMES: readonly Lifetime[] = ['process', 'restart'];

const DAY_MS = 86_400_000;

/**
 * Where the source's clock stands against the machine's, for a driver with `setClock`: a week behind, the same, or a
 * week ahead. A real source stamps its changes by a clock of its own, and it is rarely the worker's.
 */
export const SOURCE_CLOCKS = { behind: -7 * DAY_MS, equal: 0, ahead: 7 * DAY_MS } as const;

/** One of {@link SOURCE_CLOCKS}. */
export type SourceClock = keyof typeof SOURCE_CLOCKS;

/** How a stage is set up. */
export interface StageSettings {
  /** @default 'process' */
  lifetime?: Lifetime;
  /** The source's clock, when the driver can set it. @default the driver's own clock */
  clock?: SourceClock;
}

/**
 * How quickly a worker of the battery reads its source again after a failure: soon, and twice at most, so that a
 * check of a failing source takes milliseconds rather than the production backoff.
 */
const QUICK_SOURCE_RETRY = { retries: 2, baseDelayMs: 1, maxDelayMs: 5 } as const;

/** A worker started by a stage, and the wire it talks through. */
export interface StagedWorker<C extends Connector<object> = Connector<object>> {
  worker: ConnectorWorker<C>;
  wire: Wire;
  connector: C;
}

/**
 * The shutdown of a worker whose end a check does not look at: one it cuts off, as a crash would, which then stands
 * for a dead process (nothing it still sends can pass the cut wire), or one whose handler the check has already
 * judged. Stopping it only frees what it holds, so it does not wait out the grace a live worker gets for its tasks
 * and their results (2 s and 1 s, {@link TestHarness.connectorOptions}), which each such check would otherwise spend
 * at its end. Should the cut not come, the worker still stops within it: by then it has nothing left to wait for.
 */
export const QUICK_SHUTDOWN = { graceMs: 250, forceMs: 250 } as const;

export class Stage<D extends SourceDriver = SourceDriver> {
  readonly harness: TestHarness;
  /** The driver, its errors labelled as the driver's. */
  readonly driver: D;
  readonly subject: ConformanceSubject<D>;
  readonly lifetime: Lifetime;
  readonly clock: SourceClock | undefined;
  /** Called after each record a connector of this stage yields: a check changes the source there. */
  onRead: ReadHook | undefined;
  /** The author's own driver, as the connector is given it. */
  readonly #raw: D;
  /** The connector instance of the process now running, if any. */
  #instance: Connector<object> | undefined;
  /** Every id the driver created in this stage, deleted ones included. */
  readonly created = new Set<string>();
  readonly #closing: Promise<unknown>[] = [];
  readonly #wires: Wire[] = [];
  /** What a check opened for this stage besides its workers and wires: closed after the driver. */
  readonly #owned: { close(): Promise<void> }[] = [];
  readonly #workers: StagedWorker[] = [];
  #approverTurn = 0;
  /** The latest `lastModified` of a request deleted from the source, in milliseconds. */
  deletedLatest = Number.NEGATIVE_INFINITY;

  private constructor(harness: TestHarness, raw: D, subject: ConformanceSubject<D>, settings: StageSettings) {
    this.harness = harness;
    this.#raw = raw;
    this.driver = labelledDriver(raw);
    this.subject = subject;
    this.lifetime = settings.lifetime ?? 'process';
    this.clock = settings.clock;
  }

  static async open<D extends SourceDriver>(
    backend: ReferenceBackend,
    subject: ConformanceSubject<D>,
    settings: StageSettings = {},
  ): Promise<Stage<D>> {
    const { raw } = await newDriver(subject);
    const stage = new Stage(new TestHarness(backend, backend.createTenant()), raw, subject, settings);
    const offset = settings.clock === undefined ? undefined : SOURCE_CLOCKS[settings.clock];
    if (offset !== undefined) stage.driver.setClock?.(() => Date.now() + offset);
    return stage;
  }

  /**
   * The connector instance of the running process: the same one run after run under the `process` lifetime, until
   * {@link restart}; a new one each time under `restart`. Its reads call {@link onRead}.
   */
  connector(): Connector<object> {
    if (this.#instance !== undefined && this.lifetime === 'process') return this.#instance;
    this.#instance = this.newConnector();
    return this.#instance;
  }

  /** A new connector of the subject over this stage's source, its reads watched; not the process's instance. */
  newConnector(): Connector<object> {
    return watchReads(newConnector(this.subject, this.#raw), () => this.onRead);
  }

  /** The process dies, or is restarted: the next run gets a new connector instance. */
  restart(): void {
    this.#instance = undefined;
  }

  get approvers(): readonly string[] {
    return this.driver.approvers ?? ['conformance-approver-1', 'conformance-approver-2'];
  }

  /** Creates a request through the driver and remembers its id. */
  async create(title: string, approver?: string): Promise<string> {
    const approvers = this.approvers;
    const chosen = approver ?? approvers[this.#approverTurn++ % approvers.length] ?? 'conformance-approver';
    const id = await this.driver.create({ approver: chosen, title });
    this.created.add(id);
    return id;
  }

  /** Deletes a request through the driver (which must be able to), remembering when it last changed. */
  async delete(id: string): Promise<void> {
    const record = (await this.driver.holds()).find((held) => held.id === id);
    if (record?.lastModified !== undefined) {
      this.deletedLatest = Math.max(this.deletedLatest, new Date(record.lastModified).getTime());
    }
    await this.driver.delete?.(id);
  }

  /**
   * Starts a worker for a new connector of the subject behind a new wire; `crash` cuts it off at a request. Resolves
   * once it runs, or once it has been cut off while starting.
   */
  async start(
    settings: {
      crash?: CrashPoint;
      listener?: WireListener;
      options?: Partial<ConnectorOptions>;
      /** Options of the worker's client, over the stage's own. */
      service?: Partial<ClientOptions>;
      /** The connector to run. @default the process's instance, {@link connector} */
      connector?: Connector<object>;
    } = {},
  ): Promise<StagedWorker> {
    const wire = Wire.inProcess(this.harness.backend.url, settings.listener, settings.crash);
    this.#wires.push(wire);
    const connector = settings.connector ?? this.connector();
    const overrides = settings.options ?? {};
    const options = this.harness.connectorOptions({
      poller: { enabled: false },
      // Only a push check delivers anything; for the others a push path is an ingress nobody calls.
      push: false,
      ...(settings.crash === undefined ? {} : { shutdown: QUICK_SHUTDOWN }),
      ...overrides,
      sync: { sourceRetry: QUICK_SOURCE_RETRY, ...overrides.sync },
      service: this.harness.serviceOptions({
        ...overrides.service,
        ...settings.service,
        baseUrl: this.harness.backend.url,
        dispatcher: wire.dispatcher,
      }),
    });
    const worker = new ConnectorWorker(connector, options);
    const staged = { worker, wire, connector };
    this.#workers.push(staged);
    const started = worker.start();
    this.#closing.push(started.catch(() => {}));
    await Promise.race([started, wire.crashed]);
    return staged;
  }

  /**
   * Stops a worker: gracefully when its wire is whole, and otherwise by abandoning it (its stop, whose requests the
   * wire drops, finishes in the background).
   */
  async stop(staged: StagedWorker): Promise<void> {
    const stopped = staged.worker.stop().catch(() => {});
    if (staged.wire.isCut) this.#closing.push(stopped);
    else await stopped;
  }

  /**
   * One sync run in a worker of its own: start, `syncNow()` (or `reconcileNow()`), stop. The worker runs the
   * process's connector instance ({@link connector}); `restart` gives it a new one first. With `crash`, the worker
   * is cut off at that request and abandoned, and its process with it: the next run gets a new instance. Resolves
   * whether or not the run succeeded.
   */
  async syncRun(
    settings: {
      crash?: CrashPoint;
      listener?: WireListener;
      options?: Partial<ConnectorOptions>;
      service?: Partial<ClientOptions>;
      mode?: 'sync' | 'reconcile';
      restart?: boolean;
    } = {},
  ): Promise<{ error?: unknown; cut: boolean }> {
    if (settings.restart === true) this.restart();
    const staged = await this.start(settings);
    let error: unknown;
    if (!staged.wire.isCut) {
      const run = settings.mode === 'reconcile' ? staged.worker.reconcileNow() : staged.worker.syncNow();
      await Promise.race([run.catch((cause: unknown) => (error = cause)), staged.wire.crashed]);
    }
    await this.stop(staged);
    if (staged.wire.isCut) this.restart();
    // What the dead worker had sent lands before anything else starts.
    await staged.wire.idle();
    return error === undefined ? { cut: staged.wire.isCut } : { error, cut: staged.wire.isCut };
  }

  /** The cursor the service holds for the tenant's system. */
  savedCursor(): SyncCursor | undefined {
    return savedCursorOf(this.harness.state().state);
  }

  /**
   * Compares what the service holds with what the driver says the source holds, and throws a
   * {@link ConformanceFailure} naming every difference. `deleted` says what a request deleted from the source
   * should be: `resolved` (a snapshot, or after reconciliation), or `any` (an incremental source cannot tell).
   */
  async expectExact(deleted: 'resolved' | 'any', snapshot: boolean, context = ''): Promise<void> {
    const problems = differences(
      await this.driver.holds(),
      this.harness.approvals(),
      this.created,
      deleted,
      snapshot,
    );
    if (problems.length > 0) {
      throw new ConformanceFailure(
        `the service to hold every request of the source as the source holds it${context}`,
        summarize(problems),
      );
    }
  }

  /** Closes `resource` with the stage, after its workers, its wires and the driver. */
  own<R extends { close(): Promise<void> }>(resource: R): R {
    this.#owned.push(resource);
    return resource;
  }

  /** Stops every worker still running (a stop is idempotent), then closes the wires. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((staged) => staged.worker.stop().catch(() => {})));
    await Promise.all(this.#closing);
    await Promise.all(this.#wires.map((wire) => wire.close()));
    await this.driver.close?.();
    await Promise.all(this.#owned.map((resource) => resource.close()));
  }
}

interface HeldApproval {
  id: string;
  approver: string;
  resolved: boolean;
  schemaId: string;
  lastModified: string;
  data?: Record<string, unknown>;
}

/** Every way the service's approvals differ from the source's requests, in words. */
export function differences(
  source: readonly ExpectedApproval[],
  service: readonly HeldApproval[],
  created: ReadonlySet<string>,
  deleted: 'resolved' | 'any',
  snapshot: boolean,
): string[] {
  const held = new Map(service.map((approval) => [approval.id, approval]));
  const inSource = new Set(source.map((request) => request.id));
  const problems: string[] = [];
  for (const expected of source) {
    const approval = held.get(expected.id);
    const name = JSON.stringify(expected.id);
    if (approval === undefined) {
      // A snapshot source never lists a request that was resolved before the service first saw it.
      if (!(snapshot && expected.resolved)) problems.push(`${name} is missing`);
      continue;
    }
    if (approval.resolved !== expected.resolved) {
      problems.push(`${name} has resolved ${approval.resolved}, the source ${expected.resolved}`);
    }
    // A snapshot source stops listing a resolved request: the service keeps its last listed content.
    if (snapshot && expected.resolved) continue;
    if (approval.approver !== expected.approver) {
      problems.push(
        `${name} has approver ${JSON.stringify(approval.approver)}, the source ${JSON.stringify(expected.approver)}`,
      );
    }
    if (expected.schemaId !== undefined && approval.schemaId !== expected.schemaId) {
      problems.push(
        `${name} has schemaId ${JSON.stringify(approval.schemaId)}, the source ${JSON.stringify(expected.schemaId)}`,
      );
    }
    if (expected.lastModified !== undefined) {
      const want = new Date(expected.lastModified).getTime();
      if (Date.parse(approval.lastModified) !== want) {
        problems.push(
          `${name} has lastModified ${approval.lastModified}, the source ${new Date(want).toISOString()}`,
        );
      }
    }
    if (
      expected.data !== undefined &&
      !isDeepStrictEqual(toJson(approval.data ?? {}), toJson(expected.data))
    ) {
      problems.push(
        `${name} has data ${JSON.stringify(approval.data)}, the source ${JSON.stringify(toJson(expected.data))}`,
      );
    }
  }
  for (const approval of service) {
    if (inSource.has(approval.id)) continue;
    if (!created.has(approval.id)) {
      problems.push(`${JSON.stringify(approval.id)} is held, but the source never had it`);
    } else if (deleted === 'resolved' && !approval.resolved) {
      problems.push(`${JSON.stringify(approval.id)} was deleted from the source, and is still open`);
    }
  }
  return problems;
}

function toJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** The first few problems, and how many more. */
export function summarize(problems: readonly string[], shown = 5): string {
  const head = problems.slice(0, shown).join('; ');
  return problems.length > shown ? `${head}; and ${problems.length - shown} more` : head;
}
