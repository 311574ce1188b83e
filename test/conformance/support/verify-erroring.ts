// What `connector verify` loads in its tests: a driver whose holds() throws, so that no check can reach a verdict.
import type { ConformanceSubject } from 'approval-connector-kit/conformance';
import { incrementalSubject } from './connectors.js';
import type { FakeDriver } from './source.js';

const correct = incrementalSubject();

export const conformance: ConformanceSubject<FakeDriver> = {
  ...correct,
  driver: async () =>
    Object.assign(await correct.driver(), {
      holds: () => {
        throw new Error('the test double is not connected');
      },
    }),
};
