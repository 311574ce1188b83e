import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { ValidationError } from '../../errors.js';
import { SCHEMA, SCHEMA_VERSION } from './schema.js';

export type Row = Record<string, SQLInputValue>;

/**
 * The SQLite connection: prepared statements cached by their text, and transactions that nest (an inner one joins
 * the outer), so a request's writes commit together or not at all.
 */
export class Database {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  #depth = 0;
  #closed = false;

  constructor(file?: string) {
    // Loaded here rather than imported: on a Node without `node:sqlite`, a static import fails while the module
    // graph links, before the kit's Node version check (node-guard.ts) can say what is wrong.
    const sqlite = process.getBuiltinModule('node:sqlite');
    this.#db = new sqlite.DatabaseSync(file ?? ':memory:');
    this.#db.exec('PRAGMA foreign_keys = ON');
    if (file !== undefined) this.#db.exec('PRAGMA journal_mode = WAL');
    // Case-insensitive substring match for Get users' search; SQLite's own lower() only folds ASCII.
    this.#db.function('contains_ci', { deterministic: true }, (haystack, needle) =>
      String(haystack).toLowerCase().includes(String(needle).toLowerCase()) ? 1 : 0,
    );
    try {
      this.#migrate(file);
    } catch (error) {
      this.#db.close();
      throw error;
    }
  }

  #migrate(file: string | undefined): void {
    const { user_version: version } = this.#db.prepare('PRAGMA user_version').get() as {
      user_version: number;
    };
    if (version === SCHEMA_VERSION) return;
    if (version !== 0) {
      throw new ValidationError(`data file ${file}`, [
        {
          path: [],
          message: `has schema version ${version}; this backend reads version ${SCHEMA_VERSION}`,
          code: 'custom',
        },
      ]);
    }
    this.transaction(() => {
      this.#db.exec(SCHEMA);
      this.#db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    });
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  get<T>(sql: string, ...params: SQLInputValue[]): T | undefined {
    return this.#statement(sql).get(...params) as T | undefined;
  }

  all<T>(sql: string, ...params: SQLInputValue[]): T[] {
    return this.#statement(sql).all(...params) as T[];
  }

  run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.#statement(sql).run(...params).changes);
  }

  /** Runs `fn` in a transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    this.#db.exec('BEGIN IMMEDIATE');
    this.#depth++;
    try {
      const result = fn();
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    } finally {
      this.#depth--;
    }
  }

  /** Whether nothing has been stored yet (no organization exists). */
  isEmpty(): boolean {
    return this.get('SELECT 1 AS one FROM organizations LIMIT 1') === undefined;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
  }
}
