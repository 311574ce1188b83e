import { type ConformanceReport, formatReport, runConformance } from 'approval-connector-kit/conformance';
import { describe, expect, it } from 'vitest';
import { authSubject, type Bug, incrementalSubject, snapshotSubject } from './support/connectors.js';

const statusOf = (report: ConformanceReport, name: string) =>
  report.checks
    .filter((check) => check.name === name || check.name.startsWith(`${name}[`))
    .map((check) => check.status);

describe('a correct connector', () => {
  it('passes the whole battery, incremental', async () => {
    const report = await runConformance(incrementalSubject(), { seed: 1, numRuns: 5 });
    expect(formatReport(report)).not.toMatch(/^FAIL/m);
    expect(report.passed).toBe(true);
    // Every check ran: the driver can do everything a check needs, and the connector declares a lookup.
    expect(report.checks.filter((check) => check.status === 'skip').map((check) => check.name)).toEqual([
      'registration.key-rotation',
      'sync.sigkill',
      'sync.snapshot-vanished',
      'tasks.credentials[approve]',
      'tasks.credentials[reject]',
    ]);
  }, 120_000);

  it('passes the whole battery, snapshot', async () => {
    const report = await runConformance(snapshotSubject(), { seed: 2, numRuns: 5 });
    expect(formatReport(report)).not.toMatch(/^FAIL/m);
    expect(report.passed).toBe(true);
  }, 120_000);
});

it('a correct connector with authRequired passes the credential and key checks', async () => {
  const report = await runConformance(authSubject(), {
    seed: 4,
    only: ['registration.', 'tasks.credentials', 'tasks.success'],
  });
  expect(formatReport(report)).not.toMatch(/^FAIL/m);
  expect(report.checks.map((check) => `${check.name} ${check.status}`)).toEqual([
    'registration.task-types pass',
    'registration.ui-templates pass',
    'registration.key-rotation pass',
    'tasks.success[approve] pass',
    'tasks.success[reject] pass',
    'tasks.credentials[approve] pass',
    'tasks.credentials[reject] pass',
  ]);
}, 120_000);

describe('a broken connector fails the check named for its bug', () => {
  it('credentials kept in connector state fail tasks.credentials', async () => {
    const report = await runConformance(authSubject('credentials-kept-in-state'), {
      seed: 3,
      only: ['tasks.credentials'],
    });
    expect(report.checks).toMatchObject([
      {
        name: 'tasks.credentials[approve]',
        status: 'fail',
        happened: 'the value of "password" is in the connector state',
      },
      { name: 'tasks.credentials[reject]', status: 'fail' },
    ]);
  }, 60_000);

  const cases: [Bug, 'incremental' | 'snapshot', string][] = [
    ['wall-clock-cursor', 'incremental', 'sync.cursor'],
    ['resolved-never-set', 'incremental', 'sync.exact'],
    ['ties-dropped-at-page-boundary', 'incremental', 'sync.ties'],
    ['failure-swallowed', 'incremental', 'tasks.failures'],
    ['precheck-ignored', 'incremental', 'tasks.precheck'],
    ['vanished-forgotten', 'snapshot', 'sync.snapshot-vanished'],
    ['signal-ignored', 'incremental', 'tasks.deadline'],
  ];
  it.each(cases)(
    '%s (%s) fails %s',
    async (bug, kind, check) => {
      const subject = kind === 'incremental' ? incrementalSubject(bug) : snapshotSubject(bug);
      const report = await runConformance(subject, { seed: 3, numRuns: 5, only: [check] });
      expect(statusOf(report, check)).not.toEqual([]);
      expect(statusOf(report, check)).toContain('fail');
      const failure = report.checks.find((result) => result.status === 'fail');
      expect(failure).toMatchObject({ seed: 3, expected: expect.any(String), happened: expect.any(String) });
    },
    60_000,
  );

  it('progress saved before the service acknowledged fails sync.crash, with the smallest sequence', async () => {
    const subject = incrementalSubject('progress-saved-before-acknowledged');
    // The other sync checks never cut a run off while it pushes: only the generated crashes find this one.
    const others = await runConformance(subject, { seed: 3, only: ['sync.exact', 'sync.during-run'] });
    expect(formatReport(others)).not.toMatch(/^FAIL/m);
    const report = await runConformance(subject, { seed: 1, numRuns: 20, only: ['sync.crash'] });
    expect(report.checks).toMatchObject([
      {
        name: 'sync.crash',
        status: 'fail',
        seed: 1,
        counterexample: expect.stringContaining('"crash":{"at"'),
      },
    ]);
  }, 180_000);
});
