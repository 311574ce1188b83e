import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, createUsers, mapUsers, notFound, start, UNKNOWN_ID } from './helpers.js';

let backend: ReferenceBackend;

beforeAll(async () => {
  ({ backend } = await start());
});
afterAll(() => backend.close());

function users(tenant: Tenant, query = '') {
  return call(backend, 'GET', `/v1/users${query}`, { token: tenant.managementToken });
}

describe('Get users (1)', () => {
  let tenant: Tenant;
  beforeAll(() => {
    tenant = backend.createTenant();
    createUsers(backend, tenant, [
      ['ada@acme.example', 'Ada', 'Lovelace'],
      ['grace@acme.example', 'Grace', 'Hopper'],
      ['alan@acme.example', 'Alan', 'Turing'],
      ['Edsger@acme.example', 'Edsger', 'Dijkstra'],
      ['barbara@acme.example', 'Barbara', 'Liskov'],
    ]);
  });

  it('answers every user of the organization, ordered by email, with the published firastName spelling', async () => {
    const answer = await users(tenant);
    expect(answer.status).toBe(200);
    expect(answer.body.map((user: { email: string }) => user.email)).toEqual([
      'ada@acme.example',
      'alan@acme.example',
      'barbara@acme.example',
      'Edsger@acme.example',
      'grace@acme.example',
    ]);
    expect(answer.body[0]).toEqual({
      id: expect.any(String),
      email: 'ada@acme.example',
      firastName: 'Ada',
      lastName: 'Lovelace',
      orgId: tenant.organization.id,
    });
    expect(answer.body[0]).not.toHaveProperty('firstName');
  });

  it('pages: page counts from 1, limit sets the size, page alone has 10, limit alone takes the first items', async () => {
    expect((await users(tenant, '?page=2&limit=2')).body.map((u: { email: string }) => u.email)).toEqual([
      'barbara@acme.example',
      'Edsger@acme.example',
    ]);
    expect((await users(tenant, '?page=1')).body).toHaveLength(5);
    expect((await users(tenant, '?page=2')).body).toEqual([]);
    expect((await users(tenant, '?limit=3')).body).toHaveLength(3);
  });

  it('searches a case-insensitive substring of the listed fields', async () => {
    const answer = await users(tenant, '?search=RA&searchableFields=firstName,%20lastName');
    expect(answer.body.map((u: { firastName: string }) => u.firastName)).toEqual([
      'Barbara',
      'Edsger',
      'Grace',
    ]);
    expect((await users(tenant, '?search=hopper&searchableFields=email')).body).toEqual([]);
  });

  it('searches longer terms the same way, letters beyond ASCII folded as toLowerCase folds them', async () => {
    const tenant = backend.createTenant();
    createUsers(backend, tenant, [
      ['ilkay@x.example', 'İlkay', 'Gündoğan'],
      ['sofia@x.example', 'Σοφία', 'ΠΑΠΑΔΟΠΟΎΛΟΥ'],
      ['kelvin@x.example', 'Kelvin', 'Strauß'],
    ]);
    const search = async (term: string, fields = 'firstName,lastName') =>
      (await users(tenant, `?search=${encodeURIComponent(term)}&searchableFields=${fields}`)).body.map(
        (u: { email: string }) => u.email,
      );
    expect(await search('İLKAY')).toEqual(['ilkay@x.example']);
    expect(await search('ilkay')).toEqual([]); // İ lowercases to i and a combining dot, not to i
    expect(await search('ΣΟΦΊ')).toEqual(['sofia@x.example']);
    expect(await search('πούλου')).toEqual(['sofia@x.example']);
    expect(await search('πουλου')).toEqual([]);
    expect(await search('\u212Aelv')).toEqual(['kelvin@x.example']); // the Kelvin sign lowercases to k
    expect(await search('AUß')).toEqual(['kelvin@x.example']);
    expect(await search('gündoğan', 'firstName')).toEqual([]);
    expect(await search('@X.EXAMPLE', 'email')).toEqual([
      'ilkay@x.example',
      'kelvin@x.example',
      'sofia@x.example',
    ]);
  });

  it('filters an exact, case-sensitive value of the listed fields', async () => {
    expect((await users(tenant, '?filter=Ada&filterFields=firstName')).body).toHaveLength(1);
    expect((await users(tenant, '?filter=ada&filterFields=firstName')).body).toHaveLength(0);
    expect((await users(tenant, '?filter=edsger@acme.example&filterFields=email')).body).toHaveLength(0);
    expect(
      (await users(tenant, '?filter=Edsger@acme.example&filterFields=email,lastName')).body,
    ).toHaveLength(1);
  });

  it('combines search, filter and paging', async () => {
    const answer = await users(
      tenant,
      '?search=a&searchableFields=firstName&filter=Turing&filterFields=lastName&page=1&limit=5',
    );
    expect(answer.body.map((u: { firastName: string }) => u.firastName)).toEqual(['Alan']);
  });

  it.each([
    ['?search=a', 'searchableFields'],
    ['?filter=a', 'filterFields'],
    ['?searchableFields=email', 'search'],
    ['?filterFields=email', 'filter'],
    ['?search=a&searchableFields=phone', 'searchableFields'],
    ['?filter=a&filterFields=email,id', 'filterFields'],
    ['?page=0', 'page'],
    ['?page=one', 'page'],
    ['?page=1.5', 'page'],
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
    ['?limit=', 'limit'],
    ['?page=1&page=2', 'page'],
  ])('answers 400 naming the parameter for %s', async (query, parameter) => {
    const answer = await users(tenant, query);
    expect(answer.status).toBe(400);
    expect(answer.body.Error).toMatch(new RegExp(`^Bad Request\\. ${parameter}: `));
  });

  it('answers 400, not 200, to page=+1 and limit=+5: integers are plain decimal digits', async () => {
    // `+` in a query is a space; `%2B` is the plus sign itself.
    for (const [query, parameter] of [
      ['?page=%2B1', 'page'],
      ['?limit=%2B5', 'limit'],
      ['?page=%2B1&limit=%2B5', 'page'],
      ['?page=-1', 'page'],
      ['?page=+1', 'page'],
    ]) {
      const answer = await users(tenant, query);
      expect(answer.status).toBe(400);
      expect(answer.body.Error).toMatch(new RegExp(`^Bad Request\\. ${parameter}: `));
    }
    expect((await users(tenant, '?page=01&limit=005')).status).toBe(200);
  });

  it('pages through any set of users without loss or repetition (property)', async () => {
    const pager = backend.createTenant();
    const count = 23;
    for (let i = 0; i < count; i++) {
      backend.createUser(pager.organization.id, {
        email: `u${String(i).padStart(2, '0')}@p.example`,
        firstName: 'F',
        lastName: 'L',
      });
    }
    const all = (await users(pager)).body.map((u: { id: string }) => u.id);
    expect(all).toHaveLength(count);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 30 }), async (limit) => {
        const seen: string[] = [];
        for (let page = 1; ; page++) {
          const chunk = (await users(pager, `?page=${page}&limit=${limit}`)).body as { id: string }[];
          seen.push(...chunk.map((u) => u.id));
          if (chunk.length < limit) break;
        }
        expect(seen).toEqual(all);
      }),
      { numRuns: 25 },
    );
  });
});

describe('Add users (2)', () => {
  it('adds users and answers one result per user, in order; a bad item fails alone', async () => {
    const tenant = backend.createTenant();
    const answer = await call(backend, 'POST', `/v1/orgs/${tenant.organization.id}/users/bulk`, {
      token: tenant.managementToken,
      body: [
        { email: 'one@x.example', firstName: 'One', lastName: 'A' },
        { email: 'not-an-email', firstName: 'Two', lastName: 'B' },
        { email: 'ONE@x.example', firstName: 'Dup', lastName: 'C' },
        { email: 'three@x.example', firstName: '', lastName: 'D' },
        { email: 'four@x.example', firstName: 'Four', lastName: ' ' },
        { email: 'five@x.example', firstName: 'Five', lastName: 'E' },
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      { email: 'one@x.example', status: 'success', id: expect.any(String) },
      { email: 'not-an-email', status: 'failure', error: 'email: is not a valid address' },
      { email: 'ONE@x.example', status: 'failure', error: 'email: is already a user of the organization' },
      { email: 'three@x.example', status: 'failure', error: 'firstName: must not be empty' },
      { email: 'four@x.example', status: 'failure', error: 'lastName: must not be empty' },
      { email: 'five@x.example', status: 'success', id: expect.any(String) },
    ]);
    const listed = (await users(tenant)).body;
    expect(listed.map((u: { id: string }) => u.id).sort()).toEqual(
      [answer.body[0].id, answer.body[5].id].sort(),
    );
  });

  it('answers 404 for another organization id, and adds nothing', async () => {
    const tenant = backend.createTenant();
    const other = backend.createTenant();
    for (const orgId of [other.organization.id, UNKNOWN_ID, 'not-a-uuid']) {
      const answer = await call(backend, 'POST', `/v1/orgs/${orgId}/users/bulk`, {
        token: tenant.managementToken,
        body: [{ email: 'a@x.example', firstName: 'A', lastName: 'B' }],
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(notFound('orgs', orgId));
    }
    expect((await users(other)).body).toEqual([]);
  });

  it.each([
    ['an empty array', []],
    ['an object', { email: 'a@x.example' }],
    ['an item without lastName', [{ email: 'a@x.example', firstName: 'A' }]],
    ['an item with an empty email', [{ email: '', firstName: 'A', lastName: 'B' }]],
  ])('answers 400 for %s', async (_, body) => {
    const tenant = backend.createTenant();
    const answer = await call(backend, 'POST', `/v1/orgs/${tenant.organization.id}/users/bulk`, {
      token: tenant.managementToken,
      body,
    });
    expect(answer.status).toBe(400);
    expect(answer.body.Error).toMatch(/^Bad Request\. /);
  });

  it('answers 400 in the v1 shape for malformed JSON', async () => {
    const tenant = backend.createTenant();
    const answer = await call(backend, 'POST', `/v1/orgs/${tenant.organization.id}/users/bulk`, {
      token: tenant.managementToken,
      rawBody: '[{"email": ',
    });
    expect(answer.status).toBe(400);
    expect(answer.body.Error).toMatch(/^Bad Request\. body: /);
    const text = await call(backend, 'POST', `/v1/orgs/${tenant.organization.id}/users/bulk`, {
      token: tenant.managementToken,
      rawBody: 'email=a@x.example',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(400);
    expect(text.body.Error).toMatch(/^Bad Request\. body: /);
  });

  it('accepts a body of exactly 100K bytes and answers 413 in the v1 shape above it', async () => {
    const tenant = backend.createTenant();
    const path = `/v1/orgs/${tenant.organization.id}/users/bulk`;
    const item = (n: number) => ({ email: `u${n}@x.example`, firstName: 'F', lastName: 'L' });
    const body = [item(0)];
    const base = JSON.stringify(body).length;
    // Pad the last name so the JSON is exactly 102,400 bytes.
    body[0]!.lastName = 'L'.repeat(102_400 - base + 1);
    expect(JSON.stringify(body)).toHaveLength(102_400);
    expect((await call(backend, 'POST', path, { token: tenant.managementToken, body })).status).toBe(200);
    body[0]!.lastName += 'L';
    const answer = await call(backend, 'POST', path, { token: tenant.managementToken, body });
    expect(answer.status).toBe(413);
    expect(answer.body.Error).toMatch(/^Payload Too Large\. /);
  });
});

describe('Delete users (3)', () => {
  it('deletes the users and their mappings, answering the count', async () => {
    const tenant = backend.createTenant();
    const [a, b] = createUsers(backend, tenant, [
      ['a@x.example', 'A', 'A'],
      ['b@x.example', 'B', 'B'],
    ]);
    await mapUsers(backend, tenant, [{ userId: a.id, systemUserId: 'sa' }]);
    const answer = await call(backend, 'DELETE', '/v1/users', {
      token: tenant.managementToken,
      body: [a.id, a.id],
    });
    expect(answer).toMatchObject({ status: 200, body: { deleted: 1 } });
    expect((await users(tenant)).body.map((u: { id: string }) => u.id)).toEqual([b.id]);
    const mappings = await call(backend, 'GET', `/v1/systems/${tenant.system.id}/usermappings`, {
      token: tenant.managementToken,
    });
    expect(mappings.body).toEqual([]);
  });

  it('is all or nothing: one unknown or foreign id answers 404 and deletes none', async () => {
    const tenant = backend.createTenant();
    const other = backend.createTenant();
    const [a] = createUsers(backend, tenant, [['a@x.example', 'A', 'A']]);
    const [foreign] = createUsers(backend, other, [['f@x.example', 'F', 'F']]);
    for (const id of [UNKNOWN_ID, foreign.id]) {
      const answer = await call(backend, 'DELETE', '/v1/users', {
        token: tenant.managementToken,
        body: [a.id, id],
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(notFound('users', id));
    }
    expect((await users(tenant)).body).toHaveLength(1);
    expect((await users(other)).body).toHaveLength(1);
  });

  it('answers Not Found, not 400 "Invalid GUID", to an id that is not a UUID, as the same id in a path does', async () => {
    const tenant = backend.createTenant();
    const user = backend.createUser(tenant.organization.id, {
      email: 'a@x.example',
      firstName: 'A',
      lastName: 'B',
    });
    for (const id of ['not-a-uuid', 'x', user.id.toUpperCase(), `${user.id} `]) {
      const inBody = await call(backend, 'DELETE', '/v1/users', {
        token: tenant.managementToken,
        body: [user.id, id],
      });
      expect(inBody.status).toBe(404);
      expect(inBody.body).toEqual(notFound('users', id));
      const inPath = await call(backend, 'GET', `/v1/users/${encodeURIComponent(id)}/usermappings`, {
        token: tenant.managementToken,
      });
      expect(inPath.body).toEqual(inBody.body);
    }
    expect((await users(tenant)).body).toHaveLength(1);
  });

  it('accepts a body of exactly 100K bytes and answers 413 in the v1 shape above it, deleting nothing', async () => {
    const tenant = backend.createTenant();
    const [user] = createUsers(backend, tenant, [['a@x.example', 'A', 'A']]);
    const ids = JSON.stringify(Array.from({ length: 2600 }, () => user.id));
    // JSON allows whitespace between tokens: pad the list before its closing bracket to exactly 102,400 bytes.
    const atLimit = `${ids.slice(0, -1)}${' '.repeat(102_400 - ids.length)}]`;
    expect(Buffer.byteLength(atLimit)).toBe(102_400);
    const over = await call(backend, 'DELETE', '/v1/users', {
      token: tenant.managementToken,
      rawBody: `${atLimit} `,
    });
    expect(over.status).toBe(413);
    expect(Object.keys(over.body)).toEqual(['Error']);
    expect(over.body.Error).toMatch(/^Payload Too Large\. /);
    expect((await users(tenant)).body).toHaveLength(1);
    const accepted = await call(backend, 'DELETE', '/v1/users', {
      token: tenant.managementToken,
      rawBody: atLimit,
    });
    expect(accepted).toMatchObject({ status: 200, body: { deleted: 1 } });
    expect((await users(tenant)).body).toEqual([]);
  });

  it('answers 400 for an empty list, an empty id or a body that is not a list, and 413 above 100K bytes', async () => {
    const tenant = backend.createTenant();
    for (const body of [[], [''], [1], 'x']) {
      expect(
        (await call(backend, 'DELETE', '/v1/users', { token: tenant.managementToken, body })).status,
      ).toBe(400);
    }
    const big = Array.from({ length: 3000 }, () => UNKNOWN_ID);
    const answer = await call(backend, 'DELETE', '/v1/users', { token: tenant.managementToken, body: big });
    expect(answer.status).toBe(413);
    expect(answer.body.Error).toMatch(/^Payload Too Large\. /);
  });
});
