import { type ConformanceSubject, formatReport, runConformance } from 'approval-connector-kit/conformance';
import { expect } from 'vitest';
import {
  authSubject,
  type Bug,
  incrementalSubject,
  incrementalSubjectWith,
  snapshotSubject,
} from './connectors.js';
import type { FakeDriver } from './source.js';

/**
 * Each way an author can break a guarantee of the kit while doing everything else right: the broken connector, the
 * check named for the bug, and what that check must say happened. The seeds every one of them must fail under.
 */
export interface BrokenCase {
  bug: Bug;
  subject: () => ConformanceSubject<FakeDriver>;
  check: string;
  happened: RegExp;
}

export const SEEDS = [1, 2, 3, 4, 5];

const without = { lastModified: false } as const;

export const SYNC_CASES: BrokenCase[] = [
  {
    // With a driver that does not say when a request changed, only a change made while the connector reads shows it.
    bug: 'wall-clock-cursor',
    subject: () => incrementalSubjectWith(without, 'wall-clock-cursor'),
    check: 'sync.during-run',
    happened: /" is missing|" has data/,
  },
  {
    // The same, for a source that does not declare its changes ordered: its cursor is saved at the end of a run.
    bug: 'wall-clock-cursor',
    subject: () => incrementalSubjectWith({ ...without, unordered: true }, 'wall-clock-cursor'),
    check: 'sync.during-run',
    happened: /" is missing|" has data/,
  },
  {
    bug: 'wall-clock-cursor',
    subject: () => incrementalSubject('wall-clock-cursor'),
    check: 'sync.cursor',
    happened: /is later than every change in the source/,
  },
  {
    bug: 'resolved-never-set',
    subject: () => incrementalSubject('resolved-never-set'),
    check: 'sync.exact',
    happened: /has resolved false, the source true/,
  },
  {
    bug: 'ties-dropped-at-page-boundary',
    subject: () => incrementalSubject('ties-dropped-at-page-boundary'),
    check: 'sync.ties',
    happened: /" is missing/,
  },
  {
    bug: 'detail-cache-by-time',
    subject: () => incrementalSubject('detail-cache-by-time'),
    check: 'sync.ties',
    happened: /" has data \{"title":"Tied [^"]*"\}, the source \{"title":"Tied /,
  },
  {
    bug: 'progress-saved-before-acknowledged',
    subject: () => incrementalSubject('progress-saved-before-acknowledged'),
    check: 'sync.crash',
    happened: /" is missing|before the service had/,
  },
  {
    bug: 'mark-in-memory',
    subject: () => incrementalSubject('mark-in-memory'),
    check: 'sync.failed-run',
    happened: /" has data \{"title":"Request [^"]*"\}, the source \{"title":"Changed /,
  },
  {
    bug: 'cache-never-forgets',
    subject: () => snapshotSubject('cache-never-forgets'),
    check: 'sync.snapshot-vanished',
    happened: /has resolved false, the source true|was deleted from the source, and is still open/,
  },
  {
    bug: 'first-page-only',
    subject: () => snapshotSubject('first-page-only'),
    check: 'sync.snapshot-vanished',
    happened: /" is missing/,
  },
  {
    bug: 'short-page-taken-as-last',
    subject: () => snapshotSubject('short-page-taken-as-last'),
    check: 'sync.snapshot-vanished',
    happened: /" is missing/,
  },
  {
    bug: 'listing-failure-swallowed',
    subject: () => snapshotSubject('listing-failure-swallowed'),
    check: 'sync.failed-run',
    happened: /a failed read was taken for a source without them/,
  },
  {
    bug: 'lookup-first-page-only',
    subject: () => incrementalSubject('lookup-first-page-only'),
    check: 'sync.reconcile',
    happened: /has resolved true, the source false/,
  },
  {
    bug: 'lookup-failure-swallowed',
    subject: () => incrementalSubject('lookup-failure-swallowed'),
    check: 'sync.failed-run',
    happened: /a failed read was taken for a source without them/,
  },
];

export const PUSH_CASES: BrokenCase[] = [
  {
    bug: 'verify-reserialized-body',
    subject: () => incrementalSubject('verify-reserialized-body'),
    check: 'push.duplicates',
    happened: /^its ingress answered 401: verify\(\) refused a delivery the source signed/,
  },
  {
    bug: 'delivery-id-per-request',
    subject: () => incrementalSubject('delivery-id-per-request'),
    check: 'push.duplicates',
    happened: /" has resolved false, the source true/,
  },
  {
    bug: 'ids-filtered-by-payload',
    subject: () => incrementalSubject('ids-filtered-by-payload'),
    check: 'push.duplicates',
    happened: /" has resolved false, the source true/,
  },
  {
    bug: 'payload-state',
    subject: () => incrementalSubject('payload-state'),
    check: 'push.out-of-order',
    happened: /" has resolved false, the source true/,
  },
  {
    bug: 'every-id-on-each-event',
    subject: () => incrementalSubject('every-id-on-each-event'),
    check: 'push.missed',
    happened: /^it counted none: an event had named the request whose delivery was dropped/,
  },
  {
    bug: 'approval-ids-mismatch',
    subject: () => incrementalSubject('approval-ids-mismatch'),
    check: 'push.missed',
    happened: /^it counted 2: the change whose delivery came was counted too/,
  },
  {
    bug: 'verify-always-true',
    subject: () => incrementalSubject('verify-always-true'),
    check: 'push.forged',
    happened: /^unsigned \(the body without any of its headers\): answered 202; tampered .*: answered 202;/,
  },
  {
    bug: 'unsigned-accepted',
    subject: () => incrementalSubject('unsigned-accepted'),
    check: 'push.forged',
    happened:
      /^unsigned \(the body without any of its headers\): answered 202; 2 of 3 were counted refused; the service changed/,
  },
  {
    bug: 'verify-ignores-body',
    subject: () => incrementalSubject('verify-ignores-body'),
    check: 'push.forged',
    happened:
      /^tampered \(a byte added to the body after it was signed\): answered 202; swapped .*: answered 20[02];/,
  },
  {
    bug: 'throws-on-unknown-event',
    subject: () => incrementalSubject('throws-on-unknown-event'),
    check: 'push.gone',
    happened: /was deleted from the source, and is still open/,
  },
  {
    bug: 'lookup-drops-batch-on-missing',
    subject: () => incrementalSubject('lookup-drops-batch-on-missing'),
    check: 'push.gone',
    happened: /" has resolved true, the source false/,
  },
];

export const TASK_CASES: BrokenCase[] = [
  {
    bug: 'failure-swallowed',
    subject: () => incrementalSubject('failure-swallowed'),
    check: 'tasks.failures',
    happened: /in the action, after a pre-check that passed: expected serviceUnavailable, got success/,
  },
  {
    bug: 'outage-as-verdict',
    subject: () => incrementalSubject('outage-as-verdict'),
    check: 'tasks.failures',
    happened: /in the pre-check's read: expected serviceUnavailable, got systemError/,
  },
  {
    bug: 'precheck-ignored',
    subject: () => incrementalSubject('precheck-ignored'),
    check: 'tasks.precheck',
    happened: /^the source was acted on, and the task ended success$/,
  },
  {
    // Ends in a status other than success: only "the source was acted on" catches it.
    bug: 'acts-then-fails',
    subject: () => incrementalSubject('acts-then-fails'),
    check: 'tasks.precheck',
    happened: /^the source was acted on, and the task ended systemError/,
  },
  {
    bug: 'credentials-kept-in-state',
    subject: () => authSubject('credentials-kept-in-state'),
    check: 'tasks.credentials',
    happened: /^the value of "password" is in the connector state$/,
  },
];

export const DEADLINE_CASES: BrokenCase[] = [
  {
    bug: 'signal-ignored',
    subject: () => incrementalSubject('signal-ignored'),
    check: 'tasks.deadline',
    happened: /the handler is still waiting on the source/,
  },
  {
    // A driver that cannot make the source hang: the slow answer shows the decision carried out after the deadline.
    bug: 'acts-after-deadline',
    subject: () => incrementalSubjectWith({ failures: ['unavailable', 'slow'] }, 'acts-after-deadline'),
    check: 'tasks.deadline',
    happened: /success, reported after the deadline: the handler ignored context.signal/,
  },
];

/** Runs the case's check under the seed: every result of it must fail, saying what the case says happened. */
export async function expectCaught({ subject, check, happened }: BrokenCase, seed: number): Promise<void> {
  const report = await runConformance(subject(), { seed, numRuns: 10, only: [check] });
  const results = report.checks.filter((result) => result.name === check);
  expect(results.length, formatReport(report)).toBeGreaterThan(0);
  for (const result of results) {
    expect(result, formatReport(report)).toMatchObject({
      status: 'fail',
      seed,
      happened: expect.stringMatching(happened),
    });
  }
}
