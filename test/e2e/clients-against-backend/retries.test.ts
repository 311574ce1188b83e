/**
 * The clients' retries against the reference backend's injected faults, over real HTTP: what is retried and
 * what is not (Add users, which creates, only when the request never reached the server), and what onRetry hears.
 * The setup the files of this folder share is in ./support.ts.
 */
import { describe, expect, it } from 'vitest';
import { startReferenceBackend } from '../../../src/backend/index.js';
import {
  BadRequestError,
  IntegrationClient,
  ManagementClient,
  NetworkError,
  RateLimitedError,
  type RetryEvent,
  ServerError,
  TimeoutError,
} from '../../../src/client/index.js';
import { at, clientsAgainstBackend, expectV2, person, RETRY, rejection } from './support.js';

const { backend, integration, closeAfterFile, tenant, inject, countRequests } = clientsAgainstBackend();

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
    expect(backend().faults.list()).toEqual([]);
    expect(backend().listApprovals(system.id)).toHaveLength(1);
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
      baseUrl: backend().url,
      retry: { ...RETRY, random: () => 0 },
      onRetry: (event: RetryEvent) => void events.push(event),
    };
    const v2 = new IntegrationClient({ ...options, token: connectorToken });
    const v1 = new ManagementClient({ ...options, token: managementToken });
    closeAfterFile(v2, v1);
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
    expect(backend().getState(system.id).state).toEqual({ cursor: 'after-drops' });
  });

  it('retries a lost answer on an idempotent write, which the repeat leaves unchanged', async () => {
    const { v2, system } = tenant();
    const attempts = inject({ method: 'PUT', path: '/v2/rawapprovals', fault: { type: 'dropAnswer' } });
    await v2.putApprovals([
      { id: 'PO-1', schemaId: 's', approver: 'a', lastModified: at(3), data: { v: 1 } },
    ]);
    expect(attempts()).toBe(1);
    expect(backend().listApprovals(system.id)).toEqual([
      { id: 'PO-1', schemaId: 's', approver: 'a', resolved: false, lastModified: at(3), data: { v: 1 } },
    ]);
  });

  it('retries a timed-out safe request; never a timed-out Add users', async () => {
    const { connectorToken, managementToken, organization } = tenant();
    const v2 = new IntegrationClient({
      baseUrl: backend().url,
      token: connectorToken,
      retry: RETRY,
      timeoutMs: 100,
    });
    const v1 = new ManagementClient({
      baseUrl: backend().url,
      token: managementToken,
      retry: RETRY,
      timeoutMs: 100,
    });
    closeAfterFile(v2, v1);
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

      backend().faults.clear();
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
      backend().faults.clear();
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
      closeAfterFile(client);
      const error = await rejection(client.addUsers(organization.id, [person(1)]));
      expect(error).toBeInstanceOf(NetworkError);
      expect(error).toMatchObject({ reason: 'ECONNREFUSED', unsent: true });
      // One backoff before each retry: every retry was made.
      expect(waits).toBe(RETRY.retries);
    });
  });
});
