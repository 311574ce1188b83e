import type { ServerResponse } from 'node:http';
import type { ConnectorActivity } from '../activity/index.js';
import type { FaultEvent, FaultInjector } from '../faults/injector.js';
import type { StoreChange, StoreChanges, TaskEvent } from '../store/index.js';
import { RecentLists } from './recent.js';

/**
 * What the page hears on its event stream: which parts of which systems changed since the last event. Beside the
 * store's writes, `faults` (a fault added, removed, applied or spent) and `health` (a request of a system's
 * connector ended).
 */
export interface LiveEvent {
  changes: { kind: StoreChange['kind'] | 'faults' | 'health'; systemId?: string }[];
}

/** One write of an approval as the service received it. */
export interface ApprovalWrite {
  /** The write's lastModified; absent when it carried none (then it applies unconditionally). */
  lastModified?: string;
  /** Whether the lastModified rule let it change the stored approval. */
  applied: boolean;
  /** When it came, on the backend's clock. */
  at: string;
}

/** How many writes are kept per approval, for the approvals written most recently: enough to watch a connector at work. */
export const HISTORY_PER_APPROVAL = 20;
export const HISTORY_APPROVALS = 1_000;
/** How many events are kept per task, for the tasks that changed most recently. */
export const TIMELINE_PER_TASK = 50;
export const TIMELINE_TASKS = 1_000;
/** Writes that come together (a batch of approvals, a task and its lease) make one event. */
const COALESCE_MS = 50;
/** Requests (a connector's polls, faults applied) change only counts and times: told once a second at most. */
const QUIET_MS = 1_000;
/** A comment now and then keeps proxies and idle timeouts from closing a quiet stream. */
const KEEPALIVE_MS = 25_000;

/**
 * Watches the backend for the console: keeps each approval's recent writes and each task's recent events, and
 * pushes what changed to every open event stream (server-sent events), a batch of changes at a time.
 */
export class ConsoleLive {
  readonly #history = new RecentLists<ApprovalWrite>(HISTORY_PER_APPROVAL, HISTORY_APPROVALS);
  readonly #timelines = new RecentLists<TaskEvent>(TIMELINE_PER_TASK, TIMELINE_TASKS);
  readonly #streams = new Map<ServerResponse, string>();
  readonly #pending = new Map<string, LiveEvent['changes'][number]>();
  #flush: NodeJS.Timeout | undefined;
  #quiet: NodeJS.Timeout | undefined;
  readonly #keepalive: NodeJS.Timeout;
  readonly #unsubscribe: (() => void)[];

  constructor(changes: StoreChanges, watched: { faults?: FaultInjector; activity?: ConnectorActivity } = {}) {
    this.#unsubscribe = [changes.subscribe((change) => this.#heard(change))];
    if (watched.faults !== undefined) {
      this.#unsubscribe.push(watched.faults.subscribe((event) => this.#faulted(event)));
    }
    if (watched.activity !== undefined) {
      this.#unsubscribe.push(
        watched.activity.subscribe((systemId) => this.#queue({ kind: 'health', systemId }, QUIET_MS)),
      );
    }
    this.#keepalive = setInterval(() => {
      for (const stream of this.#streams.keys()) stream.write(': keep-alive\n\n');
    }, KEEPALIVE_MS).unref();
  }

  /** The approval's writes since the backend started, oldest first (the last {@link HISTORY_PER_APPROVAL}). */
  history(systemId: string, approvalId: string): ApprovalWrite[] {
    return this.#history.get(`${systemId}\n${approvalId}`);
  }

  /** The task's events since the backend started, oldest first (the last {@link TIMELINE_PER_TASK}). */
  timeline(taskId: string): TaskEvent[] {
    return this.#timelines.get(taskId);
  }

  /** Streams events to `response` until it closes or the session ends ({@link endSession}). */
  open(response: ServerResponse, sessionId: string): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    // The page reconnects after this long when the stream breaks (the backend restarting, say).
    response.write('retry: 2000\n\n');
    this.#streams.set(response, sessionId);
    response.on('close', () => this.#streams.delete(response));
  }

  /** Closes the event streams of a session that signed out. */
  endSession(sessionId: string): void {
    for (const [stream, owner] of this.#streams) if (owner === sessionId) stream.end();
  }

  close(): void {
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    clearInterval(this.#keepalive);
    clearTimeout(this.#flush);
    clearTimeout(this.#quiet);
    for (const stream of this.#streams.keys()) stream.end();
  }

  #heard(change: StoreChange): void {
    if (change.kind === 'approval') {
      this.#history.push(`${change.systemId}\n${change.approvalId}`, {
        ...(change.lastModified === undefined ? {} : { lastModified: change.lastModified }),
        applied: change.applied,
        at: change.at,
      });
    }
    if (change.kind === 'task' && change.taskId !== undefined && change.event !== undefined) {
      this.#timelines.push(change.taskId, change.event);
    }
    const systemId = 'systemId' in change ? change.systemId : undefined;
    this.#queue({ kind: change.kind, ...(systemId === undefined ? {} : { systemId }) }, COALESCE_MS);
  }

  #faulted(event: FaultEvent): void {
    // A hit only changes a count; a fault added, removed or spent changes what is in force, to show at once.
    this.#queue({ kind: 'faults' }, event.type === 'applied' ? QUIET_MS : COALESCE_MS);
  }

  #queue(change: LiveEvent['changes'][number], within: number): void {
    if (this.#streams.size === 0) return;
    this.#pending.set(`${change.kind}\n${change.systemId ?? ''}`, change);
    if (within === COALESCE_MS) this.#flush ??= setTimeout(() => this.#send(), within).unref();
    else this.#quiet ??= setTimeout(() => this.#send(), within).unref();
  }

  #send(): void {
    clearTimeout(this.#flush);
    clearTimeout(this.#quiet);
    this.#flush = undefined;
    this.#quiet = undefined;
    if (this.#pending.size === 0) return;
    const event: LiveEvent = { changes: [...this.#pending.values()] };
    this.#pending.clear();
    const frame = `data: ${JSON.stringify(event)}\n\n`;
    for (const stream of this.#streams.keys()) stream.write(frame);
  }
}
