/**
 * The soak: a connector worker, in a process of its own, syncs a versioned source into the reference backend (in
 * another process) through a fault-injecting proxy; the driver stops it at chosen moments, with SIGKILL and
 * sometimes SIGTERM, moves the source on a version and starts it again, and at last lets it finish. Between two
 * workers it checks, through the API, that the saved cursor has not moved backwards and that everything before it
 * is in the service; at the end, that the service holds exactly the source's final version of every approval.
 * See docs/testing.md.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { request } from 'undici';
import { z } from 'zod';
import { parseOptions } from '../../src/internal/options.js';
import { savedCursorOf } from '../../src/worker/internal.js';
import { type Exchange, type FaultKind, FaultProxy } from './fault-proxy.js';
import { type Child, type Exit, exitWithin, spawnScript, waitForOutput } from './processes.js';
import { hash32, pick, seededRandom } from './random.js';
import {
  type ChangeKey,
  compareKeys,
  type SoakApproval,
  type SourceShape,
  VersionedSource,
} from './source.js';
import type { WorkerSettings } from './worker.js';

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Fixes the source, the faults and the plan (signals, sync settings, triggers); the same seed, the same run. */
  seed: number;
  /** Approvals in the source's final version. */
  approvals: number;
  /** Workers killed with SIGKILL while they sync. */
  kills: number;
  /**
   * Workers stopped with SIGTERM while they sync, besides the kills (each must exit 0).
   * @default Math.ceil(kills / 4)
   */
  terms?: number;
  /**
   * The share of approvals each version of the source changes, in [0, 1].
   * @default 0.2
   */
  changeRate?: number;
  /**
   * The share of requests the proxy injects a fault into, in [0, 1].
   * @default 0.05
   */
  faultRate?: number;
  /** The whole run's time limit, in milliseconds: past it the soak stops everything and reports a problem. */
  deadlineMs: number;
  /**
   * The workers' log level; their output is kept for the report of a worker that exits unexpectedly.
   * @default 'silent'
   */
  workerLogLevel?: WorkerSettings['logLevel'];
  /** Told one line per worker, as it is checked. */
  onProgress?: (line: string) => void;
}

/** One worker's life. */
export interface GenerationReport {
  /** Its place in the run, from 0. */
  index: number;
  /** The version of the source it read. */
  version: number;
  /** How the driver stopped it (the last one is stopped with SIGTERM once it has caught up). */
  signal: 'SIGKILL' | 'SIGTERM';
  /** The moment it was stopped at, in words. */
  stoppedAt: string;
  sync: WorkerSettings['sync'];
  exit: Exit | undefined;
  /** The cursor the service held once the worker had stopped. */
  cursor: ChangeKey | undefined;
  /** Approvals the service held then. */
  held: number;
}

/** What a soak found. */
export interface SoakReport {
  seed: number;
  /** Approvals in the source's final version. */
  approvals: number;
  generations: GenerationReport[];
  /** Requests the proxy passed, by the fault it injected. */
  faults: Record<FaultKind, number>;
  /** Update approvals requests the service acknowledged. */
  batches: number;
  /** State writes the service acknowledged; each was checked not to move the cursor backwards. */
  stateWrites: number;
  /** Requests of killed workers lost in transit (see `FaultProxy.sever`). */
  severed: number;
  /** Everything that was not as it should be; empty when the soak passed. */
  problems: string[];
}

const OptionsSchema = z.object({
  seed: z.number().int(),
  approvals: z.number().int().min(1).max(1_000_000),
  kills: z.number().int().min(0).max(1000),
  terms: z.number().int().min(0).max(1000).optional(),
  changeRate: z.number().min(0).max(1).optional(),
  faultRate: z.number().min(0).max(1).optional(),
  deadlineMs: z.number().int().positive(),
  workerLogLevel: z.enum(['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace']).optional(),
});

// The worker's grace and force times (3 s, see worker.ts) and a generous margin: a SIGTERM'd worker that has not
// exited by then is reported, then killed.
const SHUTDOWN_LIMIT_MS = 30_000;
const BACKEND_STOP_LIMIT_MS = 10_000;
const STATE_PATH = '/v2/connector/state';
const BATCH_PATH = '/v2/rawapprovals';
const MAX_PROBLEMS_PER_CHECK = 10;

type TriggerKind = 'batch' | 'state-sent' | 'state-saved' | 'time';

interface Planned {
  index: number;
  version: number;
  signal: 'SIGKILL' | 'SIGTERM' | 'final';
  trigger: TriggerKind;
  /** Where in its range the trigger falls, in [0, 1). */
  share: number;
  /** The proxy's latency while this worker runs; see `FaultProxyOptions.latencyMs`. */
  latencyMs: number;
  /** Whether a SIGKILL also loses the requests the worker had sent that the proxy has not forwarded yet. */
  sever: boolean;
  sync: WorkerSettings['sync'];
}

/** A running worker and what the listener watches for to stop it. */
interface Armed {
  planned: Planned;
  /** The last worker has none: it is stopped once it has caught up. */
  trigger: TriggerKind | 'none';
  worker: Child;
  /** The cursor at which the worker has read everything of its version. */
  target: ChangeKey;
  /** At least this many batches are left to push: the batch trigger falls among them, so before the end. */
  batchesLeft: number;
  batchAt: number;
  stateAt: number;
  timeMs: number;
  batches: number;
  stateSent: number;
  stateSaved: number;
  timer: NodeJS.Timeout | undefined;
  stoppedAt: string | undefined;
  stopped: () => void;
}

interface HeldApproval {
  id: string;
  schemaId: string;
  approver: string;
  resolved: boolean;
  lastModified: string;
  data?: Record<string, unknown>;
}

/** Runs a soak and reports what it found. Rejects only for bad options; everything else is in `problems`. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  parseOptions(OptionsSchema, options, 'soak options');
  const soak = new Soak(options);
  return soak.run();
}

class Soak {
  readonly #options: SoakOptions;
  readonly #source: VersionedSource;
  readonly #plan: Planned[];
  readonly #deadline: AbortSignal;
  readonly #report: SoakReport;
  #dir = '';
  #backend: Child | undefined;
  #backendUrl = '';
  #token = '';
  #proxy: FaultProxy | undefined;
  #armed: Armed | undefined;
  /** The cursor of the last state write the service acknowledged. */
  #saved: ChangeKey | undefined;
  /** The cursor read through the API after the last worker stopped. */
  #read: ChangeKey | undefined;

  constructor(options: SoakOptions) {
    this.#options = options;
    const terms = options.terms ?? Math.ceil(options.kills / 4);
    const generations = options.kills + terms + 1;
    const shape: SourceShape = {
      seed: hash32(options.seed, 'source'),
      approvals: options.approvals,
      // One version per worker, so each one starts with changes it has not seen.
      versions: generations,
      changeRate: options.changeRate ?? 0.2,
    };
    this.#source = new VersionedSource(shape);
    this.#plan = plan(options.seed, options.kills, terms);
    this.#deadline = AbortSignal.timeout(options.deadlineMs);
    this.#report = {
      seed: options.seed,
      approvals: this.#source.records(generations - 1).length,
      generations: [],
      faults: {} as Record<FaultKind, number>,
      batches: 0,
      stateWrites: 0,
      severed: 0,
      problems: [],
    };
  }

  async run(): Promise<SoakReport> {
    try {
      this.#dir = await mkdtemp(join(tmpdir(), 'approval-soak-'));
      await this.#startBackend();
      this.#proxy = await FaultProxy.start({
        target: this.#backendUrl,
        seed: hash32(this.#options.seed, 'proxy'),
        faultRate: this.#options.faultRate ?? 0.05,
        listener: {
          received: (exchange) => this.#received(exchange),
          answered: (exchange, status) => this.#answered(exchange, status),
        },
      });
      for (const planned of this.#plan) await this.#generation(planned);
    } catch (error) {
      this.#problem(error instanceof Error ? error.message : String(error));
    } finally {
      await this.#cleanUp();
    }
    this.#report.faults = this.#proxy?.counts() ?? this.#report.faults;
    this.#report.severed = this.#proxy?.severed ?? 0;
    return this.#report;
  }

  async #startBackend(): Promise<void> {
    const adminToken = randomBytes(16).toString('hex');
    this.#backend = spawnScript('src/cli/connector.ts', ['backend', '--port', '0', '--host', '127.0.0.1'], {
      APPROVAL_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
    });
    const [, url] = await this.#within(
      waitForOutput(this.#backend, /Reference backend listening on (http:\/\/\S+)/),
      'the backend to listen',
    );
    this.#backendUrl = url!;
    this.#token = `soak-${randomBytes(12).toString('hex')}`;
    const answer = await request(`${this.#backendUrl}/admin/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        organizationName: 'Soak',
        systemName: 'Soak source',
        connectorToken: this.#token,
      }),
    });
    await answer.body.dump();
    if (answer.statusCode !== 200) throw new Error(`creating the tenant answered ${answer.statusCode}`);
  }

  async #generation(planned: Planned): Promise<void> {
    const { version, sync } = planned;
    const versionFile = join(this.#dir, 'version');
    await writeFile(`${versionFile}.next`, String(version));
    await rename(`${versionFile}.next`, versionFile);

    const before = this.#read;
    const since = before === undefined ? undefined : Date.parse(before.lastModified) - sync.overlapMs;
    const batchesLeft = Math.max(
      1,
      Math.ceil(this.#source.changesSince(version, since).length / sync.batchSize),
    );
    const settings: WorkerSettings = {
      baseUrl: this.#proxy!.url,
      token: this.#token,
      source: this.#source.shape,
      versionFile,
      sync,
      logLevel: this.#options.workerLogLevel ?? 'silent',
    };
    this.#proxy!.latencyMs = planned.latencyMs;
    const worker = spawnScript('test/soak/worker.ts', [], { SOAK_WORKER: JSON.stringify(settings) });
    let stopped = () => {};
    const stop = new Promise<void>((resolve) => {
      stopped = resolve;
    });
    const armed: Armed = {
      planned,
      trigger: planned.signal === 'final' ? 'none' : planned.trigger,
      worker,
      target: this.#source.newest(version),
      batchesLeft,
      batchAt: 1 + Math.floor(planned.share * batchesLeft),
      // Ordered runs save the cursor after each acknowledged prefix; others once, at the end of a run.
      stateAt: sync.ordered ? 1 + Math.floor(planned.share * Math.min(3, batchesLeft)) : 1,
      timeMs: Math.floor(planned.share * 1000),
      batches: 0,
      stateSent: 0,
      stateSaved: 0,
      timer: undefined,
      stoppedAt: undefined,
      stopped,
    };
    this.#armed = armed;

    const exitedFirst = await this.#within(
      Promise.race([stop.then(() => false), worker.exit.then(() => true)]),
      `worker ${planned.index + 1} to reach its stopping point`,
    );
    let exit: Exit | undefined;
    if (exitedFirst && armed.stoppedAt === undefined) {
      armed.stoppedAt = 'never: it exited by itself';
      exit = await worker.exit;
      this.#problem(
        `worker ${planned.index + 1} exited by itself (${describeExit(exit)}) before it was stopped:\n${worker.output()}`,
      );
    } else {
      exit = await this.#awaitExit(armed);
    }
    clearTimeout(armed.timer);
    this.#armed = undefined;
    // A request of the stopped worker may still be on its way to the service; let it land before reading.
    await this.#within(this.#proxy!.idle(), 'the proxy to forward what it holds');
    await this.#check(armed, exit);
  }

  /** Waits for the stopped worker's exit and checks that it ended as its signal says it should. */
  async #awaitExit(armed: Armed): Promise<Exit | undefined> {
    const { planned, worker } = armed;
    if (planned.signal === 'SIGKILL') {
      const exit = await this.#within(worker.exit, `worker ${planned.index + 1} to die`);
      if (exit.signal !== 'SIGKILL')
        this.#problem(`worker ${planned.index + 1} ended with ${describeExit(exit)}, not SIGKILL`);
      return exit;
    }
    const exit = await this.#within(
      exitWithin(worker.exit, SHUTDOWN_LIMIT_MS),
      `worker ${planned.index + 1} to exit after SIGTERM`,
    );
    if (exit === undefined) {
      this.#problem(
        `worker ${planned.index + 1} had not exited ${SHUTDOWN_LIMIT_MS} ms after SIGTERM:\n${worker.output()}`,
      );
      worker.process.kill('SIGKILL');
      await worker.exit;
    } else if (exit.code !== 0) {
      this.#problem(
        `worker ${planned.index + 1} exited with ${describeExit(exit)} after SIGTERM, not 0:\n${worker.output()}`,
      );
    }
    return exit;
  }

  async #check(armed: Armed, exit: Exit | undefined): Promise<void> {
    const { planned } = armed;
    const last = planned.signal === 'final';
    const before = this.#read;
    const cursor = await this.#readCursor();
    if (before !== undefined && (cursor === undefined || compareKeys(cursor, before) < 0)) {
      this.#problem(
        `the saved cursor moved backwards across worker ${planned.index + 1}: from ${describeKey(before)} to ${describeKey(cursor)}`,
      );
    }
    if (!isDeepStrictEqual(cursor, this.#saved)) {
      this.#problem(
        `after worker ${planned.index + 1} the service's state has the cursor ${describeKey(cursor)}, but the last state ` +
          `write it acknowledged had ${describeKey(this.#saved)}`,
      );
    }
    if (last && (cursor === undefined || compareKeys(cursor, armed.target) !== 0)) {
      this.#problem(
        `the final cursor is ${describeKey(cursor)}, not the source's newest change ${describeKey(armed.target)}`,
      );
    }
    this.#read = cursor;
    const held = await this.#checkService(planned.version, cursor, last);
    const signal = planned.signal === 'final' ? 'SIGTERM' : planned.signal;
    this.#report.generations.push({
      index: planned.index,
      version: planned.version,
      signal,
      stoppedAt: armed.stoppedAt ?? '',
      sync: planned.sync,
      exit,
      cursor,
      held,
    });
    const { batchSize, concurrency, ordered, overlapMs } = planned.sync;
    const severed =
      planned.signal === 'SIGKILL' && planned.sever ? ', losing what it still had in transit' : '';
    const state =
      this.#report.problems.length === 0
        ? 'all as the source had them'
        : `${this.#report.problems.length} problems so far`;
    this.#options.onProgress?.(
      `worker ${planned.index + 1}/${this.#plan.length} (source version ${planned.version}; ` +
        `${ordered ? 'ordered' : 'unordered'}, ${batchSize} a batch, ${concurrency} in flight, ` +
        `overlap ${overlapMs} ms; latency up to ${planned.latencyMs} ms): ${signal} ${armed.stoppedAt}${severed}; ` +
        `cursor ${describeKey(cursor)}; the service holds ${held} approvals, ${state}`,
    );
  }

  /**
   * Reads every approval the service holds and checks it against the source: each one is a version the source had,
   * and each of the source's current records up to `cursor` (all of them, when `final`) is held as it is now.
   */
  async #checkService(version: number, cursor: ChangeKey | undefined, final: boolean): Promise<number> {
    const held = await this.#listApprovals();
    const found: string[] = [];
    for (const approval of held.values()) {
      const index = this.#source.indexOf(approval.id);
      const history = index === undefined ? [] : this.#source.history(index, version);
      if (!history.some((record) => sameApproval(record, approval))) {
        found.push(`the service holds ${approval.id} of ${approval.lastModified} as the source never had it`);
      }
    }
    for (const record of this.#source.records(version)) {
      if (!final && (cursor === undefined || compareKeys(record, cursor) > 0)) continue;
      const approval = held.get(record.id);
      if (approval === undefined) {
        found.push(
          `${record.id} of ${record.lastModified} is not in the service${final ? '' : ', though before the cursor'}`,
        );
      } else if (!sameApproval(record, approval)) {
        found.push(
          `the service holds ${record.id} of ${approval.lastModified}, the source's is of ${record.lastModified}`,
        );
      }
    }
    for (const problem of found.slice(0, MAX_PROBLEMS_PER_CHECK)) this.#problem(problem);
    if (found.length > MAX_PROBLEMS_PER_CHECK) {
      this.#problem(`... and ${found.length - MAX_PROBLEMS_PER_CHECK} more such approvals`);
    }
    return held.size;
  }

  #received(exchange: Exchange): void {
    const armed = this.#armed;
    if (armed === undefined) return;
    if (armed.trigger === 'time' && armed.timer === undefined) {
      armed.timer = setTimeout(
        () => this.#stop(armed, `${armed.timeMs} ms after its first request`),
        armed.timeMs,
      );
    }
    if (isRequest(exchange, STATE_PATH)) {
      armed.stateSent += 1;
      if (armed.trigger === 'state-sent' && armed.stateSent === armed.stateAt) {
        this.#stop(armed, `as it sent state write ${armed.stateAt}, before the service had it`);
      }
    }
  }

  #answered(exchange: Exchange, status: number): void {
    if (status !== 200) return;
    const armed = this.#armed;
    if (isRequest(exchange, BATCH_PATH)) {
      this.#report.batches += 1;
      if (armed === undefined) return;
      armed.batches += 1;
      if (armed.trigger === 'batch' && armed.batches === armed.batchAt) {
        this.#stop(
          armed,
          `once the service had saved batch ${armed.batchAt} of ${armed.batchesLeft} or more, before the worker heard`,
        );
      }
    } else if (isRequest(exchange, STATE_PATH)) {
      this.#saved = this.#stateWritten(exchange);
      if (armed === undefined) return;
      armed.stateSaved += 1;
      if (armed.trigger === 'state-saved' && armed.stateSaved === armed.stateAt) {
        this.#stop(armed, `once the service had saved state write ${armed.stateAt}, before the worker heard`);
      } else if (this.#saved !== undefined && compareKeys(this.#saved, armed.target) === 0) {
        this.#stop(
          armed,
          armed.planned.signal === 'final'
            ? 'once it had caught up'
            : 'once it had caught up, before its trigger',
        );
      }
    }
  }

  /** Checks one acknowledged state write against the one before it, and returns its cursor. */
  #stateWritten(exchange: Exchange): ChangeKey | undefined {
    this.#report.stateWrites += 1;
    let cursor: ChangeKey | undefined;
    try {
      cursor = savedCursorOf(JSON.parse(exchange.body.toString()).state);
    } catch {
      this.#problem(
        `the service acknowledged a state write that is not JSON: ${exchange.body.toString().slice(0, 200)}`,
      );
    }
    const previous = this.#saved;
    if (previous !== undefined && (cursor === undefined || compareKeys(cursor, previous) < 0)) {
      this.#problem(
        `state write ${this.#report.stateWrites} moved the cursor backwards, from ${describeKey(previous)} to ${describeKey(cursor)}`,
      );
    }
    return cursor;
  }

  /** Stops the armed worker now, with its planned signal, from inside the proxy's listener: at that exact point. */
  #stop(armed: Armed, moment: string): void {
    if (armed.stoppedAt !== undefined) return;
    armed.stoppedAt = moment;
    clearTimeout(armed.timer);
    if (armed.planned.signal === 'SIGKILL') {
      armed.worker.process.kill('SIGKILL');
      if (armed.planned.sever) this.#proxy!.sever();
    } else {
      armed.worker.process.kill('SIGTERM');
    }
    armed.stopped();
  }

  async #readCursor(): Promise<ChangeKey | undefined> {
    const body = await this.#get(STATE_PATH);
    return savedCursorOf(body?.data?.state?.state);
  }

  /** Every approval the service holds, read through Get approvals, paging forward with `lastModified[gt]`. */
  async #listApprovals(): Promise<Map<string, HeldApproval>> {
    const held = new Map<string, HeldApproval>();
    let after = 0;
    for (;;) {
      const query = `lastModified%5Bgt%5D=${encodeURIComponent(new Date(after).toISOString())}&view=full`;
      const page = (await this.#get(`/v2/rawapprovals?${query}`)).data.approvals as HeldApproval[];
      for (const approval of page) held.set(approval.id, approval);
      if (page.length < 50) return held;
      const newest = Math.max(...page.map((approval) => Date.parse(approval.lastModified)));
      if (!(newest > after)) throw new Error('Get approvals did not move forward while paging');
      after = newest;
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: the answers are read loosely; the checks look at their values.
  async #get(path: string): Promise<any> {
    const answer = await this.#within(
      request(`${this.#backendUrl}${path}`, { headers: { authorization: `Bearer ${this.#token}` } }),
      `GET ${path}`,
    );
    const body = await answer.body.json();
    if (answer.statusCode !== 200) throw new Error(`GET ${path} answered ${answer.statusCode}`);
    return body;
  }

  async #cleanUp(): Promise<void> {
    const armed = this.#armed;
    if (
      armed !== undefined &&
      armed.worker.process.exitCode === null &&
      armed.worker.process.signalCode === null
    ) {
      armed.worker.process.kill('SIGKILL');
      await armed.worker.exit;
    }
    await this.#proxy?.close();
    const backend = this.#backend;
    if (backend !== undefined && backend.process.exitCode === null && backend.process.signalCode === null) {
      backend.process.kill('SIGTERM');
      const exit = await exitWithin(backend.exit, BACKEND_STOP_LIMIT_MS);
      if (exit === undefined) {
        this.#problem(`the backend had not exited ${BACKEND_STOP_LIMIT_MS} ms after SIGTERM`);
        backend.process.kill('SIGKILL');
        await backend.exit;
      } else if (exit.code !== 0) {
        this.#problem(`the backend exited with ${describeExit(exit)} after SIGTERM:\n${backend.output()}`);
      }
    }
    if (this.#dir !== '') await rm(this.#dir, { recursive: true, force: true });
  }

  /** `promise`, or a rejection once the soak's deadline has passed. */
  #within<T>(promise: Promise<T>, what: string): Promise<T> {
    const deadline = this.#deadline;
    return new Promise((resolve, reject) => {
      const onAbort = () =>
        reject(
          new Error(
            `the soak did not finish within ${this.#options.deadlineMs} ms: it was waiting for ${what}`,
          ),
        );
      if (deadline.aborted) {
        onAbort();
        return;
      }
      deadline.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          deadline.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          deadline.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  #problem(problem: string): void {
    this.#report.problems.push(problem);
  }
}

/** The workers' lives, fixed by the seed: which signal stops each, when, and how each syncs. */
function plan(seed: number, kills: number, terms: number): Planned[] {
  const random = seededRandom(hash32(seed, 'plan'));
  const signals: Planned['signal'][] = [
    ...Array.from({ length: kills }, () => 'SIGKILL' as const),
    ...Array.from({ length: terms }, () => 'SIGTERM' as const),
  ];
  for (let index = signals.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [signals[index], signals[other]] = [signals[other]!, signals[index]!];
  }
  signals.push('final');
  return signals.map((signal, index) => ({
    index,
    version: index,
    signal,
    trigger: pick<TriggerKind>(random, ['batch', 'batch', 'state-sent', 'state-saved', 'time']),
    share: random(),
    latencyMs: pick(random, [0, 0, 20]),
    sever: random() < 0.5,
    sync: {
      batchSize: pick(random, [25, 100, 250]),
      concurrency: pick(random, [1, 2, 4]),
      ordered: random() < 0.75,
      overlapMs: pick(random, [0, 1_000, 300_000]),
    },
  }));
}

function isRequest(exchange: Exchange, path: string): boolean {
  return exchange.method === 'PUT' && exchange.path === path;
}

function sameApproval(record: SoakApproval, approval: HeldApproval): boolean {
  return (
    record.id === approval.id &&
    record.schemaId === approval.schemaId &&
    record.approver === approval.approver &&
    record.resolved === approval.resolved &&
    Date.parse(record.lastModified) === Date.parse(approval.lastModified) &&
    isDeepStrictEqual(record.data, approval.data)
  );
}

function describeKey(key: ChangeKey | undefined): string {
  return key === undefined ? 'none' : `(${key.lastModified}, ${key.id})`;
}

function describeExit(exit: Exit): string {
  return exit.signal === null ? `code ${exit.code}` : `signal ${exit.signal}`;
}
