import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { startReferenceBackend } from '../../src/backend/index.js';
import { hashToken } from '../../src/backend/store/index.js';
import { SCHEMA_VERSION } from '../../src/backend/store/schema.js';
import { ValidationError } from '../../src/errors.js';
import { call } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'reference-backend-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a data file', () => {
  it('keeps everything across a restart, and stores tokens hashed', async () => {
    const dataFile = join(dir, 'data.sqlite');
    const first = await startReferenceBackend({ dataFile });
    const tenant = first.createTenant({
      managementToken: 'plain-management-token',
      connectorToken: 'plain-connector-token',
    });
    const user = first.createUser(tenant.organization.id, {
      email: 'a@x.example',
      firstName: 'A',
      lastName: 'B',
    });
    await call(first, 'PATCH', '/v2/connector', {
      token: tenant.connectorToken,
      body: { taskTypes: ['approve'] },
    });
    await call(first, 'PUT', '/v2/rawapprovals/A', {
      token: tenant.connectorToken,
      body: { approval: { schemaId: 's', approver: 'u', lastModified: '2026-01-01T00:00:00Z' } },
    });
    await call(first, 'PUT', '/v2/connector/state', {
      token: tenant.connectorToken,
      body: { state: { cursor: 7 } },
    });
    const task = first.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'A' });
    await first.close();

    const bytes = [dataFile, `${dataFile}-wal`]
      .filter((file) => existsSync(file))
      .map((file) => readFileSync(file).toString('latin1'))
      .join('');
    expect(bytes).not.toContain('plain-management-token');
    expect(bytes).not.toContain('plain-connector-token');

    const second = await startReferenceBackend({ dataFile });
    try {
      const users = await call(second, 'GET', '/v1/users', { token: tenant.managementToken });
      expect(users.body.map((u: { id: string }) => u.id)).toEqual([user.id]);
      const approval = await call(second, 'GET', '/v2/rawapprovals/A', { token: tenant.connectorToken });
      expect(approval.body.data.approval.lastModified).toBe('2026-01-01T00:00:00.000Z');
      expect(second.getState(tenant.system.id).state).toEqual({ cursor: 7 });
      const delivered = await call(second, 'GET', '/v2/connector/tasks', { token: tenant.connectorToken });
      expect(delivered.body.data.task.id).toBe(task.id);
    } finally {
      await second.close();
    }
  });

  it('applies a seed only to an empty store, so a restart with the same seed duplicates nothing', async () => {
    const dataFile = join(dir, 'seeded.sqlite');
    const seed = {
      organizations: [
        {
          name: 'Acme',
          managementTokens: ['seeded-management'],
          users: [{ email: 'a@x.example', firstName: 'A', lastName: 'B' }],
        },
      ],
    };
    for (let run = 0; run < 2; run++) {
      const backend = await startReferenceBackend({ dataFile, seed });
      const users = await call(backend, 'GET', '/v1/users', { token: 'seeded-management' });
      expect(users.body).toHaveLength(1);
      await backend.close();
    }
  });
});

describe('a data file of an earlier schema', () => {
  const ORG = '6f1c2a4e-0000-4000-8000-000000000001';
  const SYSTEM = '6f1c2a4e-0000-4000-8000-000000000002';
  const ADA = '6f1c2a4e-0000-4000-8000-000000000003';
  const GRACE = '6f1c2a4e-0000-4000-8000-000000000004';
  const TASK = '6f1c2a4e-0000-4000-8000-000000000005';

  type Insert = (sql: string, ...values: (string | number | null)[]) => void;

  /**
   * Writes a file as a backend of schema `version` left it: its schema, an organization with a system, the system's
   * connector token (`v<version>-connector`) and its registration, then what `fill` inserts.
   */
  function oldStoreFile(file: string, version: 1 | 2, at: number, fill: (insert: Insert) => void): void {
    const db = new DatabaseSync(file);
    db.exec(readFileSync(new URL(`./fixtures/schema-v${version}.sql`, import.meta.url), 'utf8'));
    const insert: Insert = (sql, ...values) => db.prepare(sql).run(...values);
    insert('INSERT INTO organizations VALUES (?, ?, ?)', ORG, 'Acme', at);
    insert('INSERT INTO systems VALUES (?, ?, ?, ?)', SYSTEM, ORG, 'Jira', at);
    insert(
      'INSERT INTO tokens VALUES (?, ?, ?, ?, ?)',
      hashToken(`v${version}-connector`),
      'connector',
      ORG,
      SYSTEM,
      at,
    );
    insert('INSERT INTO connectors VALUES (?, ?, 0, NULL, NULL, ?)', SYSTEM, '["approve"]', at);
    fill(insert);
    db.exec(`PRAGMA user_version = ${version}`);
    db.close();
  }

  /** A file as a backend of schema version 1 left it: a tenant, two users, a mapping, an approval, a waiting task. */
  function versionOneFile(file: string): void {
    const at = Date.parse('2026-04-01T00:00:00.000Z');
    oldStoreFile(file, 1, at, (insert) => {
      insert(
        'INSERT INTO tokens VALUES (?, ?, ?, ?, ?)',
        hashToken('v1-management'),
        'management',
        ORG,
        null,
        at,
      );
      insert("INSERT INTO connector_states VALUES (?, ?, ?, ?, '{}')", SYSTEM, TASK, at, at);
      insert(
        'INSERT INTO users VALUES (?, ?, ?, ?, ?, ?)',
        ADA,
        ORG,
        'ada@acme.example',
        'Ada',
        'Lovelace',
        at,
      );
      insert(
        'INSERT INTO users VALUES (?, ?, ?, ?, ?, ?)',
        GRACE,
        ORG,
        'grace@acme.example',
        'Grace',
        'Hopper',
        at,
      );
      insert('INSERT INTO user_mappings VALUES (?, ?, ?)', SYSTEM, ADA, 'jira-ada');
      insert("INSERT INTO approvals VALUES (?, 'PO-1', 'po', 'u', 0, ?, '{}')", SYSTEM, at);
      insert(
        `INSERT INTO tasks (id, system_id, type, approval_id, approve_comments, state, available_at, created_at)
       VALUES (?, ?, 'approve', 'PO-1', '', 'waiting', ?, ?)`,
        TASK,
        SYSTEM,
        at,
        at,
      );
    });
  }

  /** The file's tables, indexes and triggers as SQLite keeps them, and its schema version. */
  function schemaOf(file: string): { version: unknown; objects: unknown[] } {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const objects = db
        .prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name')
        .all()
        // A table rebuilt under another name and renamed keeps its new name quoted.
        .map((row) => ({ ...row, sql: String(row.sql).replace(/^CREATE TABLE "(\w+)"/, 'CREATE TABLE $1') }));
      return { version: db.prepare('PRAGMA user_version').get()?.user_version, objects };
    } finally {
      db.close();
    }
  }

  it('moves a version 1 file to the current schema, keeping its data, and searches its users', async () => {
    const dataFile = join(dir, 'version-1.sqlite');
    versionOneFile(dataFile);
    const backend = await startReferenceBackend({ dataFile });
    const management = { token: 'v1-management' };
    try {
      const found = await call(
        backend,
        'GET',
        '/v1/users?search=LOVEL&searchableFields=lastName',
        management,
      );
      expect(found.body.map((user: { id: string }) => user.id)).toEqual([ADA]);
      expect((await call(backend, 'GET', `/v1/users/${ADA}/usermappings`, management)).body).toEqual([
        { systemUserId: 'jira-ada', systemId: SYSTEM, userId: ADA },
      ]);
      const task = await call(backend, 'GET', '/v2/connector/tasks', { token: 'v1-connector' });
      expect(task.body.data.task.id).toBe(TASK);

      // The rebuilt users table still anchors the mappings (cascade) and the search index (triggers).
      const deleted = await call(backend, 'DELETE', '/v1/users', { ...management, body: [ADA] });
      expect(deleted.body).toEqual({ deleted: 1 });
      expect((await call(backend, 'GET', `/v1/systems/${SYSTEM}/usermappings`, management)).body).toEqual([]);
      expect(
        (await call(backend, 'GET', '/v1/users?search=lovel&searchableFields=lastName', management)).body,
      ).toEqual([]);
      await call(backend, 'POST', `/v1/orgs/${ORG}/users/bulk`, {
        ...management,
        body: [{ email: 'barbara@acme.example', firstName: 'Barbara', lastName: 'Liskov' }],
      });
      const added = await call(backend, 'GET', '/v1/users?search=lisk&searchableFields=lastName', management);
      expect(added.body.map((user: { email: string }) => user.email)).toEqual(['barbara@acme.example']);
    } finally {
      await backend.close();
    }

    const freshFile = join(dir, 'fresh.sqlite');
    await (await startReferenceBackend({ dataFile: freshFile })).close();
    const migrated = schemaOf(dataFile);
    expect(migrated.objects).toContainEqual(expect.objectContaining({ name: 'users_search' }));
    expect(migrated).toEqual(schemaOf(freshFile));
  });

  /**
   * A file as a backend of schema version 2 left it, with three tasks of one system: the first leased for an hour
   * still, the second leased until a minute ago, the third waiting.
   */
  function versionTwoFile(file: string, at: number): string[] {
    const tasks: [string, string, number][] = [
      ['6f1c2a4e-0000-4000-8000-000000000011', 'leased', at + 60 * 60_000],
      ['6f1c2a4e-0000-4000-8000-000000000012', 'leased', at - 60_000],
      ['6f1c2a4e-0000-4000-8000-000000000013', 'waiting', at - 30_000],
    ];
    oldStoreFile(file, 2, at, (insert) => {
      insert("INSERT INTO approvals VALUES (?, 'PO-1', 'po', 'u', 0, ?, '{}')", SYSTEM, at);
      for (const [id, state, availableAt] of tasks) {
        insert(
          `INSERT INTO tasks (id, system_id, type, approval_id, approve_comments, state, available_at, deliveries, created_at)
         VALUES (?, ?, 'approve', 'PO-1', '', ?, ?, ?, ?)`,
          id,
          SYSTEM,
          state,
          availableAt,
          state === 'leased' ? 1 : 0,
          at - 120_000,
        );
      }
    });
    return tasks.map(([id]) => id);
  }

  it('moves a version 2 file to the current schema, and leases from it in order, leases still running left alone', async () => {
    const dataFile = join(dir, 'version-2.sqlite');
    const at = Date.parse('2026-06-01T00:00:00.000Z');
    const [running, ended, waiting] = versionTwoFile(dataFile, at);
    const backend = await startReferenceBackend({ dataFile, now: () => at });
    const getTask = async () =>
      (await call(backend, 'GET', '/v2/connector/tasks', { token: 'v2-connector' })).body.data.task?.id ??
      null;
    try {
      expect(backend.getTask(running as string)).toMatchObject({ status: 'leased', deliveries: 1 });
      expect(backend.getTask(ended as string)).toMatchObject({ status: 'waiting', deliveries: 1 });
      expect([await getTask(), await getTask(), await getTask()]).toEqual([ended, waiting, null]);
      expect(backend.listTasks(SYSTEM).map((task) => [task.status, task.deliveries])).toEqual([
        ['leased', 1],
        ['leased', 2],
        ['leased', 1],
      ]);
    } finally {
      await backend.close();
    }

    const freshFile = join(dir, 'fresh-for-2.sqlite');
    await (await startReferenceBackend({ dataFile: freshFile })).close();
    expect(schemaOf(dataFile)).toEqual(schemaOf(freshFile));
  });

  it('refuses a file of a newer schema with a ValidationError naming the file, and leaves it as it was', async () => {
    const dataFile = join(dir, 'version-99.sqlite');
    const db = new DatabaseSync(dataFile);
    db.exec('CREATE TABLE later (id TEXT); PRAGMA user_version = 99');
    db.close();
    const refused = startReferenceBackend({ dataFile });
    await expect(refused).rejects.toBeInstanceOf(ValidationError);
    await expect(refused).rejects.toThrow(
      `Invalid data file ${dataFile}: has schema version 99; this backend reads version ${SCHEMA_VERSION}`,
    );
    expect(schemaOf(dataFile)).toMatchObject({ version: 99, objects: [{ name: 'later' }] });
  });
});
