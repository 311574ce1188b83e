import { describe as nodeDescribe, it as nodeIt } from 'node:test';
import type { ConformanceSubject, SourceDriver } from 'approval-connector-kit/conformance';
import { conformanceSuite, runConformance } from 'approval-connector-kit/conformance';
import { describe, expectTypeOf, it } from 'vitest';
import { FakeIncrementalConnector } from './support/connectors.js';
import { FakeDriver } from './support/source.js';

describe('the conformance API', () => {
  it('gives the connector factory the driver the subject makes, with its own members', () => {
    const subject: ConformanceSubject<FakeDriver> = {
      driver: () => new FakeDriver(),
      connector: (driver) => {
        expectTypeOf(driver).toEqualTypeOf<FakeDriver>();
        return new FakeIncrementalConnector(driver.source);
      },
    };
    expectTypeOf(runConformance(subject)).resolves.toHaveProperty('passed').toEqualTypeOf<boolean>();
  });

  it('takes the describe and it of vitest and of node:test as they are', () => {
    const subject = {
      driver: () => new FakeDriver(),
      connector: (driver: FakeDriver) => new FakeIncrementalConnector(driver.source),
    };
    expectTypeOf(conformanceSuite).toBeCallableWith(subject, { describe, it });
    expectTypeOf(conformanceSuite).toBeCallableWith(subject, { describe: nodeDescribe, it: nodeIt });
  });

  it('needs only create, change, resolve and holds of a driver', () => {
    const minimal: SourceDriver = {
      create: () => 'REQ-1',
      change: () => {},
      resolve: () => {},
      holds: () => [{ id: 'REQ-1', approver: 'ada', resolved: false }],
    };
    expectTypeOf(minimal).toMatchTypeOf<SourceDriver>();
    // @ts-expect-error: a driver that cannot say what the source holds is no driver
    const noHolds: SourceDriver = { create: () => 'REQ-1', change: () => {}, resolve: () => {} };
    expectTypeOf(noHolds).not.toBeAny();
  });
});
