/**
 * Runs the battery: every check against a reference backend in-process, as a report or as tests of the author's
 * runner.
 * @module
 */
import { randomInt } from 'node:crypto';
import {
  type ReferenceBackend,
  type ReferenceBackendOptions,
  startReferenceBackend,
} from '../backend/index.js';
import { type Check, CheckEnvironment, type Declared, declarationsOf } from './check.js';
import type { ConformanceSubject, SourceDriver } from './driver.js';
import { pushChecks } from './push-checks.js';
import { registrationChecks } from './registration-checks.js';
import {
  CheckErrored,
  type CheckResult,
  CheckSkipped,
  ConformanceFailure,
  type ConformanceReport,
  formatCheck,
  messageOf,
} from './report.js';
import { syncChecks } from './sync-checks.js';
import { taskChecks } from './task-checks.js';

/** Options of {@link runConformance} and {@link conformanceSuite}. */
export interface ConformanceOptions {
  /**
   * The seed every check draws from (titles, generated sequences, crash points). A failure prints it; give it
   * back here to run the same checks again.
   * @default a random one
   */
  seed?: number;
  /**
   * Sequences the generated check (`sync.crash`) runs. More finds rarer bugs, and takes longer.
   * @default 10
   */
  numRuns?: number;
  /** Run only the checks whose name is, or starts with, one of these (`sync.`, `tasks.failures`). @default all */
  only?: readonly string[];
  /** Leave out the checks whose name is, or starts with, one of these. @default none */
  skip?: readonly string[];
  /** Options of the in-process reference backend each check runs against. @default {} */
  backend?: ReferenceBackendOptions;
}

/** Every check of the battery, in the order they run and are reported. */
export const CHECKS: readonly Check[] = [...registrationChecks, ...syncChecks, ...pushChecks, ...taskChecks];

/** The names of the battery's checks. */
export const CHECK_NAMES: readonly string[] = CHECKS.map((check) => check.name);

function selected(options: ConformanceOptions): Check[] {
  const matches = (name: string, patterns: readonly string[]) =>
    patterns.some((pattern) => name === pattern || name.startsWith(pattern));
  return CHECKS.filter(
    (check) =>
      (options.only === undefined || matches(check.name, options.only)) &&
      !matches(check.name, options.skip ?? []),
  );
}

interface Settings {
  seed: number;
  numRuns: number;
  backend: ReferenceBackendOptions;
}

function settingsOf(options: ConformanceOptions): Settings {
  const seed = options.seed ?? randomInt(2 ** 31);
  const numRuns = options.numRuns ?? 10;
  if (!Number.isSafeInteger(seed))
    throw new RangeError(`Expected \`seed\` to be an integer, got \`${seed}\``);
  if (!Number.isSafeInteger(numRuns) || numRuns < 1) {
    throw new RangeError(`Expected \`numRuns\` to be an integer from 1 and up, got \`${numRuns}\``);
  }
  return { seed, numRuns, backend: options.backend ?? {} };
}

async function declaredBy<D extends SourceDriver>(subject: ConformanceSubject<D>): Promise<Declared> {
  const driver = await subject.driver();
  try {
    return declarationsOf(subject.connector(driver));
  } finally {
    await driver.close?.();
  }
}

/** What the connector declares; `undefined` with the error when the subject cannot even build one. */
async function declaredOrError<D extends SourceDriver>(
  subject: ConformanceSubject<D>,
): Promise<{ declared: Declared } | { error: string }> {
  try {
    return { declared: await declaredBy(subject) };
  } catch (error) {
    return { error: `building a driver and a connector to read what it declares threw: ${messageOf(error)}` };
  }
}

/**
 * Runs the checks in turn against one reference backend in-process, each stage of a check on a tenant of its own:
 * nothing of a check is left running when the next begins (each stops its workers, wires and driver).
 */
async function runChecks<D extends SourceDriver>(
  checks: readonly Check[],
  subject: ConformanceSubject<D>,
  declared: Declared,
  settings: Settings,
): Promise<CheckResult[]> {
  const backend = await startReferenceBackend(settings.backend);
  try {
    const results: CheckResult[] = [];
    for (const check of checks)
      results.push(...(await runCheck(check, subject, declared, settings, backend)));
    return results;
  } finally {
    await backend.close();
  }
}

/** Runs one check (once per task type for a task check) against the battery's backend. */
async function runCheck<D extends SourceDriver>(
  check: Check,
  subject: ConformanceSubject<D>,
  declared: Declared,
  settings: Settings,
  backend: ReferenceBackend,
): Promise<CheckResult[]> {
  const types = check.perTaskType ? declared.taskTypes : [undefined];
  const results: CheckResult[] = [];
  for (const type of types) {
    const startedAt = performance.now();
    const base = () => ({
      name: check.name,
      ...(type === undefined ? {} : { taskType: type }),
      title: check.title,
      seed: settings.seed,
      durationMs: Math.round(performance.now() - startedAt),
    });
    const environment = new CheckEnvironment({
      backend,
      subject: subject as unknown as ConformanceSubject,
      declared,
      seed: settings.seed,
      numRuns: settings.numRuns,
    });
    try {
      await check.run(environment, type);
      results.push({ ...base(), status: 'pass' });
    } catch (error) {
      results.push(resultOf(base(), error));
    } finally {
      await environment.close();
    }
  }
  return results;
}

function resultOf(base: Omit<CheckResult, 'status'>, error: unknown): CheckResult {
  if (error instanceof CheckSkipped) return { ...base, status: 'skip', happened: error.message };
  if (error instanceof ConformanceFailure) {
    const { expected, happened, counterexample } = error;
    return counterexample === undefined
      ? { ...base, status: 'fail', expected, happened }
      : { ...base, status: 'fail', expected, happened, counterexample };
  }
  // The driver's own errors come labelled (see Stage); anything else is the battery's setup.
  const happened =
    error instanceof CheckErrored ? error.message : `the check's setup threw: ${messageOf(error)}`;
  return { ...base, status: 'error', happened };
}

/**
 * Runs the battery against the author's connector and source driver, and returns the report: one result per check
 * (per task type for the task checks), pass, fail or skip. The checks run in turn against one reference backend
 * in-process, each stage of a check on a tenant of its own. Nothing is printed; `formatReport(report)` gives the text.
 *
 * @example
 * <!-- example: typecheck, because it runs the whole battery -->
 * ```ts
 * import { formatReport, runConformance } from 'approval-connector-kit/conformance';
 *
 * const report = await runConformance({
 *   driver: () => new RequestsDriver(),
 *   connector: (driver) => new MyConnector(driver.requests),
 * });
 * console.log(formatReport(report));
 * ```
 */
export async function runConformance<D extends SourceDriver>(
  subject: ConformanceSubject<D>,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const settings = settingsOf(options);
  const found = await declaredOrError(subject);
  const checks: CheckResult[] =
    'error' in found
      ? selected(options).map((check) => ({
          name: check.name,
          title: check.title,
          seed: settings.seed,
          durationMs: 0,
          status: 'error' as const,
          happened: found.error,
        }))
      : await runChecks(selected(options), subject, found.declared, settings);
  return {
    subject: subject.name ?? ('declared' in found ? found.declared.name : 'the connector'),
    seed: settings.seed,
    checks,
    passed: checks.every((check) => check.status !== 'fail' && check.status !== 'error'),
  };
}

/**
 * The test functions of a runner: vitest's and `node:test`'s `describe` and `it` fit as they are. `it` may take a
 * timeout as its third argument (vitest does; `node:test` ignores it).
 */
export interface TestRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): unknown;
}

/** Options of {@link conformanceSuite}: those of {@link runConformance}, and the time each test may take. */
export interface ConformanceSuiteOptions extends ConformanceOptions {
  /**
   * The timeout given to each test, in milliseconds, for runners that take one as `it`'s third argument.
   * @default 60000
   */
  timeoutMs?: number;
}

/**
 * Registers the battery as tests of the author's runner: a `describe` block with one test per check. A check that
 * cannot run for this connector or driver passes (`runConformance`'s report says why it was skipped); a failing
 * check fails its test with what was expected, what happened and the seed.
 *
 * @example
 * <!-- example: typecheck, because it registers tests with the reader's test runner -->
 * ```ts
 * import { describe, it } from 'vitest'; // or 'node:test'
 * import { conformanceSuite } from 'approval-connector-kit/conformance';
 *
 * conformanceSuite({ driver: () => new RequestsDriver(), connector: (d) => new MyConnector(d.requests) }, { describe, it });
 * ```
 */
export function conformanceSuite<D extends SourceDriver>(
  subject: ConformanceSubject<D>,
  runner: TestRunner,
  options: ConformanceSuiteOptions = {},
): void {
  const settings = settingsOf(options);
  const timeoutMs = options.timeoutMs ?? 60_000;
  runner.describe(`conformance of ${subject.name ?? 'the connector'} (seed ${settings.seed})`, () => {
    for (const check of selected(options)) {
      runner.it(
        `${check.name}: ${check.title}`,
        async () => {
          // A backend of its own: a test runs alone as well as with the others.
          const results = await runChecks([check], subject, await declaredBy(subject), settings);
          const failed = results.filter((result) => result.status === 'fail' || result.status === 'error');
          if (failed.length > 0) throw new Error(failed.map(formatCheck).join('\n'));
        },
        timeoutMs,
      );
    }
  });
}
