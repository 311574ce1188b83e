import {
  CHECK_NAMES,
  type ConformanceReport,
  formatReport,
  runConformance,
} from 'approval-connector-kit/conformance';
import { describe, expect, it } from 'vitest';
import { SEEDS } from './support/broken.js';
import {
  authSubject,
  incrementalSubject,
  incrementalSubjectWith,
  snapshotSubject,
} from './support/connectors.js';

const unpassed = (report: ConformanceReport) =>
  report.checks.filter((check) => check.status === 'fail' || check.status === 'error');

const skipped = (report: ConformanceReport | undefined) =>
  report?.checks.filter((check) => check.status === 'skip').map((check) => check.name);

/**
 * The correct connectors, and the checks each runs: every check for each kind of source; for a connector or a driver
 * that differs from the incremental one in one respect, the checks that respect reaches (a driver that does not say
 * when requests changed, or a source read out of order, reaches how the sync and the push path read it; a connector
 * whose tasks need the approver's credentials, what it declares and how its tasks run). The rest of theirs is the
 * incremental connector's, run in full beside them.
 */
const CORRECT = [
  ['incremental', incrementalSubject, undefined],
  [
    'incremental, with a driver that does not say when requests changed',
    () => incrementalSubjectWith({ lastModified: false }),
    ['sync.', 'push.'],
  ],
  ['incremental, unordered', () => incrementalSubjectWith({ unordered: true }), ['sync.', 'push.']],
  ['snapshot', snapshotSubject, undefined],
  ['with authRequired', authSubject, ['registration.', 'tasks.']],
] as const;

// The batteries of a seed at once: most of a battery's time is spent waiting on deadlines and sockets.
it.each(SEEDS)(
  'under seed %i, every correct connector passes every check it runs, and the incremental one runs all it can',
  async (seed) => {
    const reports = await Promise.all(
      CORRECT.map(([, subject, only]) =>
        runConformance(subject(), { seed, numRuns: 5, ...(only === undefined ? {} : { only }) }),
      ),
    );
    for (const [index, report] of reports.entries()) {
      expect(unpassed(report), `${CORRECT[index]?.[0]}: ${formatReport(report)}`).toEqual([]);
      expect(report.passed).toBe(true);
    }
    // Its driver can do everything a check needs: it runs every check but those its source or driver cannot reach.
    expect(skipped(reports[0])).toEqual([
      'registration.key-rotation',
      'sync.sigkill',
      'sync.snapshot-vanished',
      'tasks.credentials',
      'tasks.credentials',
    ]);
  },
  120_000,
);

it('skips the push checks, saying why, for a connector without a push path or a driver that cannot deliver', async () => {
  const withoutPush = await runConformance(incrementalSubjectWith({ push: false }), {
    seed: 1,
    only: ['push.'],
  });
  const subject = incrementalSubject();
  const cannotDeliver = await runConformance(
    { ...subject, driver: async () => Object.assign(await subject.driver(), { push: undefined }) },
    { seed: 1, only: ['push.'] },
  );
  const names = ['push.duplicates', 'push.out-of-order', 'push.missed', 'push.forged', 'push.gone'];
  expect(withoutPush.checks.map(({ name, status, happened }) => [name, status, happened])).toEqual(
    names.map((name) => [name, 'skip', 'the source declares no push path']),
  );
  expect(cannotDeliver.checks.map(({ name, status, happened }) => [name, status, happened])).toEqual(
    names.map((name) => [name, 'skip', 'the driver has no push: it cannot make the source deliver events']),
  );
});

it('names each result by a name of CHECK_NAMES, with the task type apart', async () => {
  const report = await runConformance(authSubject(), {
    seed: 4,
    only: ['registration.', 'tasks.credentials'],
  });
  expect(report.checks.map(({ name, taskType, status }) => [name, taskType, status])).toEqual([
    ['registration.task-types', undefined, 'pass'],
    ['registration.ui-templates', undefined, 'pass'],
    ['registration.key-rotation', undefined, 'pass'],
    ['tasks.credentials', 'approve', 'pass'],
    ['tasks.credentials', 'reject', 'pass'],
  ]);
  for (const check of report.checks) expect(CHECK_NAMES).toContain(check.name);
  expect(formatReport(report)).toContain('pass  tasks.credentials (approve): ');
}, 60_000);

describe('a check that cannot run to a verdict', () => {
  it('is an error, not a failure, when the driver throws, and names the driver member', async () => {
    const subject = incrementalSubject();
    const report = await runConformance(
      {
        ...subject,
        driver: async () => {
          const driver = await subject.driver();
          return Object.assign(driver, {
            holds: () => {
              throw new Error('the test double is not connected');
            },
          });
        },
      },
      { seed: 1, only: ['sync.exact'] },
    );
    expect(report.checks).toMatchObject([
      {
        name: 'sync.exact',
        status: 'error',
        happened: "the driver's holds() threw: Error: the test double is not connected",
      },
    ]);
    expect(report.passed).toBe(false);
    expect(formatReport(report)).toMatch(
      /^ERROR {2}sync\.exact: .*\n {8}could not run: the driver's holds\(\) threw/m,
    );
    expect(formatReport(report)).toMatch(/0 passed, 0 failed, 0 skipped, 1 could not run$/);
  });

  it("is an error for every check when the subject's driver() throws", async () => {
    const report = await runConformance(
      {
        driver: () => {
          throw new Error('no simulator');
        },
        connector: () => {
          throw new Error('unreachable');
        },
      },
      { seed: 1, only: ['sync.exact', 'tasks.success'] },
    );
    expect(report.checks.map(({ name, status }) => [name, status])).toEqual([
      ['sync.exact', 'error'],
      ['tasks.success', 'error'],
    ]);
    expect(report.checks[0]?.happened).toContain('no simulator');
  });
});

it('builds a connector per simulated process: one across the runs of a stage, and one per run after a restart', async () => {
  const subject = incrementalSubject();
  let built = 0;
  const counted = {
    ...subject,
    connector: (driver: Parameters<typeof subject.connector>[0]) => {
      built += 1;
      return subject.connector(driver);
    },
  };
  const report = await runConformance(counted, { seed: 1, only: ['sync.exact'] });
  expect(report.checks).toMatchObject([{ name: 'sync.exact', status: 'pass' }]);
  // One to read what it declares; one for both runs under the `process` lifetime; one per run under `restart`.
  expect(built).toBe(1 + 1 + 2);
});
