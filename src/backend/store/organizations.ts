import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { StoreContext } from './context.js';

/** An organization: the tenant of the Management API. */
export interface Organization {
  id: string;
  name: string;
}

export interface NewOrganization {
  /** @default a random UUID */
  id?: string;
  /** @default 'Organization' */
  name?: string;
}

export class Organizations {
  constructor(private readonly ctx: StoreContext) {}

  create(input: NewOrganization = {}): Organization {
    const organization = { id: input.id ?? randomUUID(), name: input.name ?? 'Organization' };
    if (this.find(organization.id) !== undefined) {
      throw ServiceError.conflict(`organization ${organization.id} already exists`);
    }
    this.ctx.db.run(
      'INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)',
      organization.id,
      organization.name,
      this.ctx.now(),
    );
    this.ctx.changed({ kind: 'directory' });
    return organization;
  }

  /** Every organization, by name then id. */
  list(): Organization[] {
    return this.ctx.db
      .all<Organization>('SELECT id, name FROM organizations ORDER BY name, id')
      .map((row) => ({ id: row.id, name: row.name }));
  }

  find(id: string): Organization | undefined {
    return this.ctx.db.get<Organization>('SELECT id, name FROM organizations WHERE id = ?', id);
  }

  /** The organization, or the published not-found error. */
  get(id: string): Organization {
    const organization = this.find(id);
    if (organization === undefined) throw ServiceError.notFound('orgs', id);
    return { ...organization };
  }
}
