import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  BadRequestError,
  ConflictError,
  IntegrationClient,
  InvalidResponseError,
  ManagementClient,
  NetworkError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
} from '../../src/client/index.js';
import { ApprovalKitError, ValidationError } from '../../src/index.js';
import { ScriptedServer } from './support/scripted-server.js';

const TOKEN = 'super-secret-token-value';
const noRetry = { retries: 0 };

let server: ScriptedServer;
let management: ManagementClient;
let integration: IntegrationClient;

beforeAll(async () => {
  server = await ScriptedServer.start();
  management = new ManagementClient({ baseUrl: server.url, token: TOKEN, retry: noRetry });
  integration = new IntegrationClient({ baseUrl: server.url, token: TOKEN, retry: noRetry });
});
afterEach(() => {
  server.reset();
});
afterAll(async () => {
  await Promise.all([management.close(), integration.close()]);
  await server.close();
});

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('v1 errors', () => {
  it.each([
    [400, 'Bad Request. search: requires searchableFields', 'bad_request', 'Bad Request'],
    [401, 'Unauthorized. [Authentication] failed to get token data', 'unauthorized', 'Unauthorized'],
    [403, 'Forbidden. no', 'unauthorized', 'Forbidden'],
    [404, 'Not Found. Failed to find the an item users 42', 'not_found', 'Not Found'],
    [409, 'Conflict. mapping exists', 'conflict', 'Conflict'],
    [413, 'Payload Too Large. body over 100K', 'payload_too_large', 'Payload Too Large'],
    [418, "I'm a teapot. short and stout", 'api', "I'm a teapot"],
    [429, 'Too Many Requests. slow down', 'rate_limited', 'Too Many Requests'],
    [500, 'Internal Server Error. boom', 'server', 'Internal Server Error'],
  ])('%i gives code %s with the message parsed into kind and detail', async (status, message, code, kind) => {
    server.reply({ status, json: { Error: message } });
    const error = await failure(management.getSystems());
    expect(error).toMatchObject({
      code,
      status,
      method: 'GET',
      path: '/v1/systems',
      kind,
      body: { Error: message },
    });
    expect(error.detail).toBe(message.slice(kind.length + 2));
    expect(error.message).toBe(`GET /v1/systems answered ${status}: ${message}`);
  });

  it('gives the right class by status when the error body is not JSON', async () => {
    server.reply({ status: 404, text: '<html>gone</html>' });
    const error = await failure(management.getUserMappings('22222222-2222-4222-8222-222222222222'));
    expect(error.code).toBe('not_found');
    expect(error.body).toBe('<html>gone</html>');
    expect(error.kind).toBeUndefined();
  });
});

describe('v1 error bodies with a success status', () => {
  const userId = '22222222-2222-4222-8222-222222222222';
  const systemId = '33333333-3333-4333-8333-333333333333';
  const notFound = { Error: `Not Found. Failed to find the an item users ${userId}` };

  it('rejects Delete users and Add user mappings answered 200 {"Error": "Not Found. …"}, instead of resolving', async () => {
    server.reply({ status: 200, json: notFound }, { status: 200, json: notFound });
    const deleted = await failure(management.deleteUsers([userId]));
    expect(deleted).toBeInstanceOf(NotFoundError);
    expect(deleted).toMatchObject({ code: 'not_found', status: 200, kind: 'Not Found', body: notFound });
    const mapped = await failure(management.addUserMappings(systemId, [{ userId, systemUserId: 'x' }]));
    expect(mapped).toBeInstanceOf(NotFoundError);
    expect(mapped).toMatchObject({
      code: 'not_found',
      status: 200,
      path: `/v1/systems/${systemId}/usermappings/bulk`,
    });
  });

  it.each([
    ['Bad Request. userId: must be a UUID', BadRequestError, 'bad_request'],
    ['Unauthorized. [Authentication] failed to get token data', UnauthorizedError, 'unauthorized'],
    ['Forbidden. no', UnauthorizedError, 'unauthorized'],
    ['Conflict. mapping exists', ConflictError, 'conflict'],
    ['Payload Too Large. body over 100K', PayloadTooLargeError, 'payload_too_large'],
    ['Internal Server Error. boom', ServerError, 'server'],
    ["I'm a teapot. short and stout", ApiError, 'api'],
    ['Not Found.', NotFoundError, 'not_found'],
    ['not found. any case', NotFoundError, 'not_found'],
    ['Unprocessable Entity. email', BadRequestError, 'bad_request'],
    ['Too Many Requests. slow down', RateLimitedError, 'rate_limited'],
    ['Bad Gateway. upstream', ServerError, 'server'],
    ['Service Unavailable. later', ServerError, 'server'],
    ['Gateway Timeout. upstream', ServerError, 'server'],
  ])('maps a 200 with {"Error": "%s"} to the class its kind names', async (message, errorClass, code) => {
    server.reply({ status: 200, json: { Error: message } });
    const error = await failure(management.getSystems());
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toMatchObject({ code, status: 200, body: { Error: message } });
  });

  it.each([
    ['a second field', { Error: 'Not Found. gone', deleted: 0 }],
    ['no kind', { Error: 'nothing was deleted' }],
    ['a non-string Error', { Error: 404 }],
  ])('still takes a body that is not exactly the v1 error shape (%s) as success', async (_, json) => {
    server.reply({ status: 200, json });
    await expect(management.deleteUsers([userId])).resolves.toBeUndefined();
  });

  it('retries a 200 {"Error": "Too Many Requests. …"} as it retries a 429', async () => {
    const retrying = new ManagementClient({
      baseUrl: server.url,
      token: TOKEN,
      retry: { retries: 1, random: () => 0 },
    });
    server.reply({ status: 200, json: { Error: 'Too Many Requests. slow down' } }, { status: 200, json: [] });
    await expect(retrying.getSystems()).resolves.toEqual([]);
    expect(server.requests).toHaveLength(2);
    await retrying.close();
  });

  it('leaves v2 answers to the v2 envelope, where a 200 {"status":"failure"} is an invalid answer', async () => {
    server.reply({ status: 200, json: notFound }, { status: 200, json: { status: 'failure' } });
    await expect(integration.getUiTemplates()).rejects.toMatchObject({ code: 'invalid_response' });
    await expect(integration.putState({ a: 1 })).rejects.toMatchObject({ code: 'invalid_response' });
  });
});

describe('v2 errors', () => {
  it.each([
    [400, 'bad_request'],
    [401, 'unauthorized'],
    [404, 'not_found'],
    [409, 'conflict'],
    [413, 'payload_too_large'],
    [429, 'rate_limited'],
    [503, 'server'],
  ])('%i with {"status":"failure"} gives code %s', async (status, code) => {
    server.reply({ status, json: { status: 'failure' } });
    const error = await failure(integration.getApproval('A-1'));
    expect(error).toMatchObject({ code, status, body: { status: 'failure' }, path: '/v2/rawapprovals/A-1' });
    expect(error.kind).toBeUndefined();
  });

  it('keeps Retry-After on a 429', async () => {
    server.reply({ status: 429, json: { status: 'failure' }, headers: { 'retry-after': '7' } });
    const error = await failure(integration.getState());
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 7000 });
  });
});

describe('validation before sending', () => {
  it('rejects a bad request with every field named and sends nothing', async () => {
    const error = await integration
      .putApprovals([{ id: '', schemaId: 's', approver: 'a', resolved: 'yes' as unknown as boolean }])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    const paths = (error as ValidationError).issues.map((issue) => issue.path.join('.')).sort();
    expect(paths).toEqual(['approvals.0.id', 'approvals.0.resolved']);
    expect((error as Error).message).toContain('Update approvals request');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses an id that cannot be a URL path segment, instead of sending it elsewhere', async () => {
    for (const id of ['.', '..']) {
      await expect(integration.getApproval(id)).rejects.toMatchObject({
        code: 'validation',
        issues: [{ path: ['approvalId'] }],
      });
    }
    expect(server.requests).toHaveLength(0);
  });

  it('enforces the spec: search needs searchableFields, authRequired needs the key', async () => {
    await expect(management.getUsers({ search: 'ada' })).rejects.toMatchObject({
      code: 'validation',
      issues: [{ path: ['searchableFields'] }],
    });
    await expect(
      integration.registerConnector({ taskTypes: ['approve'], authRequired: true }),
    ).rejects.toMatchObject({
      code: 'validation',
    });
    await expect(integration.reportTaskResult('t', { status: 'done' as 'success' })).rejects.toMatchObject({
      code: 'validation',
      issues: [{ path: ['taskResult', 'status'] }],
    });
    expect(server.requests).toHaveLength(0);
  });

  it('names a bad client option and what it got, but never echoes the token', () => {
    expect(() => new ManagementClient({ baseUrl: 'not a url', token: 't' })).toThrow(
      'Invalid client options: Expected `baseUrl` to be an absolute http or https URL, got `"not a url"` (string)',
    );
    expect(() => new ManagementClient({ baseUrl: server.url, token: 't', retry: { retries: -1 } })).toThrow(
      'Expected `retry.retries` to be an integer from 0 and up, got `-1` (number)',
    );
    expect(() => new ManagementClient({ baseUrl: 'ftp://host', token: 't' })).toThrow(
      'Expected `baseUrl` to be an absolute http or https URL, got `"ftp://host"` (string)',
    );
    const error = (() => {
      try {
        return new ManagementClient({ baseUrl: server.url, token: 42 as unknown as string });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).not.toContain('42');
  });
});

describe('answers the spec leaves open', () => {
  it.each([
    ['204 No Content', { status: 204 }],
    ['404', { status: 404, json: { status: 'failure' } }],
    ['data.task null', { json: { status: 'success', data: { task: null } } }],
    ['data.task missing', { json: { status: 'success', data: {} } }],
  ])('Get task returns null for %s', async (_, reply) => {
    server.reply(reply);
    await expect(integration.getTask()).resolves.toBeNull();
  });

  it.each([
    ['204', { status: 204 }],
    ['null', { json: { status: 'success', data: { state: null } } }],
    ['404', { status: 404, json: { status: 'failure' } }],
  ])('Get state returns null for %s', async (_, reply) => {
    server.reply(reply);
    await expect(integration.getState()).resolves.toBeNull();
  });

  it.each([
    ['an object', { json: { deleted: 2 } }],
    ['an array', { json: ['a', 'b'] }],
    ['nothing (204)', { status: 204 }],
    ['an empty 200', { status: 200, text: '' }],
  ])('Delete users and Add user mappings accept %s as success', async (_, reply) => {
    server.reply(reply, reply);
    await expect(management.deleteUsers(['22222222-2222-4222-8222-222222222222'])).resolves.toBeUndefined();
    await expect(
      management.addUserMappings('33333333-3333-4333-8333-333333333333', [
        { userId: '22222222-2222-4222-8222-222222222222', systemUserId: 'x' },
      ]),
    ).resolves.toBeUndefined();
  });

  it.each([
    ['status', { status: 'failure', error: 'duplicate' }, 'failure'],
    ['success flag', { success: true, id: '22222222-2222-4222-8222-222222222222' }, 'success'],
    ['only an id', { id: '22222222-2222-4222-8222-222222222222' }, 'success'],
    ['only an error', { error: 'invalid email' }, 'failure'],
  ])('Add users results given by %s are normalized', async (_, item, status) => {
    server.reply({ json: [item] });
    const [result] = await management.addUsers('11111111-1111-4111-8111-111111111111', [
      { email: 'ada@example.com', firstName: 'Ada', lastName: 'L' },
    ]);
    expect(result).toMatchObject({ status, email: 'ada@example.com' });
    expect(result).not.toHaveProperty('success');
  });

  it('passes unknown fields through and rejects a missing required one', async () => {
    const user = {
      id: '22222222-2222-4222-8222-222222222222',
      email: 'a@b.c',
      firastName: 'A',
      lastName: 'B',
      orgId: '11111111-1111-4111-8111-111111111111',
      department: 'R&D',
    };
    server.reply({ json: [user] });
    await expect(management.getUsers()).resolves.toEqual([user]);
    const { firastName: _, ...missing } = user;
    server.reply({ json: [missing] });
    const error = await management.getUsers().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).issues[0]?.path).toEqual([0, 'firastName']);
  });

  it('treats a success that is not JSON, or a read with no body, as an invalid answer', async () => {
    server.reply({ text: 'ok' }, { status: 200, text: '' });
    await expect(management.getSystems()).rejects.toMatchObject({ code: 'invalid_response' });
    await expect(integration.getUiTemplates()).rejects.toMatchObject({ code: 'invalid_response' });
  });
});

describe('secrets', () => {
  it('never puts the token in an error message or in the error object', async () => {
    const errors: unknown[] = [];
    server.reply({ status: 401, json: { Error: 'Unauthorized. [Authentication] failed to get token data' } });
    errors.push(await management.getSystems().catch((caught: unknown) => caught));
    server.reply('drop');
    errors.push(await management.getSystems().catch((caught: unknown) => caught));
    expect(errors[1]).toBeInstanceOf(NetworkError);
    for (const error of errors) {
      expect(error).toBeInstanceOf(ApprovalKitError);
      expect(String(error)).not.toContain(TOKEN);
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(TOKEN);
    }
  });
});
