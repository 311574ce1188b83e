/**
 * The clients' authentication against the reference backend, over real HTTP: a wrong token on either API,
 * a token of the other API or the admin's, the backend's real errors as the clients map them, and no token in them.
 * The setup the files of this folder share is in ./support.ts.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../../src/client/index.js';
import { clientsAgainstBackend, expectV2, person, rejection, UNAUTHORIZED_DETAIL } from './support.js';

const { backend, management, integration, tenant } = clientsAgainstBackend();

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
    expectV2(await rejection(integration(backend().adminToken).getTask()), UnauthorizedError, 401);
    expect(await rejection(management(backend().adminToken).getUsers())).toBeInstanceOf(UnauthorizedError);
  });

  it('never puts the token into an error', async () => {
    const error = await rejection(management('secret-token-value-123').getSystems());
    expect(JSON.stringify(error)).not.toContain('secret-token-value-123');
    expect(String((error as Error).message)).not.toContain('secret-token-value-123');
  });
});
