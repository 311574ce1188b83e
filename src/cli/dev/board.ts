/**
 * The figures of a connector's status line, from where they are true: the backend's store (the approvals it
 * received from the connector's system, its tasks) and the worker's own log lines (its errors).
 * @module
 */
import type { StoreChange, TaskInfo } from '../../backend/index.js';
import { ERROR_LEVEL, type LogLine } from './logs.js';
import { type ConnectorStatus, RateWindow, type TaskCounts, type WorkerPhase } from './status.js';

/** Where a board reads a system's tasks: the reference backend. */
export interface TaskSource {
  listTasks(systemId: string): Pick<TaskInfo, 'status' | 'result'>[];
}

/** The status of one connector, kept as the backend and its worker tell it. */
export class ConnectorBoard {
  /** What the loop is doing with the worker. */
  phase: WorkerPhase = 'building';
  /** How the worker last ended (its exit code, or the signal), once it has. */
  exit: number | string | undefined;
  readonly #name: string;
  readonly #systemId: string;
  readonly #backend: TaskSource;
  readonly #now: () => number;
  readonly #approvals: RateWindow;
  #tasks: TaskCounts = { waiting: 0, running: 0, done: 0, failed: 0 };
  /** Whether the tasks changed since they were counted. */
  #stale = true;
  #lastError: { at: number; message: string } | undefined;

  constructor(name: string, systemId: string, backend: TaskSource, now: () => number = Date.now) {
    this.#name = name;
    this.#systemId = systemId;
    this.#backend = backend;
    this.#now = now;
    this.#approvals = new RateWindow({ now });
  }

  /** A write the backend committed: an approval the system received is counted, a task of it recounted. */
  heard(change: StoreChange): void {
    if (change.kind === 'approval' && change.systemId === this.#systemId) this.#approvals.add();
    // Leases ended across systems carry none.
    if (change.kind === 'task' && (change.systemId ?? this.#systemId) === this.#systemId) this.#stale = true;
  }

  /** A line the worker logged: one at `error` or above is the last error. */
  logged(line: LogLine): void {
    if (line.level < ERROR_LEVEL) return;
    const cause = typeof line.err?.message === 'string' ? line.err.message : undefined;
    this.error(
      [line.msg, cause].filter((part) => part !== undefined && part !== '').join(': ') || 'an error',
    );
  }

  /** Something went wrong that the worker did not log: a build that failed, a worker that ended on its own. */
  error(message: string): void {
    this.#lastError = { at: this.#now(), message };
  }

  /** The figures now. The tasks are counted again when they changed, or while one is leased (a lease may end). */
  snapshot(): ConnectorStatus {
    if (this.#stale || this.#tasks.running > 0) {
      this.#stale = false;
      this.#tasks = countTasks(this.#backend.listTasks(this.#systemId));
    }
    return {
      name: this.#name,
      phase: this.phase,
      ...(this.exit === undefined ? {} : { exit: this.exit }),
      approvals: { synced: this.#approvals.total, perSecond: this.#approvals.perSecond() },
      tasks: { ...this.#tasks },
      ...(this.#lastError === undefined ? {} : { lastError: { ...this.#lastError } }),
    };
  }
}

function countTasks(tasks: readonly Pick<TaskInfo, 'status' | 'result'>[]): TaskCounts {
  const counts: TaskCounts = { waiting: 0, running: 0, done: 0, failed: 0 };
  for (const task of tasks) {
    if (task.status === 'waiting') counts.waiting += 1;
    else if (task.status === 'leased') counts.running += 1;
    else {
      counts.done += 1;
      if (task.result?.status !== 'success') counts.failed += 1;
    }
  }
  return counts;
}
