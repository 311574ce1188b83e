import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, type UserQueryField } from '../../api/index.js';
import { ServiceError } from '../errors.js';
import type { StoreContext } from './context.js';
import { foldCase } from './database.js';

/** A stored user. The wire answer spells the first name `firastName`; see the users routes. */
export interface UserRecord {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  orgId: string;
}

export interface NewUserInput {
  /** @default a random UUID */
  id?: string;
  email: string;
  firstName: string;
  lastName: string;
}

/** One item of Add users' answer, in the order sent. */
export type AddUserOutcome =
  | { email: string; status: 'success'; id: string }
  | { email: string; status: 'failure'; error: string };

export interface UserListQuery {
  /** Counts from 1. */
  page?: number;
  limit?: number;
  search?: { term: string; fields: readonly UserQueryField[] };
  filter?: { term: string; fields: readonly UserQueryField[] };
}

const COLUMNS: Record<UserQueryField, string> = {
  firstName: 'first_name',
  lastName: 'last_name',
  email: 'email',
};
const Email = z.email();
const SELECT = 'SELECT id, email, first_name AS firstName, last_name AS lastName, org_id AS orgId';

export class Users {
  constructor(private readonly ctx: StoreContext) {}

  /** Why the user cannot be added to the organization, or `undefined` when it can. */
  #problem(orgId: string, input: NewUserInput): string | undefined {
    if (!Email.safeParse(input.email).success) return 'email: is not a valid address';
    if (input.firstName.trim() === '') return 'firstName: must not be empty';
    if (input.lastName.trim() === '') return 'lastName: must not be empty';
    if (this.ctx.db.get('SELECT 1 AS one FROM users WHERE org_id = ? AND email = ?', orgId, input.email)) {
      return 'email: is already a user of the organization';
    }
    if (input.id !== undefined && this.find(input.id) !== undefined)
      return `id: user ${input.id} already exists`;
    return undefined;
  }

  #insert(orgId: string, input: NewUserInput): UserRecord {
    const user = {
      id: input.id ?? randomUUID(),
      email: input.email,
      firstName: input.firstName,
      lastName: input.lastName,
      orgId,
    };
    this.ctx.db.run(
      'INSERT INTO users (id, org_id, email, first_name, last_name, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      user.id,
      orgId,
      user.email,
      user.firstName,
      user.lastName,
      this.ctx.now(),
    );
    this.ctx.changed({ kind: 'directory' });
    return user;
  }

  /** Adds one user or throws: the programmatic and admin path, where a bad user is the caller's mistake. */
  create(orgId: string, input: NewUserInput): UserRecord {
    const problem = this.#problem(orgId, input);
    if (problem !== undefined) {
      throw problem.includes('already') ? ServiceError.conflict(problem) : ServiceError.badRequest(problem);
    }
    return this.#insert(orgId, input);
  }

  /** Add users: each item succeeds or fails alone, in order, so a duplicate later in the body fails. */
  addMany(orgId: string, inputs: readonly NewUserInput[]): AddUserOutcome[] {
    return inputs.map((input) => {
      const problem = this.#problem(orgId, input);
      if (problem !== undefined) return { email: input.email, status: 'failure', error: problem };
      return { email: input.email, status: 'success', id: this.#insert(orgId, input).id };
    });
  }

  /** Delete users, all or nothing: the first id that is not a user of the organization fails the whole request. */
  deleteMany(orgId: string, ids: readonly string[]): number {
    const unique = [...new Set(ids)];
    for (const id of unique) this.getInOrg(orgId, id);
    let deleted = 0;
    for (const id of unique)
      deleted += this.ctx.db.run('DELETE FROM users WHERE id = ? AND org_id = ?', id, orgId);
    if (deleted > 0) this.ctx.changed({ kind: 'directory' });
    return deleted;
  }

  find(id: string): UserRecord | undefined {
    const row = this.ctx.db.get<UserRecord>(`${SELECT} FROM users WHERE id = ?`, id);
    return row === undefined ? undefined : { ...row };
  }

  /** The user if it belongs to the organization; another organization's user is not found. */
  getInOrg(orgId: string, id: string): UserRecord {
    const user = this.find(id);
    if (user === undefined || user.orgId !== orgId) throw ServiceError.notFound('users', id);
    return user;
  }

  /** Get users: ordered by email then id, filtered, then paged. */
  list(orgId: string, query: UserListQuery = {}): UserRecord[] {
    const { sql, params } = listQuery(orgId, query);
    return this.ctx.db.all<UserRecord>(sql, ...params).map((row) => ({ ...row }));
  }
}

/**
 * The statement of Get users. Its WHERE clause decides what matches; the rows it looks at come from an index when
 * the query allows (see {@link candidates}), otherwise from all of the organization's users.
 */
function listQuery(orgId: string, query: UserListQuery): { sql: string; params: (string | number)[] } {
  const where = ['org_id = ?'];
  const params: (string | number)[] = [orgId];
  if (query.search !== undefined) {
    const { term, fields } = query.search;
    where.push(`(${fields.map((field) => `contains_ci(${COLUMNS[field]}, ?)`).join(' OR ')})`);
    params.push(...fields.map(() => term));
  }
  if (query.filter !== undefined) {
    const { term, fields } = query.filter;
    // BINARY overrides the email column's NOCASE: a filter is an exact, case-sensitive value.
    where.push(`(${fields.map((field) => `${COLUMNS[field]} = ? COLLATE BINARY`).join(' OR ')})`);
    params.push(...fields.map(() => term));
  }
  const from = candidates(orgId, query);
  const { limit, offset } = pageWindow(query.page, query.limit);
  return {
    sql: `${SELECT} ${from.sql} WHERE ${where.join(' AND ')} ORDER BY email, id LIMIT ? OFFSET ?`,
    params: [...from.params, ...params, limit, offset],
  };
}

/**
 * The FROM clause of Get users: a superset of the matching users, found through an index where one applies. A
 * filter looks its exact values up in the per-field indexes (email through its NOCASE one, the WHERE clause then
 * tells the case apart). A search term of 3 characters or more is looked up in users_search, whose trigrams hold
 * every substring that long; a shorter term (or one with a NUL, which ends an FTS5 query) is tested on every user of
 * the organization. The CROSS JOIN keeps SQLite from scanning users in email order instead.
 */
function candidates(orgId: string, query: UserListQuery): { sql: string; params: string[] } {
  if (query.filter !== undefined) {
    const { term, fields } = query.filter;
    const lookups = fields.map((field) => `SELECT seq FROM users WHERE org_id = ? AND ${COLUMNS[field]} = ?`);
    return {
      sql: `FROM (${lookups.join(' UNION ')}) AS hits CROSS JOIN users ON users.seq = hits.seq`,
      params: fields.flatMap(() => [orgId, term]),
    };
  }
  const everyUser = { sql: 'FROM users', params: [] };
  const { search } = query;
  if (search === undefined) return everyUser;
  const term = foldCase(search.term);
  if ([...term].length < 3 || term.includes('\0')) return everyUser;
  const columns = search.fields.map((field) => COLUMNS[field]).join(' ');
  return {
    sql: `FROM (SELECT rowid AS seq FROM users_search WHERE users_search MATCH ?) AS hits
          CROSS JOIN users ON users.seq = hits.seq`,
    params: [`{${columns}} : "${term.replaceAll('"', '""')}"`],
  };
}

/** Paging shared by endpoints 1 and 5: pages count from 1, a page without a limit has 10 items. */
export function pageWindow(
  page: number | undefined,
  limit: number | undefined,
): { limit: number; offset: number } {
  if (page === undefined) return { limit: limit ?? -1, offset: 0 };
  const size = limit ?? DEFAULT_PAGE_LIMIT;
  return { limit: size, offset: (page - 1) * size };
}
