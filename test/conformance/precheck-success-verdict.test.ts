import { type Connector, type PrecheckVerdict, type TaskDeclaration, task } from 'approval-connector-kit';
import { type ConformanceSubject, runConformance } from 'approval-connector-kit/conformance';
import { expect, it } from 'vitest';
import { FakeIncrementalConnector } from './support/connectors.js';
import { FakeDriver } from './support/source.js';

/**
 * A connector whose pre-check finds the decision already taken in the source and ends the task `success` without
 * acting, as one whose source records who decided what does (an approver who answered in the source itself).
 */
function alreadyAnsweredSubject(): ConformanceSubject<FakeDriver> {
  return {
    name: 'FakeIncrementalConnector answering success when already decided',
    driver: () => Object.assign(new FakeDriver(), { pageSize: 3 }),
    connector: (driver) => {
      const connector: Connector<object> = new FakeIncrementalConnector(driver.source);
      const tasks: Record<string, TaskDeclaration> = {};
      for (const [type, declared] of Object.entries(connector.tasks)) {
        tasks[type] = task({
          input: declared.input,
          run: declared.run,
          precheck: async (input, context): Promise<PrecheckVerdict> => {
            const verdict = await declared.precheck!(input, context);
            return verdict === true ? true : { status: 'success', meta: { code: 'already_answered' } };
          },
        });
      }
      Object.defineProperty(connector, 'tasks', { value: tasks });
      return connector;
    },
  };
}

it("passes tasks.precheck when the pre-check's verdict on a resolved request is success", async () => {
  const report = await runConformance(alreadyAnsweredSubject(), { seed: 5, only: ['tasks.precheck'] });
  expect(report.checks.map(({ name, taskType, status }) => [name, taskType, status])).toEqual([
    ['tasks.precheck', 'approve', 'pass'],
    ['tasks.precheck', 'reject', 'pass'],
  ]);
}, 60_000);
