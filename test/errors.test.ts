import { describe, expect, it } from 'vitest';
import { buildPath, sealCredentials } from '../src/api/index.js';
import { startReferenceBackend } from '../src/backend/index.js';
import { IntegrationClient, NetworkError } from '../src/client/index.js';
import { ApprovalKitError, isKitError, ValidationError } from '../src/index.js';
import { FileKeyStore, ReadOnlyKeyStore } from '../src/worker/index.js';

/** What `run` threw, or `undefined`. */
async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('validation issues', () => {
  it("keep zod's issue code, which they used to drop", async () => {
    const client = new IntegrationClient({ baseUrl: 'http://127.0.0.1:9', token: 'token' });
    const error = await thrown(() => client.getApproval(''));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([
      { path: ['approvalId'], message: expect.any(String), code: 'too_small' },
    ]);
    await client.close();
  });
});

describe('isKitError', () => {
  it('tells an error of the kit from any other', async () => {
    // Port 9 (discard) is closed on any test machine: the request is refused.
    const client = new IntegrationClient({
      baseUrl: 'http://127.0.0.1:9',
      token: 'token',
      retry: { retries: 0 },
    });
    const refused = await thrown(() => client.getState());
    await client.close();
    expect(refused).toBeInstanceOf(NetworkError);
    expect(isKitError(refused)).toBe(true);
    expect(isKitError(new Error('not ours'))).toBe(false);
    expect(isKitError({ code: 'network', message: 'looks like one' })).toBe(false);
  });

  it('recognises an error of a second copy of the kit, which instanceof does not', async () => {
    // The same module loaded a second time, as a second installed copy of the kit would be: classes of its own.
    const specifier = '../src/errors.ts?second-copy';
    const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('../src/errors.js');
    expect(copy.ValidationError).not.toBe(ValidationError);
    const theirs = new copy.ValidationError('option', [
      { path: ['port'], message: 'too big', code: 'too_big' },
    ]);
    expect(theirs).not.toBeInstanceOf(ApprovalKitError);
    expect(isKitError(theirs)).toBe(true);
    // Within one copy, instanceof still works.
    const ours = new ValidationError('option', []);
    expect(ours).toBeInstanceOf(ApprovalKitError);
    expect(ours).toBeInstanceOf(ValidationError);
    expect(isKitError(ours)).toBe(true);
  });

  it('does not take an Error or an object that fakes only the code, or its brand with another value', () => {
    expect(isKitError(Object.assign(new Error('looks like one'), { code: 'validation' }))).toBe(false);
    expect(isKitError({ name: 'ValidationError', code: 'validation', issues: [] })).toBe(false);
    expect(isKitError({ [Symbol.for('approval-connector-kit.error')]: 'yes' })).toBe(false);
    expect(isKitError(undefined)).toBe(false);
    expect(isKitError(null)).toBe(false);
    expect(isKitError('validation')).toBe(false);
  });
});

describe('every error the kit throws is in its hierarchy', () => {
  it.each([
    ['the reference backend, for an invalid option', () => startReferenceBackend({ port: -1 })],
    ['a file key store, for an empty path', () => new FileKeyStore('')],
    ['a read-only key store, for an empty variable name', () => new ReadOnlyKeyStore({ variable: '' })],
    ['a read-only key store, for an empty file name', () => new ReadOnlyKeyStore({ file: '' })],
    ['sealing credentials, for a public key that is not one', () => sealCredentials({}, 'not a key')],
    ['building a path, for a missing parameter', () => buildPath('/v2/rawapprovals/:approvalId')],
  ])('as a ValidationError, not a bare TypeError or Error: %s', async (_, run) => {
    const error = await thrown(run);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toBeInstanceOf(ApprovalKitError);
    expect((error as ValidationError).issues).toHaveLength(1);
  });
});
