import { isPublicKey } from '../../api/index.js';
import { ServiceError } from '../errors.js';
import { iso, type StoreContext } from './context.js';

/** What a connector registered (Update connector), plus the keys it registered before. */
export interface ConnectorRecord {
  systemId: string;
  taskTypes: string[];
  authRequired: boolean;
  publicKey?: string;
  publicKeyExpiredAt?: string;
  /** Every key registered and not yet expired, the current one included, newest first. */
  keys: { publicKey: string; expiresAt: string }[];
  /** When the connector last registered; absent until it has. */
  updatedAt?: string;
}

/** Endpoint 12's body, as validated by the wire schema. */
export interface ConnectorChange {
  taskTypes?: string[] | undefined;
  authRequired?: boolean | undefined;
  publicKey?: string | undefined;
  publicKeyExpiredAt?: string | undefined;
}

interface Row {
  taskTypes: string;
  authRequired: number;
  publicKey: string | null;
  publicKeyExpiredAt: number | null;
  updatedAt: number | null;
}

export class Connectors {
  constructor(private readonly ctx: StoreContext) {}

  get(systemId: string): ConnectorRecord {
    const row = this.ctx.db.get<Row>(
      `SELECT task_types AS taskTypes, auth_required AS authRequired, public_key AS publicKey,
              public_key_expired_at AS publicKeyExpiredAt, updated_at AS updatedAt
       FROM connectors WHERE system_id = ?`,
      systemId,
    );
    if (row === undefined) throw ServiceError.notFound('systems', systemId);
    const keys = this.ctx.db.all<{ publicKey: string; expiresAt: number }>(
      `SELECT public_key AS publicKey, expires_at AS expiresAt FROM connector_keys
       WHERE system_id = ? AND expires_at > ? ORDER BY registered_at DESC, expires_at DESC`,
      systemId,
      this.ctx.now(),
    );
    const record: ConnectorRecord = {
      systemId,
      taskTypes: JSON.parse(row.taskTypes) as string[],
      authRequired: row.authRequired === 1,
      keys: keys.map((key) => ({ publicKey: key.publicKey, expiresAt: iso(key.expiresAt) })),
    };
    if (row.publicKey !== null) record.publicKey = row.publicKey;
    if (row.publicKeyExpiredAt !== null) record.publicKeyExpiredAt = iso(row.publicKeyExpiredAt);
    if (row.updatedAt !== null) record.updatedAt = iso(row.updatedAt);
    return record;
  }

  /**
   * Update connector: merges the fields sent into the stored ones. A key comes with its expiry, in the future, in
   * the contract's encoding; the schema has already required both when `authRequired` is true.
   */
  register(systemId: string, change: ConnectorChange): void {
    const now = this.ctx.now();
    const hasKey = change.publicKey !== undefined;
    if (hasKey !== (change.publicKeyExpiredAt !== undefined)) {
      throw ServiceError.invalid([
        {
          path: [hasKey ? 'publicKeyExpiredAt' : 'publicKey'],
          message: 'publicKey and publicKeyExpiredAt come together',
          code: 'custom',
        },
      ]);
    }
    if (change.publicKey !== undefined && !isPublicKey(change.publicKey)) {
      throw ServiceError.invalid([
        {
          path: ['publicKey'],
          message: 'must be a 32-byte x25519 key in standard base64',
          code: 'invalid_format',
        },
      ]);
    }
    const expiresAt =
      change.publicKeyExpiredAt === undefined ? undefined : Date.parse(change.publicKeyExpiredAt);
    if (expiresAt !== undefined && expiresAt <= now) {
      throw ServiceError.invalid([
        { path: ['publicKeyExpiredAt'], message: 'must be in the future', code: 'custom' },
      ]);
    }
    const { db } = this.ctx;
    if (change.taskTypes !== undefined) {
      db.run(
        'UPDATE connectors SET task_types = ? WHERE system_id = ?',
        JSON.stringify([...new Set(change.taskTypes)]),
        systemId,
      );
    }
    if (change.authRequired !== undefined) {
      db.run(
        'UPDATE connectors SET auth_required = ? WHERE system_id = ?',
        change.authRequired ? 1 : 0,
        systemId,
      );
    }
    if (change.publicKey !== undefined && expiresAt !== undefined) {
      db.run(
        'UPDATE connectors SET public_key = ?, public_key_expired_at = ? WHERE system_id = ?',
        change.publicKey,
        expiresAt,
        systemId,
      );
      db.run(
        `INSERT INTO connector_keys (system_id, public_key, expires_at, registered_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (system_id, public_key) DO UPDATE SET expires_at = excluded.expires_at, registered_at = excluded.registered_at`,
        systemId,
        change.publicKey,
        expiresAt,
        now,
      );
      db.run('DELETE FROM connector_keys WHERE system_id = ? AND expires_at <= ?', systemId, now);
    }
    db.run('UPDATE connectors SET updated_at = ? WHERE system_id = ?', now, systemId);
    this.ctx.changed({ kind: 'connector', systemId });
  }
}
