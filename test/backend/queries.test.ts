import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { UserQueryField } from '../../src/api/index.js';
import { Store } from '../../src/backend/store/index.js';

// How the store's queries run, read from SQLite's own plans (EXPLAIN QUERY PLAN) of the statements the store sends.
// Plans describe the work without timing it: a SEARCH through an index reads the rows it finds, a SCAN reads them
// all, and a TEMP B-TREE sorts every row that matched before the first can be returned.

const stores: Store[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

function newStore(): Store {
  const store = new Store({ now: () => Date.parse('2026-05-01T00:00:00.000Z') });
  stores.push(store);
  return store;
}

/** The query plan of every statement `action` reads with (and, given `writes`, writes with), one array each. */
function plansOf(store: Store, action: () => unknown, { writes = false } = {}): string[][] {
  const spies = [vi.spyOn(store.db, 'get'), vi.spyOn(store.db, 'all'), vi.spyOn(store.db, 'run')];
  let calls: Parameters<Store['db']['all']>[];
  try {
    action();
  } finally {
    calls = spies.flatMap((spy, i) => (i < 2 || writes ? spy.mock.calls : []));
    for (const spy of spies) spy.mockRestore();
  }
  return calls.map(([sql, ...params]) =>
    store.db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, ...params).map((row) => row.detail),
  );
}

/** The condition of a partial index: which rows it holds. */
function indexCondition(store: Store, name: string): string | undefined {
  const row = store.db.get<{ sql: string }>(
    "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?",
    name,
  );
  return row === undefined ? undefined : / WHERE (.*)$/s.exec(row.sql)?.[1];
}

/**
 * A system whose connector takes `approve` tasks, with `depth` tasks waiting and 50 already completed; the first
 * `leasedAhead` of those waiting are then leased, their leases running for a minute.
 */
function queue(depth: number, leasedAhead = 0): { store: Store; systemId: string } {
  const store = newStore();
  const systemId = store.transaction(() => {
    const org = store.organizations.create({});
    const system = store.systems.create(org.id, {});
    store.connectors.register(system.id, { taskTypes: ['approve'] });
    store.approvals.write(system.id, 'PO-1', { schemaId: 'po', approver: 'u' });
    for (let i = 0; i < depth + 50; i++) {
      store.tasks.create({ systemId: system.id, type: 'approve', approvalId: 'PO-1' });
    }
    for (const task of store.tasks.list(system.id).slice(0, 50)) {
      store.tasks.complete(system.id, task.id, { status: 'success' });
    }
    // As many Get tasks would leave them; written at once, as leasing them one by one is what is measured.
    store.db.run(
      `UPDATE tasks SET state = 'leased', available_at = ?, deliveries = 1 WHERE seq IN (
         SELECT seq FROM tasks WHERE system_id = ? AND state = 'waiting' ORDER BY seq LIMIT ?)`,
      Date.parse('2026-05-01T00:01:00.000Z'),
      system.id,
      leasedAhead,
    );
    return system.id;
  });
  return { store, systemId };
}

describe('the Get task lease', () => {
  it('picks the next task from the index of waiting tasks instead of sorting every waiting task, at any depth', () => {
    for (const depth of [100, 1_000, 10_000]) {
      const { store, systemId } = queue(depth);
      const plans = plansOf(store, () => store.tasks.lease(systemId, 60_000));
      expect(plans.flat().join('\n')).not.toMatch(/TEMP B-TREE|\bSCAN\b/);
      expect(plans.filter((plan) => plan.some((line) => / tasks /.test(line)))).toEqual([
        ['SEARCH tasks USING INDEX tasks_waiting (system_id=?)'],
      ]);
      // With statistics of the deep queue in hand, the planner still reads the index from the front.
      store.db.run('ANALYZE');
      const analyzed = plansOf(store, () => store.tasks.lease(systemId, 60_000));
      expect(analyzed.flat()).toContain('SEARCH tasks USING INDEX tasks_waiting (system_id=?)');
      expect(analyzed.flat().join('\n')).not.toMatch(/TEMP B-TREE|\bSCAN\b/);
    }
  });

  it('reads none of the tasks leased ahead of the first waiting one, however many they are', () => {
    for (const analyze of [false, true]) {
      const { store, systemId } = queue(10_010, 10_000);
      if (analyze) store.db.run('ANALYZE');
      const firstWaiting = store.tasks.list(systemId).find((task) => task.status === 'waiting');
      let leased: ReturnType<Store['tasks']['lease']> = null;
      const plans = plansOf(store, () => (leased = store.tasks.lease(systemId, 60_000)), { writes: true });
      expect(leased).toMatchObject({ id: firstWaiting?.id });
      const lines = plans.flat();
      expect(lines.join('\n')).not.toMatch(/TEMP B-TREE|\bSCAN\b/);
      // The pick reads an index that holds waiting tasks only; the leases that ended are found by their end, so
      // a lease still running is never read.
      expect(lines).toContain('SEARCH tasks USING INDEX tasks_waiting (system_id=?)');
      expect(indexCondition(store, 'tasks_waiting')).toBe("state = 'waiting'");
      const searches = lines.filter((line) => /^SEARCH tasks USING INDEX /.test(line));
      for (const line of searches) {
        expect(line).toMatch(
          /tasks_waiting \(system_id=\?\)|\(system_id=\? AND state=\? AND available_at<\?\)|\(id=\?\)/,
        );
      }
    }
  });
});

describe('the tasks of an approval', () => {
  it('are read through their own index, in creation order, not by testing every task of the system', () => {
    const { store, systemId } = queue(1_000);
    for (const prepare of [() => {}, () => store.db.run('ANALYZE')]) {
      prepare();
      const lines = plansOf(store, () => store.tasks.listByApproval(systemId, 'PO-1')).flat();
      expect(lines.join('\n')).not.toMatch(/TEMP B-TREE|\bSCAN\b/);
      expect(lines).toContain('SEARCH tasks USING INDEX tasks_by_approval (system_id=? AND approval_id=?)');
    }
  });
});

describe('Get users', () => {
  const FIELDS: readonly UserQueryField[] = ['firstName', 'lastName', 'email'];

  function organization(store: Store, people: readonly (readonly [string, string])[]) {
    return store.transaction(() => {
      const org = store.organizations.create({});
      const ids = people.map(
        ([firstName, lastName], i) =>
          store.users.create(org.id, { email: `user${i}@x.example`, firstName, lastName }).id,
      );
      return { orgId: org.id, ids };
    });
  }

  /** An organization of 300 users among others, as the planner sees it with and without statistics. */
  function crowd(): { store: Store; orgId: string; withStatistics: () => void } {
    const store = newStore();
    const people = Array.from({ length: 900 }, (_, i) => [`First${i % 7}`, `Last${i % 450}`] as const);
    const { orgId } = organization(store, people.slice(0, 300));
    organization(store, people.slice(300));
    return { store, orgId, withStatistics: () => store.db.run('ANALYZE') };
  }

  it('searches through the trigram index instead of testing every user of the organization', () => {
    const { store, orgId, withStatistics } = crowd();
    for (const prepare of [() => {}, withStatistics]) {
      prepare();
      const lines = plansOf(store, () =>
        store.users.list(orgId, { search: { term: 'last12', fields: ['firstName', 'lastName'] } }),
      ).flat();
      expect(lines).toContainEqual(expect.stringMatching(/^SCAN users_search VIRTUAL TABLE INDEX \d+:M/));
      // The users table itself is only read by primary key, one row per match.
      expect(lines.filter((line) => / users /.test(line))).toEqual([
        'SEARCH users USING INTEGER PRIMARY KEY (rowid=?)',
      ]);
    }
  });

  it("filters through each field's index instead of testing every user of the organization", () => {
    const { store, orgId, withStatistics } = crowd();
    for (const prepare of [() => {}, withStatistics]) {
      prepare();
      const lines = plansOf(store, () =>
        store.users.list(orgId, { filter: { term: 'First1', fields: FIELDS }, page: 1, limit: 5 }),
      ).flat();
      for (const column of ['first_name', 'last_name', 'email']) {
        expect(lines).toContainEqual(
          expect.stringMatching(
            new RegExp(`^SEARCH users USING COVERING INDEX \\w+ \\(org_id=\\? AND ${column}=\\?\\)$`),
          ),
        );
      }
      expect(lines.filter((line) => / users /.test(line) && !line.includes('=?)'))).toEqual([]);
      // With a search as well, the filter's lookups still choose the users to test.
      const both = plansOf(store, () =>
        store.users.list(orgId, {
          filter: { term: 'First1', fields: ['firstName'] },
          search: { term: 'last12', fields: ['lastName'] },
        }),
      ).flat();
      expect(both).toContainEqual(expect.stringMatching(/INDEX \w+ \(org_id=\? AND first_name=\?\)/));
      expect(both.join('\n')).not.toMatch(/users_search|\bSCAN users\b/);
    }
  });

  // Characters where folding rules part ways: JavaScript's toLowerCase against SQLite's and FTS5's own folding
  // (İ, the Kelvin sign, final sigma), what the trigram tokenizer reads as U+FFFD, and what ends an FTS5 query
  // string (NUL) or quotes in it.
  const TRICKY = [
    'a',
    'B',
    'İ',
    'i',
    '\u0307',
    'ß',
    'Σ',
    'ς',
    'σ',
    'K',
    'k',
    '\0',
    '\uFFFE',
    '\uFFFF',
    '\uFFFD',
    '"',
    ' ',
    '*',
    ':',
    '{',
    '😀',
  ];
  const text = fc.string({
    unit: fc.oneof(fc.constantFrom(...TRICKY), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })),
    maxLength: 8,
  });

  it('finds exactly the users with the term in a searched field, ignoring case, whatever the text (property)', () => {
    const store = newStore();
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 6 }),
        fc.subarray([...FIELDS], { minLength: 1 }),
        fc.oneof(
          text,
          // A piece of a stored name, in another case, so that most searches do find something.
          fc
            .tuple(fc.nat(), fc.nat(), fc.nat(), fc.constantFrom('upper', 'lower', 'as is'))
            .map(([which, from, length, caseOf]) => ({ which, from, length, caseOf })),
        ),
        (names, fields, pick) => {
          const people = names.map(([first, last]) => [`F${first}`, `L${last}`] as const);
          const { orgId, ids } = organization(store, people);
          let term: string;
          if (typeof pick === 'string') {
            term = pick;
          } else {
            const name = people[pick.which % people.length]![pick.which % 2]!;
            const start = pick.from % (name.length + 1);
            const piece = name.slice(start, start + (pick.length % 6));
            term =
              pick.caseOf === 'upper'
                ? piece.toUpperCase()
                : pick.caseOf === 'lower'
                  ? piece.toLowerCase()
                  : piece;
          }
          const found = store.users.list(orgId, { search: { term, fields } }).map((user) => user.id);
          // SQLite stores text as UTF-8, so half of a surrogate pair cut off by the slice arrives as U+FFFD.
          const needle = Buffer.from(term, 'utf8').toString('utf8').toLowerCase();
          const expected = ids.filter((id) => {
            const user = store.users.find(id)!;
            return fields.some((field) => user[field].toLowerCase().includes(needle));
          });
          expect(found.sort()).toEqual(expected.sort());
        },
      ),
      { numRuns: 400 },
    );
  });

  it('keeps the search index in step when a user is renamed or deleted', () => {
    const store = newStore();
    const { orgId, ids } = organization(store, [
      ['Ada', 'Lovelace'],
      ['Grace', 'Hopper'],
    ]);
    const search = (term: string) =>
      store.users.list(orgId, { search: { term, fields: FIELDS } }).map((user) => user.id);
    store.db.run('UPDATE users SET last_name = ? WHERE id = ?', 'Byron', ids[0]!);
    expect(search('byron')).toEqual([ids[0]]);
    expect(search('lovelace')).toEqual([]);
    store.users.deleteMany(orgId, [ids[1]!]);
    expect(search('hopper')).toEqual([]);
    expect(search('grace')).toEqual([]);
    expect(store.db.get('SELECT count(*) AS n FROM users_search')).toEqual({ n: 1 });
  });
});
