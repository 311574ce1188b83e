import { createHash, randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { StoreContext } from './context.js';

/** Who a token speaks for: an organization on v1, or one system on v2. */
export type Principal =
  | { kind: 'management'; orgId: string }
  | { kind: 'connector'; orgId: string; systemId: string };

/** Tokens are stored as their SHA-256 only, so a copied data file does not give access. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function generateToken(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

export class Tokens {
  constructor(
    private readonly ctx: StoreContext,
    private readonly reserved: ReadonlySet<string>,
  ) {}

  /** Stores a management token of the organization and returns it (the one given, or a new one). */
  createManagement(orgId: string, token = generateToken('mgmt')): string {
    this.#insert(token, 'management', orgId, null);
    return token;
  }

  /** Stores a connector token of the system and returns it (the one given, or a new one). */
  createConnector(orgId: string, systemId: string, token = generateToken('conn')): string {
    this.#insert(token, 'connector', orgId, systemId);
    return token;
  }

  #insert(token: string, kind: Principal['kind'], orgId: string, systemId: string | null): void {
    const hash = hashToken(token);
    if (token.length < 8) throw ServiceError.badRequest('token: must be at least 8 characters long');
    // A service token equal to the admin token would open both APIs with one secret.
    if (this.reserved.has(hash) || this.ctx.db.get('SELECT 1 AS one FROM tokens WHERE hash = ?', hash)) {
      throw ServiceError.conflict('token: already in use');
    }
    this.ctx.db.run(
      'INSERT INTO tokens (hash, kind, org_id, system_id, created_at) VALUES (?, ?, ?, ?, ?)',
      hash,
      kind,
      orgId,
      systemId,
      this.ctx.now(),
    );
  }

  /** Who the token speaks for, or `undefined` for a token this store does not know. */
  resolve(token: string): Principal | undefined {
    const row = this.ctx.db.get<{ kind: Principal['kind']; orgId: string; systemId: string | null }>(
      'SELECT kind, org_id AS orgId, system_id AS systemId FROM tokens WHERE hash = ?',
      hashToken(token),
    );
    if (row === undefined) return undefined;
    return row.kind === 'connector' && row.systemId !== null
      ? { kind: 'connector', orgId: row.orgId, systemId: row.systemId }
      : { kind: 'management', orgId: row.orgId };
  }
}
