import { ServiceError } from '../errors.js';
import { iso, type StoreContext } from './context.js';

/** A system's connector state, in the shape Get state answers. */
export interface ConnectorStateRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  state: Record<string, unknown>;
}

export class ConnectorStates {
  constructor(private readonly ctx: StoreContext) {}

  get(systemId: string): ConnectorStateRecord {
    const row = this.ctx.db.get<{ id: string; createdAt: number; updatedAt: number; state: string }>(
      'SELECT id, created_at AS createdAt, updated_at AS updatedAt, state FROM connector_states WHERE system_id = ?',
      systemId,
    );
    // Every system has its state record from its creation: without one, there is no such system.
    if (row === undefined) throw ServiceError.notFound('systems', systemId);
    return {
      id: row.id,
      createdAt: iso(row.createdAt),
      updatedAt: iso(row.updatedAt),
      state: JSON.parse(row.state) as Record<string, unknown>,
    };
  }

  /** Replaces the whole state object; it is not merged. */
  put(systemId: string, state: Record<string, unknown>): void {
    this.ctx.db.run(
      'UPDATE connector_states SET state = ?, updated_at = ? WHERE system_id = ?',
      JSON.stringify(state),
      this.ctx.now(),
      systemId,
    );
    this.ctx.changed({ kind: 'state', systemId });
  }
}
