import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { ValidationError } from '../../errors.js';
import { MIGRATIONS, SCHEMA, SCHEMA_VERSION } from './schema.js';

export type Row = Record<string, SQLInputValue>;

/**
 * How Get users' search compares text: both sides lowercased by JavaScript's full Unicode mapping, which SQLite's
 * `lower()` (ASCII only) does not match.
 */
export function foldCase(text: string): string {
  return text.toLowerCase();
}

/**
 * The SQLite connection: prepared statements cached by their text, and transactions that nest (an inner one joins
 * the outer), so a request's writes commit together or not at all.
 */
export class Database {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  #depth = 0;
  #closed = false;
  #afterCommit: (() => void)[] = [];

  constructor(file?: string) {
    // Loaded here rather than imported: on a Node without `node:sqlite`, a static import fails while the module
    // graph links, before the kit's Node version check (node-guard.ts) can say what is wrong.
    const sqlite = process.getBuiltinModule('node:sqlite');
    this.#db = new sqlite.DatabaseSync(file ?? ':memory:');
    this.#db.exec('PRAGMA foreign_keys = ON');
    if (file !== undefined) this.#db.exec('PRAGMA journal_mode = WAL');
    // Get users' search: the case-insensitive substring test, and the folding its index is built from.
    this.#db.function('contains_ci', { deterministic: true }, (haystack, needle) =>
      foldCase(String(haystack)).includes(foldCase(String(needle))) ? 1 : 0,
    );
    this.#db.function('fold_case', { deterministic: true }, (text) => foldCase(String(text)));
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
    if (version === 0) {
      this.transaction(() => {
        this.#db.exec(SCHEMA);
        this.#db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      });
      return;
    }
    const steps: (string | undefined)[] = [];
    for (let next = version + 1; next <= SCHEMA_VERSION; next++) steps.push(MIGRATIONS[next]);
    if (steps.length === 0 || steps.includes(undefined)) {
      throw new ValidationError(`data file ${file}`, [
        {
          path: [],
          message: `has schema version ${version}; this backend reads version ${SCHEMA_VERSION}`,
          code: 'custom',
        },
      ]);
    }
    // A migration may rebuild a table that others refer to; SQLite ignores this pragma inside a transaction.
    this.#db.exec('PRAGMA foreign_keys = OFF');
    try {
      this.transaction(() => {
        for (const step of steps) this.#db.exec(step as string);
        this.#db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      });
    } finally {
      this.#db.exec('PRAGMA foreign_keys = ON');
    }
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
    // Prepared like any other statement: every request runs one transaction, and exec() would parse these anew.
    this.#statement('BEGIN IMMEDIATE').run();
    this.#depth++;
    let result: T;
    try {
      result = fn();
      this.#statement('COMMIT').run();
    } catch (error) {
      this.#afterCommit = [];
      this.#statement('ROLLBACK').run();
      throw error;
    } finally {
      this.#depth--;
    }
    const callbacks = this.#afterCommit;
    this.#afterCommit = [];
    for (const callback of callbacks) callback();
    return result;
  }

  /** Runs `callback` once the current transaction commits (at once outside one); never if it rolls back. */
  afterCommit(callback: () => void): void {
    if (this.#depth === 0) callback();
    else this.#afterCommit.push(callback);
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
