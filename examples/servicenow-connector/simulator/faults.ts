/**
 * Faults a test sets going on some of the simulated instance's calls, for a number of calls or until it ends them:
 * an answer in one of the instance's failure statuses, a connection cut, no answer at all, or an answer late.
 * @module
 */
import type { ServerResponse } from 'node:http';

/**
 * A call of the Table API, as {@link Faults} tells them apart: a list of approval records (`approvalList`, or
 * `approvalLookup` when it asks for them by sys_id), one read (`approvalRead`) or update (`approvalUpdate`) of an
 * approval record, a list of another table's records (`recordList`, `userList` for `sys_user`), one read of such a
 * record (`recordRead`).
 */
export type TableCall =
  | 'approvalList'
  | 'approvalLookup'
  | 'approvalRead'
  | 'approvalUpdate'
  | 'recordList'
  | 'recordRead'
  | 'userList';

/**
 * What goes wrong: an answer in a failure status (`{ status: 503 }`, `{ status: 429, retryAfterSeconds }` with
 * ServiceNow's rate-limit headers); `'unauthorized'`, the sign-in refused (`401`); `'forbidden'`, an ACL's `403`;
 * `'cut'`, the connection closed before any answer; `'hang'`, no answer until the fault ends (then the call is cut)
 * or the client gives up; `{ delayMs }`, answered and carried out only that much later, and not at all when the
 * client gave up meanwhile.
 */
export type Fault =
  | { status: 500 | 502 | 503 }
  | { status: 429; retryAfterSeconds: number }
  | 'unauthorized'
  | 'forbidden'
  | 'cut'
  | 'hang'
  | { delayMs: number };

/** A fault the simulator answers for itself, in one of the instance's failure statuses. */
export type AnsweredFault = Exclude<Fault, 'cut' | 'hang' | { delayMs: number }>;

/** Which calls a fault takes. */
export interface FaultScope {
  /** Only calls of these. @default every call */
  calls?: readonly TableCall[];
  /** Only the next this many of them. @default every one until the fault ends */
  times?: number;
}

interface Active {
  fault: Fault;
  calls: readonly TableCall[] | undefined;
  left: number;
  held: Set<ServerResponse>;
}

/** The faults set going, oldest first; see the module's documentation. */
export class Faults {
  readonly #active: Active[] = [];
  #waiting = 0;

  /** Sets a fault going; the returned function ends it (a count not used up included) and cuts the calls it holds. */
  add(fault: Fault, scope: FaultScope = {}): () => void {
    if (
      typeof fault === 'object' &&
      'delayMs' in fault &&
      !(Number.isSafeInteger(fault.delayMs) && fault.delayMs >= 0)
    ) {
      throw new TypeError(`Expected \`delayMs\` to be a whole number from 0, got \`${fault.delayMs}\``);
    }
    const { calls, times = Number.POSITIVE_INFINITY } = scope;
    if (times !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(times) && times >= 1)) {
      throw new TypeError(`Expected \`times\` to be a whole number from 1, got \`${times}\``);
    }
    const active: Active = { fault, calls, left: times, held: new Set() };
    this.#active.push(active);
    return () => {
      const at = this.#active.indexOf(active);
      if (at >= 0) this.#active.splice(at, 1);
      for (const response of active.held) response.destroy();
      active.held.clear();
    };
  }

  /** How many calls a fault holds now, unanswered: hung, or late and not yet carried out. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * The fault that takes this call, counted down, carried out as far as it goes here: a hang holds the call, a
   * delay waits (and gives the call up when its client did). Resolves to what the simulator still has to answer:
   * `undefined` to answer the call as usual, `'done'` when nothing is left to answer, or the fault to answer with.
   */
  async take(
    call: TableCall | undefined,
    response: ServerResponse,
  ): Promise<AnsweredFault | 'done' | undefined> {
    const at = this.#active.findIndex(
      ({ calls }) => calls === undefined || (call !== undefined && calls.includes(call)),
    );
    if (at < 0) return undefined;
    const active = this.#active[at]!;
    active.left -= 1;
    if (active.left <= 0) this.#active.splice(at, 1);
    const { fault } = active;
    if (fault === 'cut') {
      response.destroy();
      return 'done';
    }
    if (fault !== 'hang' && !(typeof fault === 'object' && 'delayMs' in fault)) return fault as AnsweredFault;
    this.#waiting += 1;
    active.held.add(response);
    try {
      if (fault === 'hang') {
        await new Promise((resolve) => response.once('close', resolve));
        return 'done';
      }
      const gaveUp = await closedWithin(response, fault.delayMs);
      return gaveUp ? 'done' : undefined;
    } finally {
      this.#waiting -= 1;
      active.held.delete(response);
    }
  }
}

/** Whether the call's connection closes (its client gave up, or the fault ended) within `ms`. */
function closedWithin(response: ServerResponse, ms: number): Promise<boolean> {
  if (response.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      response.off('close', onClose);
      resolve(false);
    }, ms);
    const onClose = () => {
      clearTimeout(timer);
      resolve(true);
    };
    response.once('close', onClose);
  });
}
