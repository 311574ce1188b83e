import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend, Tenant, UserRecord } from '../../src/backend/index.js';
import { call, notFound, start, UNKNOWN_ID } from './helpers.js';

let backend: ReferenceBackend;

beforeAll(async () => {
  ({ backend } = await start());
});
afterAll(() => backend.close());

function tenantWithUsers(count: number): { tenant: Tenant; users: UserRecord[] } {
  const tenant = backend.createTenant();
  const users = Array.from({ length: count }, (_, i) =>
    backend.createUser(tenant.organization.id, { email: `u${i}@x.example`, firstName: 'F', lastName: 'L' }),
  );
  return { tenant, users };
}

function addMappings(tenant: Tenant, body: unknown, systemId = tenant.system.id) {
  return call(backend, 'POST', `/v1/systems/${systemId}/usermappings/bulk`, {
    token: tenant.managementToken,
    body,
  });
}

describe('Add user mappings (6)', () => {
  it('adds mappings and answers them as stored', async () => {
    const { tenant, users } = tenantWithUsers(2);
    const answer = await addMappings(tenant, [
      { userId: users[0]!.id, systemUserId: 'jira-0' },
      { userId: users[1]!.id, systemUserId: 'jira-1', upsert: 0 },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      { systemUserId: 'jira-0', systemId: tenant.system.id, userId: users[0]!.id },
      { systemUserId: 'jira-1', systemId: tenant.system.id, userId: users[1]!.id },
    ]);
  });

  it('changes nothing for an item equal to a stored mapping', async () => {
    const { tenant, users } = tenantWithUsers(1);
    const item = { userId: users[0]!.id, systemUserId: 'same' };
    await addMappings(tenant, [item]);
    expect((await addMappings(tenant, [item])).status).toBe(200);
  });

  it('answers 409 when a user is already mapped to another id without upsert, and writes nothing', async () => {
    const { tenant, users } = tenantWithUsers(2);
    await addMappings(tenant, [{ userId: users[0]!.id, systemUserId: 'old' }]);
    const answer = await addMappings(tenant, [
      { userId: users[1]!.id, systemUserId: 'fresh' },
      { userId: users[0]!.id, systemUserId: 'new' },
    ]);
    expect(answer.status).toBe(409);
    expect(answer.body.Error).toMatch(/^Conflict\. /);
    const stored = await call(backend, 'GET', `/v1/systems/${tenant.system.id}/usermappings`, {
      token: tenant.managementToken,
    });
    expect(stored.body).toEqual([{ systemUserId: 'old', systemId: tenant.system.id, userId: users[0]!.id }]);
  });

  it('replaces the mapping with upsert: 1', async () => {
    const { tenant, users } = tenantWithUsers(1);
    await addMappings(tenant, [{ userId: users[0]!.id, systemUserId: 'old' }]);
    const answer = await addMappings(tenant, [{ userId: users[0]!.id, systemUserId: 'new', upsert: 1 }]);
    expect(answer.body).toEqual([{ systemUserId: 'new', systemId: tenant.system.id, userId: users[0]!.id }]);
  });

  it('answers 409 when the identifier names another user, even with upsert', async () => {
    const { tenant, users } = tenantWithUsers(2);
    await addMappings(tenant, [{ userId: users[0]!.id, systemUserId: 'taken' }]);
    const answer = await addMappings(tenant, [{ userId: users[1]!.id, systemUserId: 'taken', upsert: 1 }]);
    expect(answer.status).toBe(409);
  });

  it('answers 404 for an unknown or foreign user, or system, and writes nothing', async () => {
    const { tenant, users } = tenantWithUsers(1);
    const other = tenantWithUsers(1);
    for (const userId of [UNKNOWN_ID, other.users[0]!.id]) {
      const answer = await addMappings(tenant, [
        { userId: users[0]!.id, systemUserId: 'ok' },
        { userId, systemUserId: 'x' },
      ]);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(notFound('users', userId));
    }
    for (const systemId of [UNKNOWN_ID, other.tenant.system.id]) {
      const answer = await addMappings(tenant, [{ userId: users[0]!.id, systemUserId: 'x' }], systemId);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(notFound('systems', systemId));
    }
    const mine = await call(backend, 'GET', `/v1/users/${users[0]!.id}/usermappings`, {
      token: tenant.managementToken,
    });
    expect(mine.body).toEqual([]);
  });

  it('answers Not Found, not 400 "Invalid GUID", to a userId that is not a UUID, and writes nothing', async () => {
    const { tenant, users } = tenantWithUsers(1);
    const answer = await addMappings(tenant, [
      { userId: users[0]!.id, systemUserId: 'a' },
      { userId: 'not-a-uuid', systemUserId: 'b' },
    ]);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual(notFound('users', 'not-a-uuid'));
    const stored = await call(backend, 'GET', `/v1/systems/${tenant.system.id}/usermappings`, {
      token: tenant.managementToken,
    });
    expect(stored.body).toEqual([]);
  });

  it.each([
    ['an empty array', []],
    ['an empty userId', [{ userId: '', systemUserId: 'a' }]],
    ['an empty systemUserId', [{ userId: UNKNOWN_ID, systemUserId: '' }]],
    ['upsert 2', [{ userId: UNKNOWN_ID, systemUserId: 'a', upsert: 2 }]],
  ])('answers 400 for %s', async (_, body) => {
    const { tenant } = tenantWithUsers(0);
    const answer = await addMappings(tenant, body);
    expect(answer.status).toBe(400);
    expect(answer.body.Error).toMatch(/^Bad Request\. /);
  });
});

describe('Get user mappings of a user (4)', () => {
  it('answers the user mappings in every system of the organization', async () => {
    const { tenant, users } = tenantWithUsers(1);
    const second = backend.createSystem(tenant.organization.id, { name: 'Second' });
    await addMappings(tenant, [{ userId: users[0]!.id, systemUserId: 'a' }]);
    await addMappings(tenant, [{ userId: users[0]!.id, systemUserId: 'b' }], second.id);
    const answer = await call(backend, 'GET', `/v1/users/${users[0]!.id}/usermappings`, {
      token: tenant.managementToken,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(2);
    expect(answer.body).toEqual(
      expect.arrayContaining([
        { systemUserId: 'a', systemId: tenant.system.id, userId: users[0]!.id },
        { systemUserId: 'b', systemId: second.id, userId: users[0]!.id },
      ]),
    );
  });

  it('answers 404 for an unknown or foreign user', async () => {
    const { tenant } = tenantWithUsers(0);
    const other = tenantWithUsers(1);
    for (const id of [UNKNOWN_ID, other.users[0]!.id]) {
      const answer = await call(backend, 'GET', `/v1/users/${id}/usermappings`, {
        token: tenant.managementToken,
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(notFound('users', id));
    }
  });
});

describe('Get user mappings of a system (5)', () => {
  it('pages the mappings ordered by user id (property)', async () => {
    const { tenant, users } = tenantWithUsers(17);
    await addMappings(
      tenant,
      users.map((user, i) => ({ userId: user.id, systemUserId: `s${i}` })),
    );
    const path = `/v1/systems/${tenant.system.id}/usermappings`;
    const all = (await call(backend, 'GET', path, { token: tenant.managementToken })).body as {
      userId: string;
    }[];
    expect(all.map((m) => m.userId)).toEqual(users.map((u) => u.id).sort());
    expect(
      (await call(backend, 'GET', `${path}?page=1`, { token: tenant.managementToken })).body,
    ).toHaveLength(10);
    expect(
      (await call(backend, 'GET', `${path}?page=2`, { token: tenant.managementToken })).body,
    ).toHaveLength(7);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), async (limit) => {
        const seen: unknown[] = [];
        for (let page = 1; ; page++) {
          const chunk = (
            await call(backend, 'GET', `${path}?page=${page}&limit=${limit}`, {
              token: tenant.managementToken,
            })
          ).body as unknown[];
          seen.push(...chunk);
          if (chunk.length < limit) break;
        }
        expect(seen).toEqual(all);
      }),
      { numRuns: 20 },
    );
  });

  it('answers 400, not 200, to page=+1 and limit=+5: integers are plain decimal digits', async () => {
    const { tenant } = tenantWithUsers(0);
    for (const query of ['page=%2B1', 'limit=%2B5']) {
      const answer = await call(backend, 'GET', `/v1/systems/${tenant.system.id}/usermappings?${query}`, {
        token: tenant.managementToken,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.Error).toMatch(new RegExp(`^Bad Request\\. ${query.split('=')[0]}: `));
    }
  });

  it('answers 400 for bad paging and 404 for an unknown or foreign system', async () => {
    const { tenant } = tenantWithUsers(0);
    const other = backend.createTenant();
    const bad = await call(backend, 'GET', `/v1/systems/${tenant.system.id}/usermappings?limit=-1`, {
      token: tenant.managementToken,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.Error).toMatch(/^Bad Request\. limit: /);
    for (const id of [UNKNOWN_ID, other.system.id]) {
      const answer = await call(backend, 'GET', `/v1/systems/${id}/usermappings`, {
        token: tenant.managementToken,
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(notFound('systems', id));
    }
  });
});

describe('Get systems (7)', () => {
  it("answers the organization's systems, ordered by name", async () => {
    const tenant = backend.createTenant({ systemName: 'Zeta' });
    const alpha = backend.createSystem(tenant.organization.id, { name: 'Alpha' });
    backend.createTenant({ systemName: 'Foreign' });
    const answer = await call(backend, 'GET', '/v1/systems', { token: tenant.managementToken });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      { id: alpha.id, name: 'Alpha', orgId: tenant.organization.id },
      { id: tenant.system.id, name: 'Zeta', orgId: tenant.organization.id },
    ]);
  });
});

describe('unknown routes', () => {
  it('answers 404 in the shape of the API', async () => {
    const tenant = backend.createTenant();
    const v1 = await call(backend, 'GET', '/v1/nothing', { token: tenant.managementToken });
    expect(v1.status).toBe(404);
    expect(v1.body.Error).toMatch(/^Not Found\. /);
    const v2 = await call(backend, 'GET', '/v2/nothing', { token: tenant.connectorToken });
    expect(v2).toMatchObject({ status: 404, body: { status: 'failure' } });
  });
});
