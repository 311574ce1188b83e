import nacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import { openCredentials, sealCredentials, toBase64 } from '../../src/api/credentials.js';
import { endpoints, parseV1ErrorMessage } from '../../src/api/index.js';
import { parseOrThrow } from '../../src/api/primitives.js';
import {
  AddUserResult,
  Approval,
  ConnectorRegistration,
  ConnectorState,
  GetUsersQuery,
  MAX_JSON_DEPTH,
  Task,
  User,
} from '../../src/client/index.js';
import { ValidationError } from '../../src/index.js';

const uuid = '0b7d5a52-7d43-4c61-9a4b-6f1f2f0e6c11';

describe('resources', () => {
  it('reads users with the published firastName spelling and keeps unknown fields', () => {
    const user = User.parse({
      id: uuid,
      email: 'a@b.c',
      firastName: 'Ada',
      lastName: 'L',
      orgId: uuid,
      extra: 1,
    });
    expect(user.firastName).toBe('Ada');
    expect(user).toHaveProperty('extra', 1);
  });

  it('rejects a user answer missing a required field', () => {
    expect(
      User.safeParse({ id: uuid, email: 'a@b.c', firstName: 'Ada', lastName: 'L', orgId: uuid }).success,
    ).toBe(false);
  });

  it('reads approvals with and without data (full and shallow views)', () => {
    const base = {
      id: 'A-1',
      schemaId: 's',
      approver: 'u',
      resolved: false,
      lastModified: '2026-01-01T00:00:00.000Z',
    };
    expect(Approval.parse({ ...base, data: { a: 1 } }).data).toEqual({ a: 1 });
    expect(Approval.parse(base).data).toBeUndefined();
    expect(Approval.safeParse({ ...base, resolved: 'no' }).success).toBe(false);
  });

  it('keeps a __proto__ key of approval data, state and task data as an own key, not dropping it', () => {
    const data = JSON.parse('{"__proto__":{"a":1},"b":2}');
    const approval = Approval.parse({
      id: 'A-1',
      schemaId: 's',
      approver: 'u',
      resolved: false,
      lastModified: '2026-01-01T00:00:00.000Z',
      data,
    });
    const state = ConnectorState.parse({
      id: uuid,
      createdAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
      state: data,
    });
    const task = Task.parse({ id: uuid, type: 'approve', data: { approval: data } });
    const write = endpoints.putState.body.parse({ state: data });
    for (const kept of [approval.data, state.state, task.data.approval, write.state]) {
      expect(JSON.stringify(kept)).toBe('{"__proto__":{"a":1},"b":2}');
      expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    }
  });

  it('refuses a free-form object nested deeper than MAX_JSON_DEPTH, without overflowing the stack', () => {
    const nested = (levels: number) => JSON.parse(`${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`);
    expect(endpoints.putState.body.safeParse({ state: nested(MAX_JSON_DEPTH) }).success).toBe(true);
    for (const levels of [MAX_JSON_DEPTH + 1, 100_000]) {
      expect(() => parseOrThrow(endpoints.putState.body, { state: nested(levels) }, 'state')).toThrow(
        expect.objectContaining({
          issues: [
            { path: ['state'], message: `is nested deeper than ${MAX_JSON_DEPTH} levels`, code: 'custom' },
          ],
        }),
      );
    }
  });

  it('reads tasks whose comments are absent', () => {
    const task = Task.parse({ id: uuid, type: 'approve', data: { approval: { id: 'A-1' } } });
    expect(task.data.approveComments).toBeUndefined();
  });

  it('reads Add users results of the documented shape', () => {
    expect(AddUserResult.parse({ email: 'a@b.c', status: 'failure', error: 'duplicate' }).status).toBe(
      'failure',
    );
  });
});

describe('requests', () => {
  it('requires publicKey and publicKeyExpiredAt when authRequired is true, naming both', () => {
    const result = ConnectorRegistration.safeParse({ taskTypes: ['approve'], authRequired: true });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((issue) => issue.path.join('.'));
    expect(paths).toEqual(['publicKey', 'publicKeyExpiredAt']);
    expect(ConnectorRegistration.safeParse({ taskTypes: ['approve'], authRequired: false }).success).toBe(
      true,
    );
    const alone = ConnectorRegistration.safeParse({ authRequired: false, publicKey: 'k' });
    expect(alone.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['publicKeyExpiredAt']);
  });

  it('turns a Date into an ISO timestamp and refuses a timestamp without offset', () => {
    const body = ConnectorRegistration.parse({
      authRequired: true,
      publicKey: 'k',
      publicKeyExpiredAt: new Date(Date.UTC(2027, 0, 1)),
    });
    expect(body.publicKeyExpiredAt).toBe('2027-01-01T00:00:00.000Z');
    expect(
      ConnectorRegistration.safeParse({
        authRequired: true,
        publicKey: 'k',
        publicKeyExpiredAt: '2027-01-01T00:00',
      }).success,
    ).toBe(false);
  });

  it('requires searchableFields with search and filterFields with filter, and only known field names', () => {
    expect(GetUsersQuery.safeParse({ search: 'ada' }).success).toBe(false);
    expect(GetUsersQuery.safeParse({ filter: 'ada' }).success).toBe(false);
    expect(GetUsersQuery.safeParse({ search: 'ada', searchableFields: 'firstName, email' }).success).toBe(
      true,
    );
    expect(GetUsersQuery.safeParse({ filter: 'x', filterFields: 'firstName,orgId' }).success).toBe(false);
    expect(GetUsersQuery.safeParse({ page: 0 }).success).toBe(false);
  });

  it('parseOrThrow gives one ValidationError listing every issue by path', () => {
    const error = (() => {
      try {
        parseOrThrow(endpoints.putApprovals.body, { approvals: [{ id: '', resolved: 'x' }] }, 'request body');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).code).toBe('validation');
    expect((error as ValidationError).issues.map((issue) => issue.path.join('.')).sort()).toEqual([
      'approvals.0.id',
      'approvals.0.resolved',
    ]);
    expect((error as Error).message).toMatch(/^Invalid request body: /);
    expect((error as Error).message).toContain('approvals[0].id: ');
    expect((error as Error).message).toContain('approvals[0].resolved: ');
  });
});

describe('the endpoint table', () => {
  it('has the 18 endpoints, numbered once each, with endpoint 18 published as GET with a body', () => {
    const all = Object.values(endpoints);
    expect(all.map((endpoint) => endpoint.number).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 18 }, (_, index) => index + 1),
    );
    expect(endpoints.putUiTemplates).toMatchObject({ method: 'GET', path: '/v2/connector/uitemplates' });
    expect(endpoints.putUiTemplates.body).toBeDefined();
    expect(endpoints.getUiTemplates.path).toBe('/v2/connector/ui-templates');
  });
});

describe('v1 error messages', () => {
  it('split into kind and detail at the first ". "', () => {
    expect(parseV1ErrorMessage('Unauthorized. [Authentication] failed to get token data')).toEqual({
      kind: 'Unauthorized',
      detail: '[Authentication] failed to get token data',
    });
    expect(parseV1ErrorMessage('Not Found. Failed to find the an item users 42')).toEqual({
      kind: 'Not Found',
      detail: 'Failed to find the an item users 42',
    });
  });
});

describe('sealed credentials', () => {
  it('open with the matching secret key and not with another', () => {
    const keys = nacl.box.keyPair();
    const other = nacl.box.keyPair();
    const sealed = sealCredentials({ username: 'ada', password: 'pw' }, toBase64(keys.publicKey));
    expect(sealed.publicKey).toBe(toBase64(keys.publicKey));
    expect(openCredentials(sealed, keys.secretKey)).toEqual({ username: 'ada', password: 'pw' });
    expect(openCredentials(sealed, other.secretKey)).toBeUndefined();
    expect(
      openCredentials({ ...sealed, ciphertext: toBase64(new Uint8Array(40)) }, keys.secretKey),
    ).toBeUndefined();
  });
});
