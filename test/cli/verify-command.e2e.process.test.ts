import { afterEach, describe, expect, it } from 'vitest';
import { runVerifyCommand } from '../../src/cli/commands/verify.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { runInProcess } from './support/in-process.js';
import { killAll, spawnCli } from './support/processes.js';

afterEach(() => killAll());

const CORRECT = 'test/conformance/support/verify-correct.ts';
const BROKEN = 'test/conformance/support/verify-broken.ts';
const ERRORING = 'test/conformance/support/verify-erroring.ts';

describe('connector verify', () => {
  it('runs the battery against the module’s connector and driver, prints the report, and exits 0', async () => {
    const cli = spawnCli([
      'verify',
      CORRECT,
      '--seed',
      '5',
      '--only',
      'sync.exact',
      '--only',
      'tasks.success',
    ]);
    expect(await cli.exited).toBe(EXIT_CODES.done);
    expect(cli.stdout()).toContain('Conformance of FakeIncrementalConnector (seed 5)');
    expect(cli.stdout()).toMatch(/^pass {2}sync\.exact: /m);
    expect(cli.stdout()).toMatch(/^pass {2}tasks\.success \(approve\): /m);
    expect(cli.stdout()).toMatch(/^pass {2}tasks\.success \(reject\): /m);
    expect(cli.stdout()).toContain('3 passed, 0 failed, 0 skipped');
  }, 60_000);

  it('exits 1 for a connector that fails a check, saying what was expected, what happened and the seed', async () => {
    const cli = spawnCli(['verify', BROKEN, '--seed', '11', '--only', 'sync.exact']);
    expect(await cli.exited).toBe(EXIT_CODES.failed);
    expect(cli.stdout()).toMatch(/^FAIL {2}sync\.exact: /m);
    expect(cli.stdout()).toMatch(/^ +expected: the service to hold every request/m);
    expect(cli.stdout()).toMatch(/^ +happened: "REQ-\d+" has resolved false, the source true/m);
    expect(cli.stdout()).toMatch(/^ +seed: 11$/m);
    expect(cli.stdout()).toContain('0 passed, 1 failed, 0 skipped');
  }, 60_000);

  it('exits 2 when a check could not run because the driver threw, and says which member', async () => {
    const cli = spawnCli(['verify', ERRORING, '--seed', '3', '--only', 'sync.exact']);
    expect(await cli.exited).toBe(EXIT_CODES.refused);
    expect(cli.stdout()).toMatch(/^ERROR {2}sync\.exact: /m);
    expect(cli.stdout()).toMatch(
      /^ +could not run: the driver's holds\(\) threw: Error: the test double is not connected$/m,
    );
    expect(cli.stdout()).toContain('0 passed, 0 failed, 0 skipped, 1 could not run');
  }, 60_000);

  it('refuses a module that does not exist, and a bad option, with 2, and runs nothing', async () => {
    // Refused before a module is loaded: run in this process, as a process of its own would run it.
    const missing = await runInProcess(runVerifyCommand, ['test/conformance/support/no-such-module.js']);
    expect(missing.code).toBe(EXIT_CODES.refused);
    expect(missing.stderr).toContain('does not exist');
    expect(missing.stdout).toBe('');
    const runs = await runInProcess(runVerifyCommand, [CORRECT, '--runs', '0']);
    expect(runs.code).toBe(EXIT_CODES.refused);
    expect(runs.stderr).toContain('Expected --runs to be an integer from 1 up, got `0`');
    expect(runs.stdout).toBe('');
  }, 60_000);

  it('refuses a module that exports no conformance subject', async () => {
    const cli = spawnCli(['verify', 'test/cli/support/instance-module.ts']);
    expect(await cli.exited).toBe(EXIT_CODES.refused);
    expect(cli.stderr()).toContain('exports no `conformance`');
  }, 60_000);
});
