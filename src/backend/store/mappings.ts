import { ServiceError } from '../errors.js';
import type { StoreContext } from './context.js';
import { pageWindow } from './users.js';

/** A user's identifier in one source system. */
export interface UserMappingRecord {
  systemUserId: string;
  systemId: string;
  userId: string;
}

export interface NewMapping {
  userId: string;
  systemUserId: string;
  /** `1` replaces the user's existing mapping in the system. */
  upsert?: 0 | 1;
}

const SELECT =
  'SELECT system_user_id AS systemUserId, system_id AS systemId, user_id AS userId FROM user_mappings';

export class UserMappings {
  constructor(private readonly ctx: StoreContext) {}

  listByUser(userId: string): UserMappingRecord[] {
    return this.ctx.db
      .all<UserMappingRecord>(`${SELECT} WHERE user_id = ? ORDER BY system_id`, userId)
      .map(copy);
  }

  listBySystem(systemId: string, page?: number, limit?: number): UserMappingRecord[] {
    const window = pageWindow(page, limit);
    return this.ctx.db
      .all<UserMappingRecord>(
        `${SELECT} WHERE system_id = ? ORDER BY user_id LIMIT ? OFFSET ?`,
        systemId,
        window.limit,
        window.offset,
      )
      .map(copy);
  }

  /** The mapping of the system's user `systemUserId`: who that is in the organization. */
  findBySystemUser(systemId: string, systemUserId: string): UserMappingRecord | undefined {
    const row = this.ctx.db.get<UserMappingRecord>(
      `${SELECT} WHERE system_id = ? AND system_user_id = ?`,
      systemId,
      systemUserId,
    );
    return row === undefined ? undefined : copy(row);
  }

  find(systemId: string, userId: string): UserMappingRecord | undefined {
    const row = this.ctx.db.get<UserMappingRecord>(
      `${SELECT} WHERE system_id = ? AND user_id = ?`,
      systemId,
      userId,
    );
    return row === undefined ? undefined : copy(row);
  }

  /**
   * Applies the items in order. The caller has checked that every user belongs to the system's organization and
   * runs this in a transaction, so a conflict part-way leaves nothing written.
   */
  addMany(systemId: string, items: readonly NewMapping[]): UserMappingRecord[] {
    for (const item of items) this.#apply(systemId, item);
    if (items.length > 0) this.ctx.changed({ kind: 'directory' });
    return items.map((item) => this.find(systemId, item.userId) as UserMappingRecord);
  }

  #apply(systemId: string, item: NewMapping): void {
    const { db } = this.ctx;
    const owner = db.get<{ userId: string }>(
      'SELECT user_id AS userId FROM user_mappings WHERE system_id = ? AND system_user_id = ?',
      systemId,
      item.systemUserId,
    );
    if (owner !== undefined && owner.userId !== item.userId) {
      // upsert replaces a user's own mapping; it never takes an identifier away from another user.
      throw ServiceError.conflict(
        `systemUserId ${item.systemUserId} is already mapped to user ${owner.userId} in system ${systemId}`,
      );
    }
    const existing = this.find(systemId, item.userId);
    if (existing === undefined) {
      db.run(
        'INSERT INTO user_mappings (system_id, user_id, system_user_id) VALUES (?, ?, ?)',
        systemId,
        item.userId,
        item.systemUserId,
      );
      return;
    }
    if (existing.systemUserId === item.systemUserId) return;
    if (item.upsert !== 1) {
      throw ServiceError.conflict(
        `user ${item.userId} is already mapped to ${existing.systemUserId} in system ${systemId}; send upsert: 1 to replace it`,
      );
    }
    db.run(
      'UPDATE user_mappings SET system_user_id = ? WHERE system_id = ? AND user_id = ?',
      item.systemUserId,
      systemId,
      item.userId,
    );
  }
}

function copy(row: UserMappingRecord): UserMappingRecord {
  return { systemUserId: row.systemUserId, systemId: row.systemId, userId: row.userId };
}
