/**
 * The clients driven end to end against the reference backend, over real HTTP: every one of the 18 endpoints
 * through its client method, the backend's real errors as the clients map them, splitting, paging, and retries
 * against injected faults.
 */
import { randomUUID } from 'node:crypto';
import nacl from 'tweetnacl';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openCredentials, toBase64 } from '../../src/api/index.js';
import {
  type FaultRuleInput,
  type ReferenceBackend,
  ServiceError,
  startReferenceBackend,
  type Tenant,
} from '../../src/backend/index.js';
import {
  type ApiError,
  BadRequestError,
  ConflictError,
  IntegrationClient,
  ManagementClient,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  type RetryEvent,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from '../../src/client/index.js';
import { CLIENT_BODY_BUDGET_BYTES } from '../../src/client/management-client.js';
import { splitByBytes } from '../../src/client/split.js';
import { ValidationError } from '../../src/errors.js';

// Retries as a test wants them: the same policy as production, with waits of at most a few milliseconds.
const RETRY = { retries: 3, baseDelayMs: 1, maxDelayMs: 5 };
const V2_FAILURE = { status: 'failure' };
const UNAUTHORIZED_DETAIL = '[Authentication] failed to get token data';
const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

let backend: ReferenceBackend;
const clients: Array<ManagementClient | IntegrationClient> = [];

beforeAll(async () => {
  backend = await startReferenceBackend({ port: 0 });
});
afterEach(() => backend.faults.clear());
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await backend?.close();
});

function management(token: string, retry: typeof RETRY = RETRY): ManagementClient {
  const client = new ManagementClient({ baseUrl: backend.url, token, retry });
  clients.push(client);
  return client;
}

function integration(token: string, retry: typeof RETRY = RETRY): IntegrationClient {
  const client = new IntegrationClient({ baseUrl: backend.url, token, retry });
  clients.push(client);
  return client;
}

/** A fresh organization with one system, and a client of each API for it. */
function tenant(): Tenant & { v1: ManagementClient; v2: IntegrationClient } {
  const created = backend.createTenant();
  return { ...created, v1: management(created.managementToken), v2: integration(created.connectorToken) };
}

/** The error a promise rejects with; fails when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Adds a fault; returns how many of its `times` matching requests have reached the backend so far. */
function inject(rule: FaultRuleInput): () => number {
  const times = rule.times ?? 1;
  const { id } = backend.faults.inject({ ...rule, times });
  return () => times - (backend.faults.list().find((fault) => fault.id === id)?.remaining ?? 0);
}

/** Counts the requests that reach the backend for `method` and `path`, changing nothing about them. */
function countRequests(method: NonNullable<FaultRuleInput['method']>, path: string): () => number {
  return inject({ method, path, times: 1_000_000, fault: { type: 'delay', ms: 0 } });
}

function person(n: number, domain = 'people.example') {
  const tag = String(n).padStart(5, '0');
  return { email: `person-${tag}@${domain}`, firstName: `First${tag}`, lastName: `Lastname-${tag}` };
}

async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

function expectV1NotFound(error: unknown, collection: string, id: string): void {
  expect(error).toBeInstanceOf(NotFoundError);
  const notFound = error as NotFoundError;
  expect(notFound).toMatchObject({
    code: 'not_found',
    status: 404,
    kind: 'Not Found',
    detail: `Failed to find the an item ${collection} ${id}`,
    body: { Error: `Not Found. Failed to find the an item ${collection} ${id}` },
  });
  expect(notFound.message).toContain(
    `answered 404: Not Found. Failed to find the an item ${collection} ${id}`,
  );
}

function expectV2(error: unknown, type: new (...args: never[]) => ApiError, status: number): void {
  expect(error).toBeInstanceOf(type);
  expect(error).toMatchObject({ status, body: V2_FAILURE, kind: undefined, detail: undefined });
}

describe('authentication, with the backend’s real errors', () => {
  it('maps a wrong token on v1 to UnauthorizedError with the published kind and detail', async () => {
    const own = tenant();
    const v1 = management('not-a-token-of-anyone');
    for (const call of [
      () => v1.getSystems(),
      () => v1.getUsers(),
      () => v1.addUsers(own.organization.id, [person(1)]),
      () => v1.deleteUsers([randomUUID()]),
    ]) {
      const error = await rejection(call());
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(error).toMatchObject({
        code: 'unauthorized',
        status: 401,
        kind: 'Unauthorized',
        detail: UNAUTHORIZED_DETAIL,
        body: { Error: `Unauthorized. ${UNAUTHORIZED_DETAIL}` },
      });
    }
    expect(await own.v1.getUsers()).toEqual([]);
  });

  it('maps a wrong token on v2 to UnauthorizedError with code unauthorized and the failure body', async () => {
    const v2 = integration('not-a-token-of-anyone');
    for (const call of [
      () => v2.getState(),
      () => v2.getTask(),
      () => v2.getApprovals(),
      () => v2.putState({ a: 1 }),
    ]) {
      const error = await rejection(call());
      expectV2(error, UnauthorizedError, 401);
      expect(error).toMatchObject({ code: 'unauthorized' });
    }
  });

  it('refuses a management token on v2 and a connector token on v1, and the admin token on both', async () => {
    const { managementToken, connectorToken } = tenant();
    const wrongOnV2 = await rejection(integration(managementToken).getState());
    expectV2(wrongOnV2, UnauthorizedError, 401);
    const wrongOnV1 = await rejection(management(connectorToken).getSystems());
    expect(wrongOnV1).toBeInstanceOf(UnauthorizedError);
    expect(wrongOnV1).toMatchObject({ kind: 'Unauthorized', detail: UNAUTHORIZED_DETAIL });
    expectV2(await rejection(integration(backend.adminToken).getTask()), UnauthorizedError, 401);
    expect(await rejection(management(backend.adminToken).getUsers())).toBeInstanceOf(UnauthorizedError);
  });

  it('never puts the token into an error', async () => {
    const error = await rejection(management('secret-token-value-123').getSystems());
    expect(JSON.stringify(error)).not.toContain('secret-token-value-123');
    expect(String((error as Error).message)).not.toContain('secret-token-value-123');
  });
});

describe('Management API (v1)', () => {
  it('Get systems (7) answers the organization’s systems by name, and no other organization’s', async () => {
    const acme = tenant();
    const other = tenant();
    const zulu = backend.createSystem(acme.organization.id, { name: 'Zulu' });
    const alpha = backend.createSystem(acme.organization.id, { name: 'Alpha' });
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
    const existing = backend.createUser(organization.id, {
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
    const unsplit = await request(`${backend.url}/v1/orgs/${organization.id}/users/bulk`, {
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
    const keep = backend.createUser(organization.id, {
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

  describe('user mappings (4, 5, 6)', () => {
    it('Add user mappings then Get user mappings of a user and of a system read them back', async () => {
      const { v1, organization, system } = tenant();
      const second = backend.createSystem(organization.id, { name: 'Second' });
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
      const stored = backend.listApprovals(system.id);
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
      expect(backend.listApprovals(system.id)).toEqual([]);
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
      const stored = backend.listApprovals(system.id);
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
        backend.listApprovals(system.id).map((approval) => approval.id),
      );
      expect(walked).toHaveLength(100);
    });
  });

  describe('connector and tasks (12 to 14)', () => {
    it('Update connector (12) merges, and what it registered decides what a task may be', async () => {
      const { v2, system } = tenant();
      await v2.registerConnector({ taskTypes: ['approve', 'reject', 'approve'], authRequired: false });
      expect(backend.getConnector(system.id)).toMatchObject({
        taskTypes: ['approve', 'reject'],
        authRequired: false,
      });
      await v2.registerConnector({ taskTypes: ['approve'] });
      expect(backend.getConnector(system.id)).toMatchObject({ taskTypes: ['approve'], authRequired: false });
      await v2.putApproval('PO-1', { schemaId: 's', approver: 'a' });
      expect(() => backend.createTask({ systemId: system.id, type: 'reject', approvalId: 'PO-1' })).toThrow(
        ServiceError,
      );
      expect(backend.createTask({ systemId: system.id, type: 'approve', approvalId: 'PO-1' })).toMatchObject({
        status: 'waiting',
      });
    });

    it('with authRequired, a task carries credentials sealed to the registered key', async () => {
      const { v2, system } = tenant();
      const keys = nacl.box.keyPair();
      const publicKey = toBase64(keys.publicKey);
      await v2.registerConnector({
        taskTypes: ['approve'],
        authRequired: true,
        publicKey,
        publicKeyExpiredAt: new Date(Date.now() + 3_600_000),
      });
      expect(backend.getConnector(system.id)).toMatchObject({ authRequired: true, publicKey });
      await v2.putApproval('PO-9', { schemaId: 's', approver: 'a' });
      backend.createTask({
        systemId: system.id,
        type: 'approve',
        approvalId: 'PO-9',
        credentials: { username: 'ada', password: 'hunter2' },
      });
      const task = await v2.getTask();
      expect(task?.data.credentials?.publicKey).toBe(publicKey);
      const sealed = task?.data.credentials;
      expect(sealed && openCredentials(sealed, keys.secretKey)).toEqual({
        username: 'ada',
        password: 'hunter2',
      });
    });

    it('an invalid or expired key is the backend’s 400; authRequired without a key is refused before sending', async () => {
      const { v2 } = tenant();
      expectV2(
        await rejection(
          v2.registerConnector({
            authRequired: true,
            publicKey: 'not-a-key',
            publicKeyExpiredAt: new Date(Date.now() + 60_000),
          }),
        ),
        BadRequestError,
        400,
      );
      expectV2(
        await rejection(
          v2.registerConnector({
            publicKey: toBase64(nacl.box.keyPair().publicKey),
            publicKeyExpiredAt: '2000-01-01T00:00:00Z',
          }),
        ),
        BadRequestError,
        400,
      );
      expect(await rejection(v2.registerConnector({ authRequired: true }))).toBeInstanceOf(ValidationError);
    });

    it('Get task (13) is null when none waits, leases one that does; Update task result (14) completes it', async () => {
      const { v2, system } = tenant();
      const other = tenant();
      expect(await v2.getTask()).toBeNull();

      await v2.registerConnector({ taskTypes: ['approve', 'reject'], authRequired: false });
      await v2.putApproval('PO-7', { schemaId: 'po', approver: 'jira-ada', data: { title: 'Old' } });
      const created = backend.createTask({
        systemId: system.id,
        type: 'approve',
        approvalId: 'PO-7',
        approveComments: 'Looks good',
      });
      // The task carries the approval as stored when it is handed out.
      await v2.putApproval('PO-7', { data: { title: 'New' } });
      expect(await other.v2.getTask()).toBeNull();

      const task = await v2.getTask();
      expect(task).toEqual({
        id: created.id,
        type: 'approve',
        data: { approval: await v2.getApproval('PO-7'), approveComments: 'Looks good' },
      });
      expect(task?.data.approval).toMatchObject({ data: { title: 'New' } });
      expect(backend.getTask(created.id)).toMatchObject({ status: 'leased', deliveries: 1 });
      expect(await v2.getTask()).toBeNull();

      // Another system's connector cannot report it.
      expectV2(
        await rejection(other.v2.reportTaskResult(created.id, { status: 'success' })),
        NotFoundError,
        404,
      );
      await v2.reportTaskResult(created.id, { status: 'success', meta: { sourceRef: 'JIRA-42' } });
      expect(backend.getTask(created.id)).toMatchObject({
        status: 'completed',
        result: { status: 'success', meta: { sourceRef: 'JIRA-42' } },
      });

      const second = await rejection(v2.reportTaskResult(created.id, { status: 'systemError' }));
      expectV2(second, ConflictError, 409);
      expect(second).toMatchObject({ code: 'conflict' });
      expect(backend.getTask(created.id)?.result).toEqual({
        status: 'success',
        meta: { sourceRef: 'JIRA-42' },
      });
      expectV2(await rejection(v2.reportTaskResult(randomUUID(), { status: 'success' })), NotFoundError, 404);
      expect(await v2.getTask()).toBeNull();
    });

    it('a task whose lease is ended is offered again, and its result is accepted once', async () => {
      const { v2, system } = tenant();
      await v2.registerConnector({ taskTypes: ['reject'] });
      await v2.putApproval('PO-8', { schemaId: 'po', approver: 'a' });
      const first = backend.createTask({ systemId: system.id, type: 'reject', approvalId: 'PO-8' });
      const second = backend.createTask({ systemId: system.id, type: 'reject', approvalId: 'PO-8' });
      expect((await v2.getTask())?.id).toBe(first.id);
      expect((await v2.getTask())?.id).toBe(second.id);
      backend.expireLeases({ taskId: first.id });
      expect((await v2.getTask())?.id).toBe(first.id);
      expect(backend.getTask(first.id)).toMatchObject({ deliveries: 2 });
      await v2.reportTaskResult(first.id, { status: 'internalError' });
      await v2.reportTaskResult(second.id, { status: 'authenticationError' });
      expect(backend.listTasks(system.id).map((task) => task.status)).toEqual(['completed', 'completed']);
    });
  });

  describe('state (15, 16)', () => {
    it('Get state is the state record, {} before the first write; Update state replaces it', async () => {
      const { v2, system } = tenant();
      const other = tenant();
      const initial = await v2.getState();
      expect(initial).toEqual({
        id: expect.any(String),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        state: {},
      });

      await v2.putState({ cursor: at(5), nested: { ids: ['a', 'b'] } });
      expect(await v2.getState()).toMatchObject({
        id: initial?.id,
        state: { cursor: at(5), nested: { ids: ['a', 'b'] } },
      });
      await v2.putState({ other: true });
      const replaced = await v2.getState();
      expect(replaced).toEqual({
        ...replaced,
        id: initial?.id,
        createdAt: initial?.createdAt,
        state: { other: true },
      });
      expect(backend.getState(system.id).state).toEqual({ other: true });
      expect((await other.v2.getState())?.state).toEqual({});
    });
  });

  describe('UI templates (17, 18)', () => {
    it('Add or update UI templates (GET with a body) then Get UI templates, keyed by schema id', async () => {
      const { v2 } = tenant();
      const other = tenant();
      expect(await v2.getUiTemplates()).toEqual([]);
      await v2.putUiTemplates([
        { type: 'detail', schemaId: 'purchase-order', template: { title: '{{title}}' } },
        { type: 'detail', schemaId: 'leave-request', template: { title: '{{employee}}' } },
        { type: 'card', schemaId: 'purchase-order', template: { lines: ['{{amount}}'] } },
      ]);
      const first = await v2.getUiTemplates();
      expect(first).toEqual([
        { id: expect.any(String), type: 'card', uiTemplate: { 'purchase-order': { lines: ['{{amount}}'] } } },
        {
          id: expect.any(String),
          type: 'detail',
          uiTemplate: { 'leave-request': { title: '{{employee}}' } },
        },
        { id: expect.any(String), type: 'detail', uiTemplate: { 'purchase-order': { title: '{{title}}' } } },
      ]);

      // Rewriting one replaces its template and keeps its id; the same key twice in a write: the last wins.
      await v2.putUiTemplates([
        { type: 'detail', schemaId: 'purchase-order', template: { title: 'first' } },
        { type: 'detail', schemaId: 'purchase-order', template: { heading: '{{title}}' } },
      ]);
      const second = await v2.getUiTemplates();
      expect(second).toEqual([
        first[0],
        first[1],
        { id: first[2]?.id, type: 'detail', uiTemplate: { 'purchase-order': { heading: '{{title}}' } } },
      ]);
      expect(await other.v2.getUiTemplates()).toEqual([]);
    });
  });
});

describe('retries against the backend’s faults', () => {
  it('retries a 503 on a PUT twice, to success', async () => {
    const { v2, system } = tenant();
    const attempts = inject({
      method: 'PUT',
      path: '/v2/rawapprovals/:approvalId',
      times: 2,
      fault: { type: 'status', status: 503 },
    });
    await v2.putApproval('PO-1', { schemaId: 's', approver: 'a', lastModified: at(1) });
    expect(attempts()).toBe(2);
    expect(backend.faults.list()).toEqual([]);
    expect(backend.listApprovals(system.id)).toHaveLength(1);
  });

  it('retries a 429 with Retry-After: 0, and gives up with RateLimitedError once retries are spent', async () => {
    const { v2, connectorToken } = tenant();
    inject({
      method: 'GET',
      path: '/v2/connector/state',
      times: 2,
      fault: { type: 'status', status: 429, retryAfter: 0 },
    });
    expect((await v2.getState())?.state).toEqual({});

    const attempts = inject({
      method: 'PUT',
      path: '/v2/connector/state',
      times: 10,
      fault: { type: 'status', status: 429, retryAfter: 0 },
    });
    const error = await rejection(integration(connectorToken).putState({ a: 1 }));
    expectV2(error, RateLimitedError, 429);
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 0 });
    expect(attempts()).toBe(1 + RETRY.retries);
  });

  it('retries a 503 on v1 and maps the last one to ServerError in the v1 shape', async () => {
    const { v1, system } = tenant();
    inject({ method: 'GET', path: '/v1/systems', fault: { type: 'status', status: 503 } });
    expect((await v1.getSystems()).map((found) => found.id)).toEqual([system.id]);

    const attempts = inject({ path: '/v1/*', times: 10, fault: { type: 'status', status: 500 } });
    const error = await rejection(v1.getSystems());
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 500, kind: 'Internal Server Error', detail: 'injected fault' });
    expect(attempts()).toBe(4);
  });

  it('tells onRetry of each retry: the endpoint’s name, the request as sent, the attempt, the wait and why', async () => {
    const { connectorToken, managementToken } = tenant();
    const events: RetryEvent[] = [];
    const options = {
      baseUrl: backend.url,
      retry: { ...RETRY, random: () => 0 },
      onRetry: (event: RetryEvent) => void events.push(event),
    };
    const v2 = new IntegrationClient({ ...options, token: connectorToken });
    const v1 = new ManagementClient({ ...options, token: managementToken });
    clients.push(v2, v1);
    inject({ method: 'PUT', path: '/v2/rawapprovals/:approvalId', fault: { type: 'status', status: 503 } });
    inject({ method: 'PUT', path: '/v2/rawapprovals/:approvalId', fault: { type: 'drop' } });
    inject({ method: 'GET', path: '/v1/systems', fault: { type: 'status', status: 429, retryAfter: 0 } });
    await v2.putApproval('PO 7', { schemaId: 's', approver: 'a', lastModified: at(1) });
    await v1.getSystems();
    expect(events.map(({ error, ...event }) => event)).toEqual([
      {
        endpoint: 'putApproval',
        method: 'PUT',
        path: '/v2/rawapprovals/PO%207',
        attempt: 1,
        delayMs: 0,
        reason: 'server_error',
      },
      {
        endpoint: 'putApproval',
        method: 'PUT',
        path: '/v2/rawapprovals/PO%207',
        attempt: 2,
        delayMs: 0,
        reason: 'network',
      },
      {
        endpoint: 'getSystems',
        method: 'GET',
        path: '/v1/systems',
        attempt: 1,
        delayMs: 0,
        reason: 'rate_limited',
      },
    ]);
    expect(events.map(({ error }) => error.constructor)).toEqual([
      ServerError,
      NetworkError,
      RateLimitedError,
    ]);
  });

  it('never retries another 4xx', async () => {
    const { v2 } = tenant();
    const requests = countRequests('PUT', '/v2/rawapprovals/:approvalId');
    expect(await rejection(v2.putApproval('X', { approver: 'a' }))).toBeInstanceOf(BadRequestError);
    expect(requests()).toBe(1);
  });

  it('retries a dropped connection on a safe request, to success', async () => {
    const { v2, system } = tenant();
    const attempts = inject({
      method: 'PUT',
      path: '/v2/connector/state',
      times: 2,
      fault: { type: 'drop' },
    });
    await v2.putState({ cursor: 'after-drops' });
    expect(attempts()).toBe(2);
    expect(backend.getState(system.id).state).toEqual({ cursor: 'after-drops' });
  });

  it('retries a lost answer on an idempotent write, which the repeat leaves unchanged', async () => {
    const { v2, system } = tenant();
    const attempts = inject({ method: 'PUT', path: '/v2/rawapprovals', fault: { type: 'dropAnswer' } });
    await v2.putApprovals([
      { id: 'PO-1', schemaId: 's', approver: 'a', lastModified: at(3), data: { v: 1 } },
    ]);
    expect(attempts()).toBe(1);
    expect(backend.listApprovals(system.id)).toEqual([
      { id: 'PO-1', schemaId: 's', approver: 'a', resolved: false, lastModified: at(3), data: { v: 1 } },
    ]);
  });

  it('retries a timed-out safe request; never a timed-out Add users', async () => {
    const { connectorToken, managementToken, organization } = tenant();
    const v2 = new IntegrationClient({
      baseUrl: backend.url,
      token: connectorToken,
      retry: RETRY,
      timeoutMs: 100,
    });
    const v1 = new ManagementClient({
      baseUrl: backend.url,
      token: managementToken,
      retry: RETRY,
      timeoutMs: 100,
    });
    clients.push(v2, v1);
    const slowRead = inject({
      method: 'GET',
      path: '/v2/connector/state',
      fault: { type: 'delay', ms: 1000 },
    });
    expect((await v2.getState())?.state).toEqual({});
    expect(slowRead()).toBe(1);

    const slowAdd = inject({
      method: 'POST',
      path: '/v1/orgs/:id/users/bulk',
      times: 2,
      fault: { type: 'delay', ms: 1000 },
    });
    const error = await rejection(v1.addUsers(organization.id, [person(1)]));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', timeoutMs: 100 });
    expect(slowAdd()).toBe(1);
  });

  it('retries Delete users after a 503', async () => {
    const { v1, organization } = tenant();
    const [added] = await v1.addUsers(organization.id, [person(1)]);
    const attempts = inject({ method: 'DELETE', path: '/v1/users', fault: { type: 'status', status: 503 } });
    await v1.deleteUsers([added?.id ?? '']);
    expect(attempts()).toBe(1);
    expect(await v1.getUsers()).toEqual([]);
  });

  describe('Add users, which creates, is retried only when the request provably never reached the server', () => {
    it('a 503 is not retried: ServerError after one attempt, nothing created', async () => {
      const { v1, organization } = tenant();
      const attempts = inject({
        method: 'POST',
        path: '/v1/orgs/:id/users/bulk',
        times: 2,
        fault: { type: 'status', status: 503 },
      });
      expect(await rejection(v1.addUsers(organization.id, [person(1)]))).toBeInstanceOf(ServerError);
      expect(attempts()).toBe(1);
      expect(await v1.getUsers()).toEqual([]);
    });

    it('a dropped connection is a NetworkError, not unsent, not retried; the caller’s repeat adds one user', async () => {
      const { v1, organization } = tenant();
      const attempts = inject({
        method: 'POST',
        path: '/v1/orgs/:id/users/bulk',
        times: 2,
        fault: { type: 'drop' },
      });
      const error = await rejection(v1.addUsers(organization.id, [person(1)]));
      expect(error).toBeInstanceOf(NetworkError);
      // The client cannot know the backend dropped it before doing anything: the request was sent.
      expect(error).toMatchObject({ code: 'network', unsent: false, method: 'POST' });
      expect(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']).toContain((error as NetworkError).reason);
      expect(attempts()).toBe(1);
      expect(await v1.getUsers()).toEqual([]);

      backend.faults.clear();
      const [result] = await v1.addUsers(organization.id, [person(1)]);
      expect(result).toMatchObject({ status: 'success' });
      expect((await v1.getUsers()).map((user) => user.id)).toEqual([result?.id]);
    });

    it('a lost answer is a NetworkError, not retried: exactly one user created', async () => {
      const { v1, organization } = tenant();
      const attempts = inject({
        method: 'POST',
        path: '/v1/orgs/:id/users/bulk',
        times: 2,
        fault: { type: 'dropAnswer' },
      });
      const error = await rejection(v1.addUsers(organization.id, [person(1)]));
      expect(error).toBeInstanceOf(NetworkError);
      expect(error).toMatchObject({ unsent: false });
      expect(attempts()).toBe(1);
      const users = await v1.getUsers();
      expect(users.map((user) => user.email)).toEqual([person(1).email]);

      // Why it is not retried: a repeat is not harmless, it answers the user as a duplicate.
      backend.faults.clear();
      expect(await v1.addUsers(organization.id, [person(1)])).toEqual([
        { email: person(1).email, status: 'failure', error: 'email: is already a user of the organization' },
      ]);
      expect(await v1.getUsers()).toEqual(users);
    });

    it('a refused connection is unsent, so it is retried (and here, spent)', async () => {
      const closed = await startReferenceBackend();
      const { organization, managementToken } = closed.createTenant();
      const url = closed.url;
      await closed.close();
      let waits = 0;
      const random = () => {
        waits += 1;
        return 0;
      };
      const client = new ManagementClient({
        baseUrl: url,
        token: managementToken,
        retry: { ...RETRY, random },
      });
      clients.push(client);
      const error = await rejection(client.addUsers(organization.id, [person(1)]));
      expect(error).toBeInstanceOf(NetworkError);
      expect(error).toMatchObject({ reason: 'ECONNREFUSED', unsent: true });
      // One backoff before each retry: every retry was made.
      expect(waits).toBe(RETRY.retries);
    });
  });
});
