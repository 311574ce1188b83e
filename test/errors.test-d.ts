import { describe, expectTypeOf, it } from 'vitest';
import type { ServiceError } from '../src/backend/index.js';
import type { ApiError, NotFoundError, RateLimitedError, TimeoutError } from '../src/client/index.js';
import type { ConformanceFailure } from '../src/conformance/index.js';
import {
  ApprovalKitError,
  type ErrorCode,
  isKitError,
  type KitError,
  type ValidationError,
} from '../src/index.js';
import type { HarnessTimeoutError } from '../src/testing/index.js';

/** The classes of the catalogue that own `Code`. */
type OwnersOf<Code> = Extract<KitError, { code: Code }>;
type IsUnion<T, All = T> = T extends unknown ? ([All] extends [T] ? false : true) : never;
/** The codes owned by exactly one class: every code, when the catalogue holds. */
type CodesWithOneOwner = {
  [Code in ErrorCode]: [OwnersOf<Code>] extends [never]
    ? never
    : IsUnion<OwnersOf<Code>> extends false
      ? Code
      : never;
}[ErrorCode];

describe('the error catalogue', () => {
  it('gives every code exactly one class, and every class a code of the catalogue', () => {
    expectTypeOf<CodesWithOneOwner>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<KitError['code']>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<KitError>().toExtend<ApprovalKitError>();
  });

  it('narrows a KitError to its class when its code is checked', () => {
    const narrow = (error: KitError) => {
      if (error.code === 'rate_limited') expectTypeOf(error).toEqualTypeOf<RateLimitedError>();
      if (error.code === 'validation') expectTypeOf(error).toEqualTypeOf<ValidationError>();
      if (error.code === 'api') expectTypeOf(error).toEqualTypeOf<ApiError<'api'>>();
      // The codes that once came from unrelated classes now each name one.
      if (error.code === 'not_found') expectTypeOf(error).toEqualTypeOf<NotFoundError>();
      if (error.code === 'timeout') expectTypeOf(error).toEqualTypeOf<TimeoutError>();
      if (error.code === 'service') expectTypeOf(error).toEqualTypeOf<ServiceError>();
      if (error.code === 'harness_timeout') expectTypeOf(error).toEqualTypeOf<HarnessTimeoutError>();
      if (error.code === 'conformance_failure') expectTypeOf(error).toEqualTypeOf<ConformanceFailure>();
      switch (error.code) {
        case 'rate_limited':
          expectTypeOf(error.retryAfterMs).toEqualTypeOf<number | undefined>();
          break;
        case 'validation':
          expectTypeOf(error.issues[0]!.code).toEqualTypeOf<import('zod').z.core.$ZodIssueCode>();
          break;
      }
    };
    expectTypeOf(narrow).toBeFunction();
  });

  it('turns a caught unknown into a KitError with isKitError', () => {
    const caught: unknown = undefined;
    if (isKitError(caught)) expectTypeOf(caught).toEqualTypeOf<KitError>();
  });

  it('lets no error take a code outside the catalogue, nor be an ApprovalKitError without a class', () => {
    // @ts-expect-error: 'invented' is not an ErrorCode
    class Invented extends ApprovalKitError<'invented'> {}
    expectTypeOf<Invented>().toExtend<Error>();
    // @ts-expect-error: the base is abstract; each code has its own class
    expectTypeOf(new ApprovalKitError('validation', 'no class')).toBeObject();
  });
});
