import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { StoreContext } from './context.js';

/** A source system of an organization, in the shape Get systems answers. */
export interface SystemRecord {
  id: string;
  name: string;
  orgId: string;
}

export interface NewSystem {
  /** @default a random UUID */
  id?: string;
  /** @default 'System' */
  name?: string;
}

export class Systems {
  constructor(private readonly ctx: StoreContext) {}

  /** Creates a system with its (unregistered) connector and its empty state record. */
  create(orgId: string, input: NewSystem = {}): SystemRecord {
    const system = { id: input.id ?? randomUUID(), name: input.name ?? 'System', orgId };
    if (this.find(system.id) !== undefined) throw ServiceError.conflict(`system ${system.id} already exists`);
    const now = this.ctx.now();
    const { db } = this.ctx;
    db.run(
      'INSERT INTO systems (id, org_id, name, created_at) VALUES (?, ?, ?, ?)',
      system.id,
      orgId,
      system.name,
      now,
    );
    db.run("INSERT INTO connectors (system_id, task_types, auth_required) VALUES (?, '[]', 0)", system.id);
    db.run(
      "INSERT INTO connector_states (system_id, id, created_at, updated_at, state) VALUES (?, ?, ?, ?, '{}')",
      system.id,
      randomUUID(),
      now,
      now,
    );
    this.ctx.changed({ kind: 'directory' });
    return system;
  }

  find(id: string): SystemRecord | undefined {
    const row = this.ctx.db.get<SystemRecord>(
      'SELECT id, name, org_id AS orgId FROM systems WHERE id = ?',
      id,
    );
    return row === undefined ? undefined : { ...row };
  }

  /** The system if it belongs to the organization; another organization's system is not found. */
  getInOrg(orgId: string, id: string): SystemRecord {
    const system = this.find(id);
    if (system === undefined || system.orgId !== orgId) throw ServiceError.notFound('systems', id);
    return system;
  }

  get(id: string): SystemRecord {
    const system = this.find(id);
    if (system === undefined) throw ServiceError.notFound('systems', id);
    return system;
  }

  listByOrg(orgId: string): SystemRecord[] {
    return this.ctx.db
      .all<SystemRecord>(
        'SELECT id, name, org_id AS orgId FROM systems WHERE org_id = ? ORDER BY name, id',
        orgId,
      )
      .map((row) => ({ ...row }));
  }
}
