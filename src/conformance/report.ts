/**
 * The battery's report: one line per check, pass, fail, skip or error, and for a failure what was expected, what
 * happened and the seed that reproduces it.
 * @module
 */
import { ApprovalKitError } from '../errors.js';

/**
 * How a check ended: `pass`, `fail` (the connector broke the check's promise), `skip` (the check cannot run for
 * this connector or driver), or `error` (the check could not run to a verdict: the driver, or the subject's
 * `driver()` or `connector()`, threw, or the battery's own setup did not happen). A script tells a broken driver
 * from a broken connector by this status alone.
 */
export type CheckStatus = 'pass' | 'fail' | 'skip' | 'error';

/** The outcome of one check (for a task check, of one task type). */
export interface CheckResult {
  /** The check's name, one of `CHECK_NAMES`, such as `sync.ties`. */
  name: string;
  /** For a task check: the task type it ran for (a task check runs once per declared type). */
  taskType?: string;
  /** What the check proves, in a sentence. */
  title: string;
  status: CheckStatus;
  /** For a failure: what the check expected. */
  expected?: string;
  /** For a failure: what happened instead. For a skip or an error: why the check could not run. */
  happened?: string;
  /** The seed the check ran with: `seed` in the options reproduces it. */
  seed: number;
  /** How long the check took, in milliseconds. */
  durationMs: number;
  /** For a generated check that failed: the smallest failing sequence fast-check found, as it prints it. */
  counterexample?: string;
}

/** What {@link runConformance} returns. */
export interface ConformanceReport {
  /** The connector's name. */
  subject: string;
  /** The seed of the whole run. */
  seed: number;
  checks: CheckResult[];
  /** True when no check failed and none ended in an error. */
  passed: boolean;
}

/**
 * A check's failure: what was expected and what happened. Thrown inside a check; the battery turns it into the
 * report's line, and the test runner's failure when the battery runs as tests.
 */
export class ConformanceFailure extends ApprovalKitError<'conformance_failure'> {
  readonly expected: string;
  readonly happened: string;
  /** For a generated check: the smallest failing sequence, as fast-check prints it. */
  readonly counterexample: string | undefined;

  constructor(expected: string, happened: string, counterexample?: string) {
    super('conformance_failure', `expected ${expected}; happened: ${happened}`);
    this.expected = expected;
    this.happened = happened;
    this.counterexample = counterexample;
  }
}

/** A check that cannot run for this connector or driver; the message says why. Caught by the battery. */
export class CheckSkipped extends Error {
  override readonly name = 'CheckSkipped';
}

/**
 * A check that could not run to a verdict because something it relies on threw: a member of the driver, the
 * subject's `driver()` or `connector()`. The battery reports it as `error`, not as the connector's failure.
 */
export class CheckErrored extends Error {
  override readonly name = 'CheckErrored';
}

/** One line for a check's result, and, for a failure, indented lines saying what was expected and happened. */
export function formatCheck(result: CheckResult): string {
  const mark = { pass: 'pass', fail: 'FAIL', skip: 'skip', error: 'ERROR' }[result.status];
  const name = result.taskType === undefined ? result.name : `${result.name} (${result.taskType})`;
  const head = `${mark}  ${name}: ${result.title}`;
  if (result.status === 'skip') return `${head} (${result.happened})`;
  if (result.status === 'pass') return head;
  if (result.status === 'error') {
    return [head, `        could not run: ${result.happened}`, `        seed: ${result.seed}`].join('\n');
  }
  const lines = [head, `        expected: ${result.expected}`, `        happened: ${result.happened}`];
  if (result.counterexample !== undefined)
    lines.push(`        smallest failing run: ${result.counterexample}`);
  lines.push(`        seed: ${result.seed}`);
  return lines.join('\n');
}

/** The whole report as text: a heading, one line per check, and a summary. */
export function formatReport(report: ConformanceReport): string {
  const count = (status: CheckStatus) => report.checks.filter((check) => check.status === status).length;
  return [
    `Conformance of ${report.subject} (seed ${report.seed})`,
    ...report.checks.map(formatCheck),
    `${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped${count('error') > 0 ? `, ${count('error')} could not run` : ''}`,
  ].join('\n');
}

/** An error as one line: its name and message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
