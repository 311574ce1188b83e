import type { IncomingMessage } from 'node:http';
import type { FaultInjector } from '../faults/injector.js';
import type { FaultAction } from '../faults/schema.js';
import type { Store } from '../store/index.js';

/** What the routes share. */
export interface ServiceContext {
  readonly store: Store;
  readonly leaseMs: number;
  readonly faults: FaultInjector;
  /** Faults that act after the handler (`dropAnswer`, `duplicateTask`), noted per request when it arrived. */
  readonly pending: WeakMap<IncomingMessage, FaultAction>;
}
