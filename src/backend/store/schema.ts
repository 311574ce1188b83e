/**
 * The store's tables. Times are integers (milliseconds since the epoch) so that comparisons are exact and indexes
 * order them; JSON values are text. `PRAGMA user_version` records the version of this schema.
 */
export const SCHEMA_VERSION = 4;

// users.seq is an explicit INTEGER PRIMARY KEY because users_search refers to users by rowid, and VACUUM may renumber
// the implicit rowids of a table without one.
const usersTable = (name: string) => `
CREATE TABLE ${name} (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  email TEXT NOT NULL COLLATE NOCASE,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (org_id, email)
);`;

// Get users' search is a case-insensitive substring match: users_search holds the searchable fields folded by
// fold_case() (JavaScript's toLowerCase, which SQLite's lower() and FTS5's own folding do not match outside ASCII)
// and matches trigrams case-sensitively, so it finds a superset of the matches; the query keeps the exact test.
// Contentless: it stores the index only, and triggers keep it in step with users.
const USERS_INDEXES = `
CREATE INDEX users_by_first_name ON users (org_id, first_name);
CREATE INDEX users_by_last_name ON users (org_id, last_name);

CREATE VIRTUAL TABLE users_search USING fts5 (
  first_name, last_name, email,
  content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1'
);
CREATE TRIGGER users_search_insert AFTER INSERT ON users BEGIN
  INSERT INTO users_search (rowid, first_name, last_name, email)
  VALUES (new.seq, fold_case(new.first_name), fold_case(new.last_name), fold_case(new.email));
END;
CREATE TRIGGER users_search_update AFTER UPDATE OF first_name, last_name, email ON users BEGIN
  DELETE FROM users_search WHERE rowid = old.seq;
  INSERT INTO users_search (rowid, first_name, last_name, email)
  VALUES (new.seq, fold_case(new.first_name), fold_case(new.last_name), fold_case(new.email));
END;
CREATE TRIGGER users_search_delete AFTER DELETE ON users BEGIN
  DELETE FROM users_search WHERE rowid = old.seq;
END;`;

// created_trace_id and result_trace_id are the W3C trace ids of the requests that created the task and that reported
// its result.
const tasksTable = (name: string) => `
CREATE TABLE ${name} (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  system_id TEXT NOT NULL REFERENCES systems (id),
  type TEXT NOT NULL,
  approval_id TEXT NOT NULL,
  approve_comments TEXT NOT NULL,
  credentials TEXT,
  state TEXT NOT NULL CHECK (state IN ('waiting', 'leased', 'completed')),
  available_at INTEGER NOT NULL,
  deliveries INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  result TEXT,
  completed_at INTEGER,
  created_trace_id TEXT,
  result_trace_id TEXT
);`;

// Get task's queue: the waiting tasks, in creation order. Leasing reads it from the front, so that neither the tasks
// behind the pick, nor the completed ones, nor those leased ahead of it ever cost anything. A lease that has ended
// returns its task to this queue (found through tasks_by_state, by the lease's end) before the pick. The tasks of
// one approval are read by the console, in creation order.
const TASKS_INDEXES = `
CREATE INDEX tasks_waiting ON tasks (system_id, seq) WHERE state = 'waiting';
CREATE INDEX tasks_by_approval ON tasks (system_id, approval_id, seq);`;

export const SCHEMA = `
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE systems (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX systems_by_org ON systems (org_id, name, id);

CREATE TABLE tokens (
  hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('management', 'connector')),
  org_id TEXT NOT NULL REFERENCES organizations (id),
  system_id TEXT REFERENCES systems (id),
  created_at INTEGER NOT NULL
);

-- NOCASE makes the unique index reject an email that differs only in (ASCII) case, and orders users by email.
${usersTable('users')}
${USERS_INDEXES}

CREATE TABLE user_mappings (
  system_id TEXT NOT NULL REFERENCES systems (id),
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  system_user_id TEXT NOT NULL,
  PRIMARY KEY (system_id, user_id),
  UNIQUE (system_id, system_user_id)
);
CREATE INDEX user_mappings_by_user ON user_mappings (user_id, system_id);

CREATE TABLE approvals (
  system_id TEXT NOT NULL REFERENCES systems (id),
  id TEXT NOT NULL,
  schema_id TEXT NOT NULL,
  approver TEXT NOT NULL,
  resolved INTEGER NOT NULL,
  last_modified INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (system_id, id)
);
CREATE INDEX approvals_by_modified ON approvals (system_id, last_modified, id);
CREATE INDEX approvals_by_resolved ON approvals (system_id, resolved, last_modified, id);

CREATE TABLE connectors (
  system_id TEXT PRIMARY KEY REFERENCES systems (id),
  task_types TEXT NOT NULL,
  auth_required INTEGER NOT NULL,
  public_key TEXT,
  public_key_expired_at INTEGER,
  updated_at INTEGER
);

-- Every key a connector registered, kept until its own expiry so tasks sealed to it stay deliverable.
CREATE TABLE connector_keys (
  system_id TEXT NOT NULL REFERENCES systems (id),
  public_key TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  registered_at INTEGER NOT NULL,
  PRIMARY KEY (system_id, public_key)
);

CREATE TABLE connector_states (
  system_id TEXT PRIMARY KEY REFERENCES systems (id),
  id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  state TEXT NOT NULL
);

CREATE TABLE ui_templates (
  system_id TEXT NOT NULL REFERENCES systems (id),
  type TEXT NOT NULL,
  schema_id TEXT NOT NULL,
  id TEXT NOT NULL,
  template TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (system_id, type, schema_id)
);

-- seq orders tasks by creation; state is waiting, leased or completed, and available_at is when a waiting task
-- may be handed out or a leased one's lease ends. A leased task whose lease has ended is waiting for every reader;
-- Get task writes it back as waiting.
${tasksTable('tasks')}
CREATE INDEX tasks_by_state ON tasks (system_id, state, available_at);
${TASKS_INDEXES}
`;

/**
 * What turns a data file of the version before each into that version; a file several versions old takes them in
 * order, all in one transaction. They run with foreign keys off, so that a migration may rebuild a table.
 */
export const MIGRATIONS: Readonly<Record<number, string>> = {
  // Version 2: users get their search index (and the explicit rowid it needs), tasks their queue.
  2: `
${usersTable('users_v2')}
INSERT INTO users_v2 (id, org_id, email, first_name, last_name, created_at)
  SELECT id, org_id, email, first_name, last_name, created_at FROM users ORDER BY rowid;
DROP TABLE users;
ALTER TABLE users_v2 RENAME TO users;
${USERS_INDEXES}
INSERT INTO users_search (rowid, first_name, last_name, email)
  SELECT seq, fold_case(first_name), fold_case(last_name), fold_case(email) FROM users;
CREATE INDEX tasks_queue ON tasks (system_id, seq) WHERE state IN ('waiting', 'leased');
`,
  // Version 3: the queue holds waiting tasks only, so that the tasks leased ahead of the pick are never read (the
  // leases that have ended return their tasks to it when Get task runs); the tasks of an approval get an index.
  3: `
DROP INDEX tasks_queue;
${TASKS_INDEXES}
`,
  // Version 4: a task remembers the W3C trace ids of its creation and of its result. Rebuilt rather than altered, so
  // that a migrated file's schema reads as a new one's.
  4: `
${tasksTable('tasks_v4')}
INSERT INTO tasks_v4 (seq, id, system_id, type, approval_id, approve_comments, credentials, state, available_at,
    deliveries, created_at, result, completed_at)
  SELECT seq, id, system_id, type, approval_id, approve_comments, credentials, state, available_at, deliveries,
    created_at, result, completed_at FROM tasks ORDER BY seq;
DROP TABLE tasks;
ALTER TABLE tasks_v4 RENAME TO tasks;
CREATE INDEX tasks_by_state ON tasks (system_id, state, available_at);
${TASKS_INDEXES}
`,
};
