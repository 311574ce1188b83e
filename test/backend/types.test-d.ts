import { describe, expectTypeOf, it } from 'vitest';
import type {
  FaultRuleInput,
  ReferenceBackend,
  ReferenceBackendOptions,
  SeedInput,
  TaskInfo,
  Tenant,
} from '../../src/backend/index.js';
import { startReferenceBackend } from '../../src/backend/index.js';

describe('the backend public API', () => {
  it('starts from optional options and answers a handle', () => {
    expectTypeOf(startReferenceBackend).parameter(0).toEqualTypeOf<ReferenceBackendOptions | undefined>();
    expectTypeOf(startReferenceBackend).returns.resolves.toEqualTypeOf<ReferenceBackend>();
    expectTypeOf<ReferenceBackendOptions['now']>().toEqualTypeOf<(() => number) | undefined>();
    expectTypeOf<ReferenceBackendOptions['seed']>().toEqualTypeOf<SeedInput | string | undefined>();
  });

  it('offers typed admin methods', () => {
    expectTypeOf<ReferenceBackend['createTenant']>().returns.toEqualTypeOf<Tenant>();
    expectTypeOf<ReferenceBackend['getTask']>().returns.toEqualTypeOf<TaskInfo | undefined>();
    expectTypeOf<TaskInfo['status']>().toEqualTypeOf<'waiting' | 'leased' | 'completed'>();
    expectTypeOf<ReferenceBackend['close']>().returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<ReferenceBackend['faults']['inject']>().parameter(0).toEqualTypeOf<FaultRuleInput>();
  });
});
