/**
 * The Management API's users and systems (1, 2, 3, 7) through the client against the reference backend, over
 * real HTTP: Add and Delete users split under the 100K limit, Get users' paging, search and filter, and the
 * published not-found errors.
 * The setup the files of this folder share is in ./support.ts.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, type ManagementClient } from '../../../src/client/index.js';
import { CLIENT_BODY_BUDGET_BYTES } from '../../../src/client/management-client.js';
import { splitByBytes } from '../../../src/client/split.js';
import { ValidationError } from '../../../src/errors.js';
import { clientsAgainstBackend, collect, expectV1NotFound, person, rejection } from './support.js';

const { backend, tenant, countRequests } = clientsAgainstBackend();

describe('Management API (v1)', () => {
  it('Get systems (7) answers the organization’s systems by name, and no other organization’s', async () => {
    const acme = tenant();
    const other = tenant();
    const zulu = backend().createSystem(acme.organization.id, { name: 'Zulu' });
    const alpha = backend().createSystem(acme.organization.id, { name: 'Alpha' });
    const systems = await acme.v1.getSystems();
    expect(systems.map((system) => system.id)).toEqual([alpha.id, acme.system.id, zulu.id]);
    expect(systems[0]).toEqual({ id: alpha.id, name: 'Alpha', orgId: acme.organization.id });
    expect(systems.map((system) => system.id)).not.toContain(other.system.id);
  });

  it('Add users (2) then Get users (1): what was added reads back, with the first name as firastName', async () => {
    const { v1, organization } = tenant();
    const results = await v1.addUsers(organization.id, [
      { email: 'grace@acme.example', firstName: 'Grace', lastName: 'Hopper' },
      { email: 'ada@acme.example', firstName: 'Ada', lastName: 'Lovelace' },
    ]);
    expect(results).toEqual([
      { email: 'grace@acme.example', status: 'success', id: expect.any(String) },
      { email: 'ada@acme.example', status: 'success', id: expect.any(String) },
    ]);
    const users = await v1.getUsers();
    expect(users).toEqual([
      {
        id: results[1]?.id,
        email: 'ada@acme.example',
        firastName: 'Ada',
        lastName: 'Lovelace',
        orgId: organization.id,
      },
      {
        id: results[0]?.id,
        email: 'grace@acme.example',
        firastName: 'Grace',
        lastName: 'Hopper',
        orgId: organization.id,
      },
    ]);
  });

  it('Add users refuses another organization’s id as not found, naming orgs', async () => {
    const { v1 } = tenant();
    const other = tenant();
    const error = await rejection(v1.addUsers(other.organization.id, [person(1)]));
    expectV1NotFound(error, 'orgs', other.organization.id);
    expect(await other.v1.getUsers()).toEqual([]);
    expect(await v1.getUsers()).toEqual([]);
  });

  it('Add users with 3000 users: split under 100K, no 413, results in input order, failures per item', async () => {
    const { v1, organization, managementToken } = tenant();
    const existing = backend().createUser(organization.id, {
      email: 'already@people.example',
      firstName: 'Al',
      lastName: 'Ready',
    });
    const users = Array.from({ length: 3000 }, (_, n) => person(n));
    const failures = new Map<number, string>([
      [10, 'email: is not a valid address'],
      [11, 'email: is not a valid address'],
      [700, 'firstName: must not be empty'],
      [701, 'lastName: must not be empty'],
      [1001, 'email: is already a user of the organization'], // an earlier one of the same request
      [1500, 'email: is already a user of the organization'], // one sent in an earlier request, other case
      [2000, 'email: is already a user of the organization'], // a user from before
      [2999, 'email: is already a user of the organization'], // the very first one sent
    ]);
    users[10] = { ...person(10), email: 'not-an-email' };
    users[11] = { ...person(11), email: 'two@@people.example' };
    users[700] = { ...person(700), firstName: '   ' };
    users[701] = { ...person(701), lastName: '' };
    users[1001] = { ...person(1001), email: person(1000).email };
    users[1500] = { ...person(1500), email: person(5).email.toUpperCase() };
    users[2000] = { ...person(2000), email: 'Already@People.example' };
    users[2999] = { ...person(2999), email: person(0).email };
    for (const user of users) expect(Buffer.byteLength(JSON.stringify(user))).toBeGreaterThanOrEqual(60);
    const whole = JSON.stringify(users);
    expect(Buffer.byteLength(whole)).toBeGreaterThan(2 * 102_400);

    // Sent as one request, the backend refuses it: the split is what makes the call succeed.
    const unsplit = await request(`${backend().url}/v1/orgs/${organization.id}/users/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${managementToken}`, 'content-type': 'application/json' },
      body: whole,
    });
    await unsplit.body.dump();
    expect(unsplit.statusCode).toBe(413);

    const requests = countRequests('POST', '/v1/orgs/:id/users/bulk');
    const results = await v1.addUsers(organization.id, users);
    const chunks = splitByBytes(users, CLIENT_BODY_BUDGET_BYTES, 'Add users');
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(requests()).toBe(chunks.length);

    expect(results).toHaveLength(3000);
    results.forEach((result, index) => {
      expect(result.email).toBe(users[index]?.email);
      const failure = failures.get(index);
      if (failure === undefined) {
        expect(result).toEqual({ email: users[index]?.email, status: 'success', id: expect.any(String) });
      } else {
        expect(result).toEqual({ email: users[index]?.email, status: 'failure', error: failure });
      }
    });

    const stored = await v1.getUsers();
    expect(stored).toHaveLength(3000 - failures.size + 1);
    const byId = new Map(stored.map((user) => [user.id, user]));
    expect(byId.get(existing.id)?.email).toBe('already@people.example');
    results.forEach((result, index) => {
      if (result.status !== 'success') return;
      expect(byId.get(result.id ?? '')).toMatchObject({
        email: users[index]?.email,
        firastName: users[index]?.firstName,
        lastName: users[index]?.lastName,
      });
    });
  });

  it('Delete users (3) with several thousand ids: split across requests, users and their mappings gone', async () => {
    const { v1, organization, system } = tenant();
    const added = await v1.addUsers(
      organization.id,
      Array.from({ length: 6000 }, (_, n) => person(n, 'delete.example')),
    );
    const ids = added.map((result) => result.id ?? '');
    expect(new Set(ids).size).toBe(6000);
    await v1.addUserMappings(system.id, [
      { userId: ids[0] ?? '', systemUserId: 'first' },
      { userId: ids[5999] ?? '', systemUserId: 'last' },
    ]);
    const keep = backend().createUser(organization.id, {
      email: 'keep@delete.example',
      firstName: 'Keep',
      lastName: 'Me',
    });

    const requests = countRequests('DELETE', '/v1/users');
    await v1.deleteUsers(ids);
    expect(requests()).toBe(splitByBytes(ids, CLIENT_BODY_BUDGET_BYTES, 'Delete users').length);
    expect(requests()).toBeGreaterThanOrEqual(3);

    expect((await v1.getUsers()).map((user) => user.id)).toEqual([keep.id]);
    expect(await v1.getSystemUserMappings(system.id)).toEqual([]);
    expectV1NotFound(await rejection(v1.getUserMappings(ids[0] ?? '')), 'users', ids[0] ?? '');
  });

  it('Delete users is all or nothing per request: an unknown id fails its own request only', async () => {
    const { v1, organization } = tenant();
    const added = await v1.addUsers(
      organization.id,
      Array.from({ length: 3000 }, (_, n) => person(n, 'partial.example')),
    );
    const unknown = randomUUID();
    const ids = [...added.map((result) => result.id ?? ''), unknown];
    const chunks = splitByBytes(ids, CLIENT_BODY_BUDGET_BYTES, 'Delete users');
    expect(chunks.length).toBeGreaterThanOrEqual(2);

    expectV1NotFound(await rejection(v1.deleteUsers(ids)), 'users', unknown);
    const left = (await v1.getUsers()).map((user) => user.id).sort();
    expect(left).toEqual(
      chunks
        .at(-1)
        ?.filter((id) => id !== unknown)
        .sort(),
    );
  });

  it('Delete users with an id listed twice in requests split apart deletes it once, without a 404', async () => {
    const { v1, organization } = tenant();
    const added = await v1.addUsers(
      organization.id,
      Array.from({ length: 3000 }, (_, n) => person(n, 'twice.example')),
    );
    const ids = added.map((result) => result.id ?? '');
    const first = ids[0] ?? '';
    // As sent, the repeat lands in a later request than the first, after that one deleted the user.
    const chunks = splitByBytes([...ids, first], CLIENT_BODY_BUDGET_BYTES, 'Delete users');
    expect(chunks[0]).toContain(first);
    expect(chunks.at(-1)).toContain(first);

    await v1.deleteUsers([...ids, first]);
    expect(await v1.getUsers()).toEqual([]);
  });

  it('Delete users refuses another organization’s user as not found and deletes nothing', async () => {
    const { v1, organization } = tenant();
    const other = tenant();
    const [mine] = await v1.addUsers(organization.id, [person(1)]);
    const [theirs] = await other.v1.addUsers(other.organization.id, [person(2)]);
    expectV1NotFound(
      await rejection(v1.deleteUsers([mine?.id ?? '', theirs?.id ?? ''])),
      'users',
      theirs?.id ?? '',
    );
    expect(await v1.getUsers()).toHaveLength(1);
    expect(await other.v1.getUsers()).toHaveLength(1);
  });

  describe('Get users: paging, search and filter', () => {
    let v1: ManagementClient;
    let all: Awaited<ReturnType<ManagementClient['getUsers']>>;
    const firstNames = ['Grace', 'grace', 'Alan'];

    beforeAll(async () => {
      const created = tenant();
      v1 = created.v1;
      // Sent out of order, so that the email order is the service's doing.
      const users = Array.from({ length: 23 }, (_, n) => ({
        email: `u${String(n).padStart(4, '0')}@iter.example`,
        firstName: firstNames[n % 3] ?? '',
        lastName: `Hopper${n}`,
      })).reverse();
      const results = await v1.addUsers(created.organization.id, users);
      expect(results.every((result) => result.status === 'success')).toBe(true);
      all = await v1.getUsers();
    });

    it('without page or limit answers every user, ordered by email', () => {
      expect(all).toHaveLength(23);
      expect(all.map((user) => user.email)).toEqual(
        Array.from({ length: 23 }, (_, n) => `u${String(n).padStart(4, '0')}@iter.example`),
      );
    });

    it('iterateUsers walks every page: 23 users with pageSize 5 in 5 requests', async () => {
      const requests = countRequests('GET', '/v1/users');
      const walked = await collect(v1.iterateUsers({}, { pageSize: 5 }));
      expect(walked).toEqual(all);
      expect(requests()).toBe(5);
    });

    it('iterateUsers stops after an empty page when the count is a multiple of the page size', async () => {
      const requests = countRequests('GET', '/v1/users');
      const walked = await collect(
        v1.iterateUsers({ filter: 'Grace', filterFields: 'firstName' }, { pageSize: 4 }),
      );
      expect(walked.map((user) => user.lastName)).toEqual([
        'Hopper0',
        'Hopper3',
        'Hopper6',
        'Hopper9',
        'Hopper12',
        'Hopper15',
        'Hopper18',
        'Hopper21',
      ]);
      expect(requests()).toBe(3);
    });

    it('page without limit answers 10; limit without page the first limit', async () => {
      expect(await v1.getUsers({ page: 1 })).toEqual(all.slice(0, 10));
      expect(await v1.getUsers({ page: 3 })).toEqual(all.slice(20));
      expect(await v1.getUsers({ page: 4 })).toEqual([]);
      expect(await v1.getUsers({ limit: 4 })).toEqual(all.slice(0, 4));
      expect(await v1.getUsers({ page: 2, limit: 7 })).toEqual(all.slice(7, 14));
    });

    it('search is a case-insensitive substring of any listed field', async () => {
      const grace = await collect(
        v1.iterateUsers({ search: 'GRAC', searchableFields: 'firstName' }, { pageSize: 5 }),
      );
      expect(grace).toEqual(all.filter((user) => user.firastName.toLowerCase() === 'grace'));
      expect(grace).toHaveLength(16);
      const hopper1 = await v1.getUsers({ search: 'hopper1', searchableFields: 'firstName, lastName' });
      expect(hopper1.map((user) => user.lastName).sort()).toEqual(
        ['Hopper1', ...Array.from({ length: 10 }, (_, n) => `Hopper1${n}`)].sort(),
      );
      const byEmailOrName = await v1.getUsers({ search: 'u0007', searchableFields: 'email,lastName' });
      expect(byEmailOrName.map((user) => user.lastName)).toEqual(['Hopper7']);
    });

    it('filter is an exact, case-sensitive value; with search, a user must match both', async () => {
      const lower = await v1.getUsers({ filter: 'grace', filterFields: 'firstName' });
      expect(lower.map((user) => user.lastName)).toEqual(
        all.filter((user) => user.firastName === 'grace').map((user) => user.lastName),
      );
      expect(lower).toHaveLength(8);
      expect(await v1.getUsers({ filter: 'Grac', filterFields: 'firstName' })).toEqual([]);
      const both = await v1.getUsers({
        search: 'HOPPER1',
        searchableFields: 'lastName',
        filter: 'Alan',
        filterFields: 'firstName,lastName',
      });
      expect(both.map((user) => user.lastName)).toEqual(['Hopper11', 'Hopper14', 'Hopper17']);
    });

    it('fields without their term, an unknown field, or a limit over 1000 are the backend’s 400', async () => {
      const fieldsOnly = await rejection(v1.getUsers({ searchableFields: 'email' }));
      expect(fieldsOnly).toBeInstanceOf(BadRequestError);
      expect(fieldsOnly).toMatchObject({
        status: 400,
        kind: 'Bad Request',
        detail: 'search: is required when searchableFields is given',
      });
      const filterFieldsOnly = await rejection(v1.getUsers({ filterFields: 'email' }));
      expect(filterFieldsOnly).toMatchObject({ detail: 'filter: is required when filterFields is given' });
      const tooMany = await rejection(v1.getUsers({ limit: 1001 }));
      expect(tooMany).toBeInstanceOf(BadRequestError);
      expect(tooMany).toMatchObject({ detail: 'limit: must be at most 1000' });
    });

    it('a term without its fields is refused by the client before anything is sent', async () => {
      const requests = countRequests('GET', '/v1/users');
      expect(await rejection(v1.getUsers({ search: 'x' }))).toBeInstanceOf(ValidationError);
      expect(await rejection(v1.getUsers({ filter: 'x', filterFields: 'nickname' }))).toBeInstanceOf(
        ValidationError,
      );
      expect(requests()).toBe(0);
    });
  });
});
