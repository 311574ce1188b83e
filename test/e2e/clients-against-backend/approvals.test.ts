/**
 * Raw approvals (8 to 11) through the client against the reference backend, over real HTTP: the lastModified
 * rule, filters and views, atomic batches, and paging through ties.
 * The setup the files of this folder share is in ./support.ts.
 */
import { describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError } from '../../../src/client/index.js';
import { at, clientsAgainstBackend, collect, expectV2, rejection, T0 } from './support.js';

const { backend, tenant, countRequests } = clientsAgainstBackend();

describe('Integration API (v2)', () => {
  describe('raw approvals (8 to 11)', () => {
    it('Update approval (9) then Get approval (8), by the lastModified rule, merging', async () => {
      const { v2 } = tenant();
      await v2.putApproval('PO-1', {
        schemaId: 'purchase-order',
        approver: 'jira-ada',
        lastModified: at(60),
        data: { title: 'Laptops', amount: 3 },
      });
      const created = {
        id: 'PO-1',
        schemaId: 'purchase-order',
        approver: 'jira-ada',
        resolved: false,
        lastModified: at(60),
        data: { title: 'Laptops', amount: 3 },
      };
      expect(await v2.getApproval('PO-1')).toEqual(created);

      // Older, or the same instant in another offset: ignored, and still a success.
      await v2.putApproval('PO-1', { resolved: true, lastModified: at(30) });
      await v2.putApproval('PO-1', { resolved: true, lastModified: '2026-05-01T12:01:00+02:00' });
      expect(await v2.getApproval('PO-1')).toEqual(created);

      // Later: the fields sent replace the stored ones, the others stay.
      await v2.putApproval('PO-1', { resolved: true, lastModified: new Date(T0 + 120_000) });
      expect(await v2.getApproval('PO-1')).toEqual({ ...created, resolved: true, lastModified: at(120) });

      // Without lastModified: applied unconditionally, lastModified kept.
      await v2.putApproval('PO-1', { data: { title: 'Monitors' } });
      expect(await v2.getApproval('PO-1')).toEqual({
        ...created,
        resolved: true,
        lastModified: at(120),
        data: { title: 'Monitors' },
      });
    });

    it('a new approval without schemaId is the backend’s 400; an unknown or another system’s one is 404', async () => {
      const { v2 } = tenant();
      const other = tenant();
      await other.v2.putApproval('THEIRS', { schemaId: 's', approver: 'a' });
      expectV2(await rejection(v2.putApproval('NEW', { approver: 'a' })), BadRequestError, 400);
      expectV2(await rejection(v2.getApproval('NEW')), NotFoundError, 404);
      expectV2(await rejection(v2.getApproval('THEIRS')), NotFoundError, 404);
      expect(await other.v2.getApproval('THEIRS')).toMatchObject({ id: 'THEIRS', resolved: false, data: {} });
    });

    it('Update approvals (11) then Get approvals (10): filters, views, and the newest 50', async () => {
      const { v2, system } = tenant();
      await v2.putApprovals(
        Array.from({ length: 60 }, (_, n) => ({
          id: `A-${String(n).padStart(3, '0')}`,
          schemaId: 'leave',
          approver: `user-${n % 4}`,
          resolved: n % 2 === 0,
          lastModified: at(n),
          data: { n },
        })),
      );
      const stored = backend().listApprovals(system.id);
      expect(stored).toHaveLength(60);

      const newest = await v2.getApprovals();
      expect(newest).toEqual(stored.slice(10));
      const resolved = await v2.getApprovals({ resolved: true });
      expect(resolved).toEqual(stored.filter((approval) => approval.resolved));
      const shallow = await v2.getApprovals({ view: 'shallow', modifiedAfter: at(55) });
      expect(shallow).toEqual(stored.slice(56).map(({ data: _data, ...rest }) => rest));
      expect(shallow.every((approval) => !('data' in approval))).toBe(true);
      // An offset other than Z survives the query string: its `+` is not read as a space.
      expect(await v2.getApprovals({ modifiedAfter: '2026-05-01T12:00:57+02:00' })).toEqual(stored.slice(58));
      const waitingAfter = await v2.getApprovals({ modifiedAfter: new Date(T0 + 49_000), resolved: false });
      expect(waitingAfter.map((approval) => approval.id)).toEqual([
        'A-051',
        'A-053',
        'A-055',
        'A-057',
        'A-059',
      ]);
    });

    it('Update approvals is atomic: one invalid approval writes none', async () => {
      const { v2, system } = tenant();
      const error = await rejection(
        v2.putApprovals([
          { id: 'OK', schemaId: 's', approver: 'a' },
          { id: 'BAD', schemaId: 's' },
        ]),
      );
      expectV2(error, BadRequestError, 400);
      expect(backend().listApprovals(system.id)).toEqual([]);
      expect(await v2.getApprovals()).toEqual([]);
    });

    it('iterateApprovals walks 120 approvals whose lastModified ties straddle each 50 boundary', async () => {
      const { v2, system } = tenant();
      // Groups of 7 sharing a lastModified: in ascending (lastModified, id) order the 50th and the 106th approval
      // each open a group, so both pages end inside a tie. Ids are shuffled against the groups.
      const approvals = Array.from({ length: 120 }, (_, n) => ({
        id: `R-${String((n * 37) % 120).padStart(3, '0')}`,
        schemaId: 'purchase-order',
        approver: 'jira-ada',
        resolved: n % 3 === 0,
        lastModified: at(Math.floor(n / 7) * 10),
        data: { n },
      }));
      await v2.putApprovals(approvals);
      const stored = backend().listApprovals(system.id);
      expect(stored).toHaveLength(120);
      expect(stored[49]?.lastModified).toBe(stored[55]?.lastModified);
      expect(stored[48]?.lastModified).not.toBe(stored[49]?.lastModified);

      const requests = countRequests('GET', '/v2/rawapprovals');
      const walked = await collect(v2.iterateApprovals());
      expect(requests()).toBe(3);
      expect(walked.map((approval) => approval.id)).toEqual(stored.map((approval) => approval.id));
      expect(new Set(walked.map((approval) => approval.id)).size).toBe(120);
      expect(walked).toEqual(stored);

      const resolved = await collect(v2.iterateApprovals({ resolved: true, view: 'shallow' }));
      expect(resolved).toEqual(
        stored.filter((approval) => approval.resolved).map(({ data: _data, ...rest }) => rest),
      );
      const later = await collect(v2.iterateApprovals({ modifiedAfter: at(50) }));
      expect(later).toEqual(stored.filter((approval) => Date.parse(approval.lastModified) > T0 + 50_000));
    });

    it('iterateApprovals walks a tie larger than a page, and what follows it', async () => {
      const { v2, system } = tenant();
      await v2.putApprovals([
        ...Array.from({ length: 70 }, (_, n) => ({
          id: `T-${n}`,
          schemaId: 's',
          approver: 'a',
          lastModified: at(1),
        })),
        ...Array.from({ length: 30 }, (_, n) => ({
          id: `U-${n}`,
          schemaId: 's',
          approver: 'a',
          lastModified: at(2 + n),
        })),
      ]);
      const walked = await collect(v2.iterateApprovals());
      expect(walked.map((approval) => approval.id)).toEqual(
        backend()
          .listApprovals(system.id)
          .map((approval) => approval.id),
      );
      expect(walked).toHaveLength(100);
    });
  });
});
