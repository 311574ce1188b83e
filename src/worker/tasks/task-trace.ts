import type { TaskResultStatus } from '../../api/index.js';
import { startSpan, type TraceContext, type TraceSpan } from '../../internal/tracing.js';

/** When a task's Get task request was sent and answered, in milliseconds since the epoch (`spanClock()`). */
export interface LeaseTiming {
  sentAt: number;
  answeredAt: number;
}

/** How a task came to this worker again, when it did: it was running here, being reported, or finished here. */
export type OfferedAgain = 'running' | 'reporting' | 'finished';

/**
 * A task's trace: its span `task {type}` (`task` for a type the connector did not declare), a trace of its own,
 * from its Get task request to the end of its result's report. Its children: `lease` (recorded once the answer
 * came, so that the empty answers of an idle worker make no trace), `precheck`, `handler` and `report result`.
 */
export class TaskTrace {
  readonly #span: TraceSpan;

  constructor(task: { id: string; type: string }, declared: boolean, lease: LeaseTiming) {
    this.#span = startSpan(declared ? `task ${task.type}` : 'task', {
      kind: 'consumer',
      root: true,
      startTime: lease.sentAt,
      attributes: { 'approval_connector.task.id': task.id, 'approval_connector.task.type': task.type },
    });
    startSpan('lease', { parent: this.#span.context, startTime: lease.sentAt }).end(lease.answeredAt);
  }

  /** The parent of the task's own spans. */
  get context(): TraceContext | undefined {
    return this.#span.context;
  }

  /** How many times this worker was handed the task, this time included, as far as it remembers. */
  delivered(deliveries: number, offeredAgain?: OfferedAgain): void {
    this.#span.set({
      'approval_connector.task.deliveries': deliveries,
      'approval_connector.task.offered_again': offeredAgain,
    });
  }

  /** The task's result status, a failure marking the span failed. */
  result(status: TaskResultStatus): void {
    this.#span.set({ 'approval_connector.task.status': status });
    if (status !== 'success') this.#span.fail(status);
  }

  /** The task handed back to the service at shutdown, unanswered. */
  interrupted(): void {
    this.#span.set({ 'approval_connector.task.status': 'interrupted' });
  }

  end(): void {
    this.#span.end();
  }
}
