/**
 * The worker's life: its states, the moves between them, and the error for asking a worker to do what its state
 * does not allow.
 * @module
 */
import { ApprovalKitError } from '../../errors.js';

/**
 * Where a worker is in its life. `idle` until `start()`; `starting` while it loads state and keys, registers and
 * publishes its templates; `running`; `failed` when starting failed on what retrying cannot mend; `stopping` from
 * `stop()` until everything has drained; then `stopped`.
 */
export type LifecycleState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** The moves a worker's state may make, and nothing else. `docs/worker.md` shows them as a table. */
export const LIFECYCLE_MOVES: Readonly<Record<LifecycleState, readonly LifecycleState[]>> = {
  idle: ['starting', 'stopped'],
  starting: ['running', 'failed', 'stopping'],
  running: ['stopping'],
  failed: ['stopping'],
  stopping: ['stopped'],
  stopped: [],
};

/** The worker was asked to do something its lifecycle state does not allow. */
export class LifecycleError extends ApprovalKitError<'lifecycle'> {
  constructor(action: string, state: LifecycleState) {
    super('lifecycle', `Cannot ${action} a connector that is ${state}`);
  }
}

/** Checks a move of a worker's state against {@link LIFECYCLE_MOVES}: a {@link LifecycleError} for any other. */
export function checkMove(from: LifecycleState, to: LifecycleState): void {
  if (!LIFECYCLE_MOVES[from].includes(to)) throw new LifecycleError(`move to ${to}`, from);
}
