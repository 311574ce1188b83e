/**
 * The Management API's user mappings (4, 5, 6) through the client against the reference backend, over real
 * HTTP: reading back what was added, upsert, the published not-found errors, and paging.
 * The setup the files of this folder share is in ./support.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/client/index.js';
import { clientsAgainstBackend, collect, expectV1NotFound, person, rejection } from './support.js';

const { backend, tenant, countRequests } = clientsAgainstBackend();

describe('Management API (v1)', () => {
  describe('user mappings (4, 5, 6)', () => {
    it('Add user mappings then Get user mappings of a user and of a system read them back', async () => {
      const { v1, organization, system } = tenant();
      const second = backend().createSystem(organization.id, { name: 'Second' });
      const [ada, alan] = await v1.addUsers(organization.id, [person(1), person(2)]);
      const adaId = ada?.id ?? '';
      const alanId = alan?.id ?? '';
      await v1.addUserMappings(system.id, [
        { userId: adaId, systemUserId: 'jira-ada' },
        { userId: alanId, systemUserId: 'jira-alan' },
      ]);
      await v1.addUserMappings(second.id, [{ userId: adaId, systemUserId: 'sap-ada' }]);

      expect(await v1.getUserMappings(adaId)).toEqual(
        [
          { systemUserId: 'jira-ada', systemId: system.id, userId: adaId },
          { systemUserId: 'sap-ada', systemId: second.id, userId: adaId },
        ].sort((a, b) => (a.systemId < b.systemId ? -1 : 1)),
      );
      expect(await v1.getSystemUserMappings(system.id)).toEqual(
        [
          { systemUserId: 'jira-ada', systemId: system.id, userId: adaId },
          { systemUserId: 'jira-alan', systemId: system.id, userId: alanId },
        ].sort((a, b) => (a.userId < b.userId ? -1 : 1)),
      );
      expect(await v1.getSystemUserMappings(second.id)).toEqual([
        { systemUserId: 'sap-ada', systemId: second.id, userId: adaId },
      ]);
    });

    it('upsert: 1 replaces a user’s mapping; an equal one changes nothing; a change without it conflicts', async () => {
      const { v1, organization, system } = tenant();
      const [ada, alan, grace] = await v1.addUsers(organization.id, [person(1), person(2), person(3)]);
      const adaId = ada?.id ?? '';
      const alanId = alan?.id ?? '';
      const graceId = grace?.id ?? '';
      await v1.addUserMappings(system.id, [
        { userId: adaId, systemUserId: 'ada' },
        { userId: alanId, systemUserId: 'alan' },
      ]);
      await v1.addUserMappings(system.id, [{ userId: adaId, systemUserId: 'ada' }]);
      await v1.addUserMappings(system.id, [{ userId: adaId, systemUserId: 'ada-2', upsert: 1 }]);
      expect(await v1.getUserMappings(adaId)).toEqual([
        { systemUserId: 'ada-2', systemId: system.id, userId: adaId },
      ]);

      // A valid item first, then a conflicting one: nothing of the request is written.
      const changed = await rejection(
        v1.addUserMappings(system.id, [
          { userId: graceId, systemUserId: 'grace' },
          { userId: alanId, systemUserId: 'alan-2' },
        ]),
      );
      expect(changed).toBeInstanceOf(ConflictError);
      expect(changed).toMatchObject({ code: 'conflict', status: 409, kind: 'Conflict' });
      expect((changed as ConflictError).detail).toContain(`user ${alanId} is already mapped to alan`);
      // upsert never takes another user's identifier.
      const taken = await rejection(
        v1.addUserMappings(system.id, [{ userId: graceId, systemUserId: 'alan', upsert: 1 }]),
      );
      expect(taken).toBeInstanceOf(ConflictError);
      expect(await v1.getUserMappings(graceId)).toEqual([]);
      expect(await v1.getUserMappings(alanId)).toEqual([
        { systemUserId: 'alan', systemId: system.id, userId: alanId },
      ]);
    });

    it('another organization’s user or system is not found, named in the published message', async () => {
      const { v1, organization, system } = tenant();
      const other = tenant();
      const [mine] = await v1.addUsers(organization.id, [person(1)]);
      const [theirs] = await other.v1.addUsers(other.organization.id, [person(1)]);
      const theirId = theirs?.id ?? '';

      expectV1NotFound(await rejection(v1.getUserMappings(theirId)), 'users', theirId);
      expectV1NotFound(
        await rejection(v1.getSystemUserMappings(other.system.id)),
        'systems',
        other.system.id,
      );
      expectV1NotFound(
        await rejection(v1.addUserMappings(other.system.id, [{ userId: mine?.id ?? '', systemUserId: 'x' }])),
        'systems',
        other.system.id,
      );
      expectV1NotFound(
        await rejection(v1.addUserMappings(system.id, [{ userId: theirId, systemUserId: 'x' }])),
        'users',
        theirId,
      );
      expect(await v1.getSystemUserMappings(system.id)).toEqual([]);
      expect(await other.v1.getSystemUserMappings(other.system.id)).toEqual([]);
    });

    it('iterateSystemUserMappings walks every page: 23 mappings with pageSize 5, ordered by user id', async () => {
      const { v1, organization, system } = tenant();
      const added = await v1.addUsers(
        organization.id,
        Array.from({ length: 23 }, (_, n) => person(n)),
      );
      const mappings = added.map((result, n) => ({ userId: result.id ?? '', systemUserId: `sys-${n}` }));
      await v1.addUserMappings(system.id, mappings);
      const expected = mappings
        .map((mapping) => ({ ...mapping, systemId: system.id }))
        .sort((a, b) => (a.userId < b.userId ? -1 : 1));

      const requests = countRequests('GET', '/v1/systems/:id/usermappings');
      const walked = await collect(v1.iterateSystemUserMappings(system.id, { pageSize: 5 }));
      expect(walked).toEqual(expected);
      expect(requests()).toBe(5);
      expect(await v1.getSystemUserMappings(system.id, { page: 1 })).toEqual(expected.slice(0, 10));
      expect(await v1.getSystemUserMappings(system.id, { page: 3, limit: 10 })).toEqual(expected.slice(20));
    });
  });
});
