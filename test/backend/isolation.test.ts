import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceBackend, Tenant, UserRecord } from '../../src/backend/index.js';
import { call, notFound, start } from './helpers.js';

let backend: ReferenceBackend;
let acme: Tenant;
let globex: Tenant;
let acmeUser: UserRecord;
let globexUser: UserRecord;

beforeAll(async () => {
  ({ backend } = await start());
  acme = backend.createTenant({ organizationName: 'Acme' });
  globex = backend.createTenant({ organizationName: 'Globex' });
  acmeUser = backend.createUser(acme.organization.id, {
    email: 'same@x.example',
    firstName: 'A',
    lastName: 'A',
  });
  globexUser = backend.createUser(globex.organization.id, {
    email: 'same@x.example',
    firstName: 'G',
    lastName: 'G',
  });
});
afterAll(() => backend.close());

describe('isolation between two organizations', () => {
  it('lists only its own users and systems; the same email may exist in both', async () => {
    const users = await call(backend, 'GET', '/v1/users', { token: acme.managementToken });
    expect(users.body.map((u: { id: string }) => u.id)).toEqual([acmeUser.id]);
    const systems = await call(backend, 'GET', '/v1/systems', { token: acme.managementToken });
    expect(systems.body.map((s: { id: string }) => s.id)).toEqual([acme.system.id]);
  });

  it("answers the other organization's user, system and org id as not found", async () => {
    const token = acme.managementToken;
    expect((await call(backend, 'GET', `/v1/users/${globexUser.id}/usermappings`, { token })).body).toEqual(
      notFound('users', globexUser.id),
    );
    expect(
      (await call(backend, 'GET', `/v1/systems/${globex.system.id}/usermappings`, { token })).body,
    ).toEqual(notFound('systems', globex.system.id));
    expect(
      (
        await call(backend, 'POST', `/v1/systems/${globex.system.id}/usermappings/bulk`, {
          token,
          body: [{ userId: acmeUser.id, systemUserId: 'x' }],
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await call(backend, 'POST', `/v1/orgs/${globex.organization.id}/users/bulk`, {
          token,
          body: [{ email: 'n@x.example', firstName: 'N', lastName: 'N' }],
        })
      ).body,
    ).toEqual(notFound('orgs', globex.organization.id));
    expect((await call(backend, 'DELETE', '/v1/users', { token, body: [globexUser.id] })).status).toBe(404);
    expect((await call(backend, 'GET', '/v1/users', { token: globex.managementToken })).body).toHaveLength(1);
  });
});

describe('isolation between two systems', () => {
  it("keeps each system's approvals, state, templates, connector and tasks apart", async () => {
    const second = backend.createSystem(acme.organization.id, { name: 'Second' });
    const secondToken = backend.createConnectorToken(second.id);
    const a = acme.connectorToken;
    const b = secondToken;
    await call(backend, 'PATCH', '/v2/connector', { token: a, body: { taskTypes: ['approve'] } });
    await call(backend, 'PUT', '/v2/rawapprovals/SAME', {
      token: a,
      body: { approval: { schemaId: 's', approver: 'a' } },
    });
    await call(backend, 'PUT', '/v2/connector/state', { token: a, body: { state: { mine: true } } });
    await call(backend, 'GET', '/v2/connector/uitemplates', {
      token: a,
      body: { uiTemplates: [{ type: 't', schemaId: 's', template: {} }] },
    });
    const task = backend.createTask({ systemId: acme.system.id, type: 'approve', approvalId: 'SAME' });

    expect((await call(backend, 'GET', '/v2/rawapprovals/SAME', { token: b })).status).toBe(404);
    expect((await call(backend, 'GET', '/v2/rawapprovals', { token: b })).body.data.approvals).toEqual([]);
    expect((await call(backend, 'GET', '/v2/connector/state', { token: b })).body.data.state.state).toEqual(
      {},
    );
    expect(
      (await call(backend, 'GET', '/v2/connector/ui-templates', { token: b })).body.data.uiTemplates,
    ).toEqual([]);
    expect((await call(backend, 'GET', '/v2/connector/tasks', { token: b })).body.data.task).toBeNull();
    expect(
      (
        await call(backend, 'PATCH', `/v2/connector/tasks/${task.id}`, {
          token: b,
          body: { taskResult: { status: 'success' } },
        })
      ).status,
    ).toBe(404);
    expect(backend.getConnector(second.id).taskTypes).toEqual([]);

    // The same approval id is a different approval in the other system.
    await call(backend, 'PUT', '/v2/rawapprovals/SAME', {
      token: b,
      body: { approval: { schemaId: 's', approver: 'b' } },
    });
    expect(
      (await call(backend, 'GET', '/v2/rawapprovals/SAME', { token: a })).body.data.approval.approver,
    ).toBe('a');
    expect(() => backend.createTask({ systemId: second.id, type: 'approve', approvalId: 'SAME' })).toThrow();
  });
});
