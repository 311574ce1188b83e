import { runConformance } from 'approval-connector-kit/conformance';
import { expect, it } from 'vitest';
import { incrementalSubject } from './support/connectors.js';

// A driver may hold a server (a simulator on a port): the battery closes every driver it made, once done with it.
it('closes every driver it made, once', async () => {
  const subject = incrementalSubject();
  const made: { closed: number }[] = [];
  const report = await runConformance(
    {
      ...subject,
      driver: async () => {
        const entry = { closed: 0 };
        made.push(entry);
        return Object.assign(await subject.driver(), {
          close: () => {
            entry.closed += 1;
          },
        });
      },
    },
    { seed: 4, numRuns: 2, only: ['sync.exact', 'sync.crash', 'tasks.success'] },
  );
  expect(report.passed).toBe(true);
  // The declarations' probe, a stage per check and task type, and the generated runs' probe and stages.
  expect(made.length).toBeGreaterThan(4);
  expect(made.map(({ closed }) => closed)).toEqual(made.map(() => 1));
}, 60_000);
