import type { Task } from '../../api/index.js';

/**
 * Syncs soon after tasks succeed, or find the approval decided in the source (a pre-check's verdict, a refusal of
 * the source), so that the decision shows in the service within seconds rather than at the next scheduled run. The first request arms one timer; when it fires, one run serves every
 * request made until then (the approvals they name, together). A request made while that run goes on is served by
 * one more run, armed when it ends. So under any load there is at most one run going on and one waiting, and the
 * schedules are left alone: a scheduled run is neither moved nor skipped.
 */
export class SyncAfterTasks {
  readonly #delayMs: number;
  readonly #run: (approvalIds: string[]) => Promise<unknown>;
  readonly #approvalIds = new Set<string>();
  #requested = false;
  #running = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param delayMs how long after a request its run starts
   * @param run syncs the approvals given (every one of them requested since the last run); it handles its own
   *   failures, and a rejection is dropped
   */
  constructor(delayMs: number, run: (approvalIds: string[]) => Promise<unknown>) {
    this.#delayMs = delayMs;
    this.#run = run;
  }

  /** Asks for a run soon, for the approval of this task: one it decided, or whose state in the source it found. */
  requested(task: Task): void {
    if (this.#stopped) return;
    const id = task.data.approval.id;
    if (typeof id === 'string') this.#approvalIds.add(id);
    this.#requested = true;
    if (this.#timer === undefined && !this.#running) this.#arm();
  }

  /** Drops what was requested; no run starts from now on. A run going on is the caller's to stop. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#approvalIds.clear();
  }

  #arm(): void {
    this.#timer = setTimeout(() => this.#fire(), this.#delayMs);
    // The worker keeps its process alive; this timer alone does not.
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    const approvalIds = [...this.#approvalIds];
    this.#approvalIds.clear();
    this.#requested = false;
    this.#running = true;
    void this.#run(approvalIds)
      .catch(() => {})
      .finally(() => {
        this.#running = false;
        if (this.#requested && !this.#stopped) this.#arm();
      });
  }
}
