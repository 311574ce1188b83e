import { describe, expectTypeOf, it } from 'vitest';
import type { TaskResultStatus } from '../../src/api/index.js';
import { type Credentials, classifyFailure, Secret } from '../../src/connector/index.js';
import { redactSecrets } from '../../src/connector/internal.js';
import { KeyRing, type KeyStore, type PublicKeyInfo } from '../../src/worker/index.js';

describe('public types', () => {
  it('keeps a Secret apart from a string', () => {
    expectTypeOf<Secret>().not.toExtend<string>();
    expectTypeOf<{ value: string }>().not.toExtend<Secret>();
    expectTypeOf(new Secret('x').reveal()).toEqualTypeOf<string>();
  });

  it('gives credentials as Secrets', () => {
    expectTypeOf<Credentials['password']>().toEqualTypeOf<Secret>();
    expectTypeOf<KeyRing['open']>().returns.resolves.toEqualTypeOf<Credentials>();
  });

  it('classifies into the five statuses with a meta of code and message', () => {
    const result = classifyFailure(new Error('x'));
    expectTypeOf(result.status).toEqualTypeOf<TaskResultStatus>();
    expectTypeOf(result.meta).toEqualTypeOf<{ code: string; message: string }>();
    expectTypeOf(classifyFailure)
      .parameter(1)
      .toExtend<{ classifyFailure?: (error: unknown) => TaskResultStatus | undefined } | undefined>();
  });

  it('exposes public keys only', () => {
    expectTypeOf<KeyRing['current']>().toEqualTypeOf<PublicKeyInfo>();
    expectTypeOf<PublicKeyInfo>().not.toHaveProperty('secretKey');
    expectTypeOf<KeyRing>().not.toHaveProperty('secretKey');
    expectTypeOf(KeyRing.load).parameter(0).toEqualTypeOf<KeyStore>();
  });

  it('accepts secrets and strings to redact', () => {
    expectTypeOf(redactSecrets).parameter(1).toExtend<Iterable<Secret | string | undefined> | undefined>();
  });
});
