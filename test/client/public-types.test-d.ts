import { describe, expectTypeOf, it } from 'vitest';
import type {
  AddUserResult,
  Approval,
  ApprovalFields,
  ApprovalWrite,
  ConnectorState,
  IntegrationClient,
  LeasedTask,
  ManagementClient,
  NewUser,
  Task,
  TaskResult,
  User,
} from '../../src/client/index.js';

describe('public types', () => {
  it('spell the user’s first name as the service does: firastName out, firstName in', () => {
    expectTypeOf<User['firastName']>().toEqualTypeOf<string>();
    // Unknown fields pass through, so any other key reads as unknown, not as a typed first name.
    expectTypeOf<User['firstName']>().toBeUnknown();
    expectTypeOf<NewUser>().toEqualTypeOf<{ email: string; firstName: string; lastName: string }>();
  });

  it('type each client method in and out', () => {
    expectTypeOf<ManagementClient['getUsers']>().returns.resolves.toEqualTypeOf<User[]>();
    expectTypeOf<ManagementClient['addUsers']>().returns.resolves.toEqualTypeOf<AddUserResult[]>();
    expectTypeOf<ManagementClient['iterateUsers']>().returns.toEqualTypeOf<AsyncIterableIterator<User>>();
    expectTypeOf<IntegrationClient['getTask']>().returns.resolves.toEqualTypeOf<Task | null>();
    expectTypeOf<IntegrationClient['leaseTask']>().returns.resolves.toEqualTypeOf<LeasedTask | null>();
    expectTypeOf<IntegrationClient['getState']>().returns.resolves.toEqualTypeOf<ConnectorState | null>();
    expectTypeOf<IntegrationClient['getApproval']>().returns.resolves.toEqualTypeOf<Approval>();
    expectTypeOf<IntegrationClient['putApprovals']>().parameter(0).toEqualTypeOf<readonly ApprovalWrite[]>();
    // Named by the entry, so that a caller of putApproval can type what it passes.
    expectTypeOf<IntegrationClient['putApproval']>().parameter(1).toEqualTypeOf<ApprovalFields>();
  });

  it('accept a Date or an ISO string for lastModified, and know the five result statuses', () => {
    expectTypeOf<{ id: 'a'; lastModified: Date }>().toExtend<ApprovalWrite>();
    expectTypeOf<{ id: 'a'; lastModified: string }>().toExtend<ApprovalWrite>();
    expectTypeOf<TaskResult['status']>().toEqualTypeOf<
      'success' | 'internalError' | 'authenticationError' | 'serviceUnavailable' | 'systemError'
    >();
    expectTypeOf<Approval['data']>().toEqualTypeOf<Record<string, unknown> | undefined>();
  });
});
