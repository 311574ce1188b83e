/**
 * The status line of `connector dev`, one per connector: what it shows ({@link ConnectorStatus}), how it is drawn
 * (a pure function of those figures), and the rate of approvals over a sliding window.
 * @module
 */
import { z } from 'zod';
import { func, integer, parseOptions } from '../../internal/options.js';

/** What the dev loop is doing with a connector's worker. */
export type WorkerPhase = 'building' | 'starting' | 'running' | 'stopping' | 'stopped';

/** The tasks of a connector's system, as the backend holds them. */
export interface TaskCounts {
  /** Waiting to be handed out, or offered again after a lease ended. */
  waiting: number;
  /** Leased to a worker, the lease still running. */
  running: number;
  /** Completed with a result. */
  done: number;
  /** Of those done, the ones whose result is not `success`. */
  failed: number;
}

/** The figures of one connector's status line. */
export interface ConnectorStatus {
  name: string;
  phase: WorkerPhase;
  /** How its worker last ended, once `stopped`: the exit code, or the signal that ended it; absent if it never ran. */
  exit?: number | string;
  /** Approvals the backend received from the connector since the loop started, and their rate while they come. */
  approvals: { synced: number; perSecond: number | undefined };
  tasks: TaskCounts;
  /** The last error: a worker's log line at `error` or above, a failed build, a worker that exited on its own. */
  lastError?: { at: number; message: string };
}

/** How {@link renderStatusLine} draws. */
export interface RenderOptions {
  /** Now, in milliseconds since the epoch: the last error's age is counted from it. */
  now: number;
  /** The most characters the line may take (the terminal's width): a longer line is cut, ending with `…`. */
  width: number;
}

/**
 * The status line of a connector, one line of plain text:
 * `my-connector running · approvals: 12 synced, 4.2/s · tasks: 1 waiting, 0 running, 3 done (1 failed) · last
 * error 12s ago: the source cannot be reached`.
 */
export function renderStatusLine(status: ConnectorStatus, { now, width }: RenderOptions): string {
  const { approvals, tasks, lastError } = status;
  const phase =
    status.phase === 'stopped'
      ? `${status.exit === undefined ? 'not running' : `stopped (${describeExit(status.exit)})`}, waiting for a change`
      : status.phase;
  const parts = [
    `${status.name} ${phase}`,
    `approvals: ${count(approvals.synced)} synced${approvals.perSecond === undefined ? '' : `, ${rate(approvals.perSecond)}/s`}`,
    `tasks: ${count(tasks.waiting)} waiting, ${count(tasks.running)} running, ${count(tasks.done)} done${
      tasks.failed > 0 ? ` (${count(tasks.failed)} failed)` : ''
    }`,
  ];
  if (lastError !== undefined) {
    parts.push(`last error ${age(now - lastError.at)}: ${lastError.message.split('\n')[0]}`);
  }
  return cut(parts.join(' · '), width);
}

/** Options of {@link RateWindow}. */
export interface RateWindowOptions {
  /**
   * The window, in milliseconds: at least a second.
   * @default 5000
   */
  windowMs?: number;
  /**
   * The clock, in milliseconds since the epoch.
   * @default Date.now
   */
  now?: () => number;
}

const rateWindowOptionsSchema = z.strictObject({
  windowMs: integer(1_000).default(5_000),
  now: func<() => number>().default(() => Date.now),
});

/**
 * Counts what comes (approvals) and their rate over a sliding window: the count within the last `windowMs`, over
 * the time they have been coming, at least a second and at most the window. Nothing within the window, no rate.
 */
export class RateWindow {
  readonly #windowMs: number;
  readonly #now: () => number;
  /** What came within the window, oldest first, a count per instant. */
  readonly #recent: { at: number; count: number }[] = [];
  #inWindow = 0;
  /** When what is in the window began to come, after a window's time of nothing. */
  #since = 0;
  #total = 0;

  constructor(options: RateWindowOptions = {}) {
    ({ windowMs: this.#windowMs, now: this.#now } = parseOptions(
      rateWindowOptionsSchema,
      options,
      'rate window options',
    ));
  }

  /** Everything counted so far. */
  get total(): number {
    return this.#total;
  }

  /** Counts `count` more, now. */
  add(count = 1): void {
    const at = this.#now();
    this.#forget(at);
    if (this.#recent.length === 0) this.#since = at;
    const last = this.#recent.at(-1);
    if (last?.at === at) last.count += count;
    else this.#recent.push({ at, count });
    this.#inWindow += count;
    this.#total += count;
  }

  /** How many came a second, over the window; `undefined` when none came within it. */
  perSecond(): number | undefined {
    const now = this.#now();
    this.#forget(now);
    if (this.#recent.length === 0) return undefined;
    const spanMs = Math.min(this.#windowMs, Math.max(1_000, now - this.#since));
    return this.#inWindow / (spanMs / 1_000);
  }

  #forget(now: number): void {
    while (this.#recent.length > 0 && this.#recent[0]!.at <= now - this.#windowMs) {
      this.#inWindow -= this.#recent.shift()!.count;
    }
  }
}

function describeExit(exit: number | string): string {
  return typeof exit === 'number' ? `exit code ${exit}` : exit;
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

function rate(perSecond: number): string {
  return perSecond < 10 ? perSecond.toFixed(1) : count(Math.round(perSecond));
}

function age(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1_000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m ago`;
  return `${Math.floor(seconds / 3_600)}h ago`;
}

/** Cut to `width` characters, so that a terminal never wraps the line (which would break its redrawing). */
function cut(line: string, width: number): string {
  const characters = [...line];
  if (characters.length <= width) return line;
  return `${characters.slice(0, Math.max(0, width - 1)).join('')}…`;
}
