import { describe, expect, it } from 'vitest';
import { Store, type StoreChange } from '../../src/backend/store/index.js';

describe('the store’s change feed', () => {
  it('tells a committed write after its commit, and never a write that was rolled back', () => {
    const store = new Store({ now: () => Date.parse('2026-05-01T00:00:00Z') });
    const heard: StoreChange[] = [];
    let inTransaction = false;
    store.changes.subscribe((change) => {
      // Heard after the commit, so a watcher reading the store sees the write.
      expect(inTransaction).toBe(false);
      heard.push(change);
    });
    const org = store.transaction(() => {
      inTransaction = true;
      const created = store.organizations.create({ name: 'Acme' });
      inTransaction = false;
      return created;
    });
    expect(heard).toEqual([{ kind: 'directory' }]);
    expect(() =>
      store.transaction(() => {
        store.systems.create(org.id, { name: 'Jira' });
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(heard).toEqual([{ kind: 'directory' }]);
    store.close();
  });

  it('says of each approval write whether the lastModified rule applied it', () => {
    const store = new Store({ now: () => Date.parse('2026-05-02T00:00:00Z') });
    const system = store.transaction(() =>
      store.systems.create(store.organizations.create().id, { name: 'Jira' }),
    );
    const heard: StoreChange[] = [];
    store.changes.subscribe((change) => heard.push(change));
    const put = (lastModified: string) =>
      store.transaction(() =>
        store.approvals.write(system.id, 'PO-1', { schemaId: 'po', approver: 'ada', lastModified }),
      );
    put('2026-05-01T10:00:00Z');
    put('2026-05-01T09:00:00Z');
    put('2026-05-01T11:00:00.000+00:00');
    store.transaction(() => store.approvals.write(system.id, 'PO-1', { resolved: true }));
    expect(heard).toEqual(
      [
        ['2026-05-01T10:00:00.000Z', true],
        ['2026-05-01T09:00:00.000Z', false],
        ['2026-05-01T11:00:00.000Z', true],
        [undefined, true],
      ].map(([lastModified, applied]) => ({
        kind: 'approval',
        systemId: system.id,
        approvalId: 'PO-1',
        lastModified,
        applied,
        at: '2026-05-02T00:00:00.000Z',
      })),
    );
    store.close();
  });
});
