import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationClient, InvalidResponseError } from '../../src/client/index.js';
import { ScriptedServer } from './support/scripted-server.js';

const TASK_ID = '44444444-4444-4444-8444-444444444444';
const task = {
  id: TASK_ID,
  type: 'approve',
  data: { approval: { id: 'PO-1' }, approveComments: 'ok' },
};
const answer = (leased: unknown) => ({ json: { status: 'success', data: { task: leased } } });

let server: ScriptedServer;
let client: IntegrationClient;

beforeAll(async () => {
  server = await ScriptedServer.start();
  client = new IntegrationClient({ baseUrl: server.url, token: 'connector-token', retry: { retries: 0 } });
});
afterEach(() => {
  server.requests.length = 0;
});
afterAll(async () => {
  await client.close();
  await server.close();
});

describe('leaseTask', () => {
  it('gives a task that keeps the contract as valid, typed as getTask gives it', async () => {
    server.reply(answer(task), answer(task));
    await expect(client.leaseTask()).resolves.toEqual({ valid: true, task });
    await expect(client.getTask()).resolves.toEqual(task);
  });

  it('gives a task whose data breaks the contract as invalid, with its id, type and issues, where getTask throws', async () => {
    const broken = { ...task, data: { approval: 42 } };
    server.reply(answer(broken), answer(broken));
    await expect(client.leaseTask()).resolves.toEqual({
      valid: false,
      id: TASK_ID,
      type: 'approve',
      issues: [{ path: ['data', 'approval'], message: expect.any(String), code: 'custom' }],
    });
    await expect(client.getTask()).rejects.toBeInstanceOf(InvalidResponseError);
  });

  it('answers an id that is not a UUID, or a type that is not a string, by the id it can read', async () => {
    server.reply(answer({ id: 'T-1', type: 7, data: { approval: {} } }));
    const leased = await client.leaseTask();
    expect(leased).toMatchObject({ valid: false, id: 'T-1', type: undefined });
    expect(leased?.valid === false && leased.issues.map((issue) => issue.path)).toEqual([['id'], ['type']]);
  });

  it.each([
    ['no id', { type: 'approve', data: { approval: {} } }],
    ['a number for an id', { ...task, id: 42 }],
    ['an empty id', { ...task, id: '' }],
    ['a task that is not an object', 'task'],
  ])('rejects an answer with %s as invalid, since no result could be reported for it', async (_, leased) => {
    server.reply(answer(leased));
    const error = await client.leaseTask().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).issues[0]?.path.slice(0, 2)).toEqual(['data', 'task']);
  });

  it.each([
    ['204 No Content', { status: 204 }],
    ['404', { status: 404, json: { status: 'failure' } }],
    ['data.task null', answer(null)],
    ['data.task missing', { json: { status: 'success', data: {} } }],
  ])('returns null for %s, as getTask does', async (_, reply) => {
    server.reply(reply);
    await expect(client.leaseTask()).resolves.toBeNull();
  });
});
