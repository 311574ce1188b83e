import type { ServerResponse } from 'node:http';
import type { StoreChange, StoreChanges } from '../store/index.js';

/** What the page hears on its event stream: which parts of which systems changed since the last event. */
export interface LiveEvent {
  changes: { kind: StoreChange['kind']; systemId?: string }[];
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
/** Writes that come together (a batch of approvals, a task and its lease) make one event. */
const COALESCE_MS = 50;
/** A comment now and then keeps proxies and idle timeouts from closing a quiet stream. */
const KEEPALIVE_MS = 25_000;

/**
 * Watches the store for the console: keeps each approval's recent writes, and pushes what changed to every open
 * event stream (server-sent events), a batch of writes at a time.
 */
export class ConsoleLive {
  /** Each approval's recent writes, the approval written longest ago first. */
  readonly #history = new Map<string, ApprovalWrite[]>();
  /**
   * Walks {@link #history} from its first key as approvals are forgotten. One iterator kept for good: a Map's
   * iterator is live, and every key before this one's place has been deleted (forgotten, or moved to the end when
   * written again), so it always stands just before the first key left. A new iterator per write would step over
   * every key deleted since the Map last compacted its table, thousands of them on a busy backend.
   */
  #oldest: Iterator<string> | undefined;
  readonly #streams = new Map<ServerResponse, string>();
  readonly #pending = new Map<string, LiveEvent['changes'][number]>();
  #flush: NodeJS.Timeout | undefined;
  readonly #keepalive: NodeJS.Timeout;
  readonly #unsubscribe: () => void;

  constructor(changes: StoreChanges) {
    this.#unsubscribe = changes.subscribe((change) => this.#heard(change));
    this.#keepalive = setInterval(() => {
      for (const stream of this.#streams.keys()) stream.write(': keep-alive\n\n');
    }, KEEPALIVE_MS).unref();
  }

  /** The approval's writes since the backend started, oldest first (the last {@link HISTORY_PER_APPROVAL}). */
  history(systemId: string, approvalId: string): ApprovalWrite[] {
    return [...(this.#history.get(`${systemId}\n${approvalId}`) ?? [])];
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
    this.#unsubscribe();
    clearInterval(this.#keepalive);
    clearTimeout(this.#flush);
    for (const stream of this.#streams.keys()) stream.end();
  }

  #heard(change: StoreChange): void {
    if (change.kind === 'approval') this.#record(change);
    if (this.#streams.size === 0) return;
    const systemId = 'systemId' in change ? change.systemId : undefined;
    this.#pending.set(`${change.kind}\n${systemId ?? ''}`, {
      kind: change.kind,
      ...(systemId === undefined ? {} : { systemId }),
    });
    this.#flush ??= setTimeout(() => this.#send(), COALESCE_MS).unref();
  }

  #record(change: Extract<StoreChange, { kind: 'approval' }>): void {
    const key = `${change.systemId}\n${change.approvalId}`;
    const writes = this.#history.get(key) ?? [];
    // Re-inserted, so the map's first key is the approval written longest ago: the one to forget first.
    this.#history.delete(key);
    this.#history.set(key, writes);
    writes.push({
      ...(change.lastModified === undefined ? {} : { lastModified: change.lastModified }),
      applied: change.applied,
      at: change.at,
    });
    if (writes.length > HISTORY_PER_APPROVAL) writes.shift();
    if (this.#history.size > HISTORY_APPROVALS) {
      this.#oldest ??= this.#history.keys();
      this.#history.delete(this.#oldest.next().value as string);
    }
  }

  #send(): void {
    this.#flush = undefined;
    const event: LiveEvent = { changes: [...this.#pending.values()] };
    this.#pending.clear();
    const frame = `data: ${JSON.stringify(event)}\n\n`;
    for (const stream of this.#streams.keys()) stream.write(frame);
  }
}
