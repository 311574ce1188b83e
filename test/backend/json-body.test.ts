import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/api/index.js';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, start, V2_FAILURE } from './helpers.js';

let backend: ReferenceBackend;

beforeAll(async () => {
  ({ backend } = await start());
});
afterAll(() => backend.close());

/** A tenant whose connector takes `approve` tasks and holds approval A-1, so that tasks can be made for it. */
async function tenantWithApproval(): Promise<Tenant> {
  const tenant = backend.createTenant();
  const token = tenant.connectorToken;
  await call(backend, 'PATCH', '/v2/connector', { token, body: { taskTypes: ['approve'] } });
  await call(backend, 'PUT', '/v2/rawapprovals/A-1', {
    token,
    body: { approval: { schemaId: 's', approver: 'a' } },
  });
  return tenant;
}

/** The JSON text of an object nested `levels` deep: `{"a":{"a":...{}}}`, the outer object being level 1. */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

/** What each free-form object of a request is sent in, and how to read it back. */
const freeForm = {
  state: {
    send: (tenant: Tenant, json: string) =>
      call(backend, 'PUT', '/v2/connector/state', {
        token: tenant.connectorToken,
        rawBody: `{"state":${json}}`,
      }),
    stored: (tenant: Tenant) => backend.getState(tenant.system.id).state,
  },
  'approval data (endpoint 9)': {
    send: (tenant: Tenant, json: string) =>
      call(backend, 'PUT', '/v2/rawapprovals/P-1', {
        token: tenant.connectorToken,
        rawBody: `{"approval":{"schemaId":"s","approver":"a","data":${json}}}`,
      }),
    stored: (tenant: Tenant) => backend.listApprovals(tenant.system.id).find(({ id }) => id === 'P-1')?.data,
  },
  'approval data (endpoint 11)': {
    send: (tenant: Tenant, json: string) =>
      call(backend, 'PUT', '/v2/rawapprovals', {
        token: tenant.connectorToken,
        rawBody: `{"approvals":[{"id":"P-2","schemaId":"s","approver":"a","data":${json}}]}`,
      }),
    stored: (tenant: Tenant) => backend.listApprovals(tenant.system.id).find(({ id }) => id === 'P-2')?.data,
  },
  'a UI template': {
    send: (tenant: Tenant, json: string) =>
      call(backend, 'GET', '/v2/connector/uitemplates', {
        token: tenant.connectorToken,
        rawBody: `{"uiTemplates":[{"type":"card","schemaId":"s","template":${json}}]}`,
      }),
    stored: async (tenant: Tenant) =>
      (await call(backend, 'GET', '/v2/connector/ui-templates', { token: tenant.connectorToken })).body.data
        .uiTemplates[0]?.uiTemplate.s,
  },
  'a task result’s meta': {
    send: async (tenant: Tenant, json: string) => {
      const task =
        backend.listTasks(tenant.system.id)[0] ??
        backend.createTask({ systemId: tenant.system.id, type: 'approve', approvalId: 'A-1' });
      return call(backend, 'PATCH', `/v2/connector/tasks/${task.id}`, {
        token: tenant.connectorToken,
        rawBody: `{"taskResult":{"status":"success","meta":${json}}}`,
      });
    },
    stored: (tenant: Tenant) => backend.listTasks(tenant.system.id)[0]?.result?.meta,
  },
};
const cases = Object.entries(freeForm).map(([name, { send, stored }]) => ({ name, send, stored }));

describe('__proto__ keys in JSON bodies', () => {
  it.each(cases)(
    'are kept verbatim through the round trip in $name, not dropped',
    async ({ send, stored }) => {
      const tenant = await tenantWithApproval();
      const json =
        '{"__proto__":{"polluted":true},"x":1,"nested":{"__proto__":[1,2]},"list":[{"__proto__":null}]}';
      expect((await send(tenant, json)).status).toBe(200);
      const kept = await stored(tenant);
      expect(JSON.stringify(kept)).toBe(json);
      // An own property like any other: no prototype changed, here or anywhere.
      expect(Object.hasOwn(kept as object, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    },
  );

  it('come back verbatim over HTTP on Get approval and Get state', async () => {
    const tenant = await tenantWithApproval();
    const token = tenant.connectorToken;
    const json = '{"__proto__":{"a":1},"b":2}';
    await freeForm.state.send(tenant, json);
    await freeForm['approval data (endpoint 9)'].send(tenant, json);
    const state = await call(backend, 'GET', '/v2/connector/state', { token });
    expect(JSON.stringify(state.body.data.state.state)).toBe(json);
    const approval = await call(backend, 'GET', '/v2/rawapprovals/P-1', { token });
    expect(JSON.stringify(approval.body.data.approval.data)).toBe(json);
  });

  it('parse a body without __proto__ as it is', async () => {
    const tenant = backend.createTenant();
    const rawBody =
      '{"approval":{"schemaId":"s","approver":"a","data":{"proto":{"y":2},"list":[1,{"z":3}]}}}';
    expect(
      (await call(backend, 'PUT', '/v2/rawapprovals/P-2', { token: tenant.connectorToken, rawBody })).status,
    ).toBe(200);
    const got = await call(backend, 'GET', '/v2/rawapprovals/P-2', { token: tenant.connectorToken });
    expect(got.body.data.approval.data).toEqual({ proto: { y: 2 }, list: [1, { z: 3 }] });
  });
});

describe('nesting depth', () => {
  it.each(cases)(
    'answers 400, not 500, to $name nested 6,000 levels deep, and stores nothing',
    async ({ send, stored }) => {
      const tenant = await tenantWithApproval();
      const before = await stored(tenant);
      const answer = await send(tenant, nested(6000));
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(V2_FAILURE);
      expect(await stored(tenant)).toEqual(before);
    },
  );

  it.each(cases)(
    `accepts $name ${MAX_JSON_DEPTH} levels deep and refuses it one level deeper`,
    async ({ send, stored }) => {
      const tenant = await tenantWithApproval();
      expect((await send(tenant, nested(MAX_JSON_DEPTH + 1))).status).toBe(400);
      expect((await send(tenant, nested(MAX_JSON_DEPTH))).status).toBe(200);
      expect(JSON.stringify(await stored(tenant))).toBe(nested(MAX_JSON_DEPTH));
    },
  );

  it('counts arrays as levels too', async () => {
    const tenant = backend.createTenant();
    const put = (json: string) => freeForm.state.send(tenant, json);
    expect(
      (await put(`{"a":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`)).status,
    ).toBe(200);
    expect((await put(`{"a":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`)).status).toBe(400);
  });

  it('names the field and the limit in the v1-style message of the admin API', async () => {
    const tenant = await tenantWithApproval();
    const answer = await call(backend, 'POST', '/admin/seed', {
      token: backend.adminToken,
      rawBody: `{"organizations":[{"name":"O","systems":[{"name":"S","state":${nested(6000)}}]}]}`,
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toBe(
      `Bad Request. organizations[0].systems[0].state: is nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
    const task = await call(backend, 'POST', '/admin/tasks', {
      token: backend.adminToken,
      rawBody: `{"systemId":"${tenant.system.id}","type":"approve","approvalId":"A-1","credentials":${nested(6000)}}`,
    });
    expect(task.status).toBe(400);
    expect(task.body.error.message).toBe(
      `Bad Request. credentials: is nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
    expect(backend.listTasks(tenant.system.id)).toEqual([]);
  });
});

describe('text the store could not keep as sent', () => {
  it.each(cases)(
    'answers 400 to a lone surrogate escape in $name, instead of storing U+FFFD with a success',
    async ({ send, stored }) => {
      const tenant = await tenantWithApproval();
      const before = await stored(tenant);
      expect((await send(tenant, '{"note":"\\ud800"}')).status).toBe(400);
      expect((await send(tenant, '{"\\udfff":1}')).status).toBe(400);
      expect(await stored(tenant)).toEqual(before);
    },
  );

  it('answers 400 to a lone surrogate in a plain field such as approver, and stores nothing', async () => {
    const tenant = backend.createTenant();
    const answer = await call(backend, 'PUT', '/v2/rawapprovals', {
      token: tenant.connectorToken,
      rawBody:
        '{"approvals":[{"id":"S-1","schemaId":"s","approver":"ada\\uDBFF","resolved":false,"data":{}}]}',
    });
    expect(answer).toMatchObject({ status: 400, body: V2_FAILURE });
    expect(backend.listApprovals(tenant.system.id)).toEqual([]);
  });

  it('keeps a surrogate pair spelled as escapes, which is one well-formed character', async () => {
    const tenant = backend.createTenant();
    const rawBody = '{"approval":{"schemaId":"s","approver":"\\ud83d\\ude00","data":{"\\ud83d\\ude00":"x"}}}';
    const token = tenant.connectorToken;
    expect((await call(backend, 'PUT', '/v2/rawapprovals/S-2', { token, rawBody })).status).toBe(200);
    const got = await call(backend, 'GET', '/v2/rawapprovals/S-2', { token });
    expect(got.body.data.approval).toMatchObject({ approver: '\u{1F600}', data: { '\u{1F600}': 'x' } });
  });

  it('answers 400 to a body that is not valid UTF-8, instead of storing U+FFFD with a success', async () => {
    const tenant = backend.createTenant();
    const rawBody = Buffer.concat([
      Buffer.from('{"approval":{"schemaId":"s","approver":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('","data":{}}}'),
    ]);
    const answer = await call(backend, 'PUT', '/v2/rawapprovals/S-3', {
      token: tenant.connectorToken,
      rawBody,
    });
    expect(answer).toMatchObject({ status: 400, body: V2_FAILURE });
    expect(backend.listApprovals(tenant.system.id)).toEqual([]);
  });
});
