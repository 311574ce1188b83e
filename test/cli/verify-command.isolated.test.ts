import { describe, expect, it } from 'vitest';
import { runBackendCommand } from '../../src/cli/commands/backend.js';
import { runDevCommand } from '../../src/cli/commands/dev.js';
import { runKeysCommand } from '../../src/cli/commands/keys.js';
import { runRunCommand } from '../../src/cli/commands/run.js';
import { runVerifyCommand } from '../../src/cli/commands/verify.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { runInProcess } from './support/in-process.js';

// `connector verify`'s command line, read by the commands' shared reader; what it runs is
// test/cli/verify-command.e2e.process.test.ts's. Every case here is refused or answered before a module is loaded.

const MISSING = 'test/conformance/support/no-such-module.js';

describe('connector verify reads its command line as every command does', () => {
  it.each([
    ['backend', runBackendCommand],
    ['dev', runDevCommand],
    ['keys', runKeysCommand],
    ['run', runRunCommand],
    ['verify', runVerifyCommand],
  ] as const)(
    'connector %s --help answers its usage and exit code 0, whatever else the words hold',
    async (name, command) => {
      const help = await runInProcess(command, ['--help', '--bogus', 'one', 'two']);
      expect(help).toEqual({
        code: EXIT_CODES.done,
        stdout: expect.stringMatching(`^Usage: connector ${name} `),
        stderr: '',
      });
    },
  );

  it('refuses an unknown flag with its usage, then one line naming the known ones, exit code 2', async () => {
    const { stdout: usage } = await runInProcess(runVerifyCommand, ['-h']);
    const bad = await runInProcess(runVerifyCommand, [MISSING, '--bogus']);
    expect(bad).toEqual({
      code: EXIT_CODES.refused,
      stdout: '',
      stderr:
        `${usage}\n` +
        'Invalid options of connector verify: Unknown option `--bogus`; the known ones are `--seed`, `--runs`, ' +
        '`--only`, `--skip`, `--help`\n',
    });
  });

  it('refuses a seed or a number of runs that is no integer in range, and a second module, alike', async () => {
    const refusals = {
      '--seed': [[MISSING, '--seed', '-1'], 'Expected --seed to be an integer from 0 up, got `-1`'],
      '--runs': [[MISSING, '--runs', '1.5'], 'Expected --runs to be an integer from 1 up, got `1.5`'],
      module: [[MISSING, 'other.js'], 'Unexpected argument `other.js`: connector verify takes one module'],
    } as const;
    for (const [argv, message] of Object.values(refusals)) {
      const refused = await runInProcess(runVerifyCommand, argv);
      expect(refused.code).toBe(EXIT_CODES.refused);
      expect(refused.stderr.trimEnd().split('\n').at(-1)).toBe(
        `Invalid options of connector verify: ${message}`,
      );
    }
  });

  it('takes --only and --skip more than once, and goes on to the module with every option', async () => {
    const argv = [
      MISSING,
      '--seed',
      '0',
      '--runs',
      '3',
      '--only',
      'sync.',
      '--only=tasks.failures',
      '--skip',
      'sync.crash',
    ];
    const missing = await runInProcess(runVerifyCommand, argv);
    expect(missing.code).toBe(EXIT_CODES.refused);
    expect(missing.stderr).toMatch(
      /^\S+no-such-module\.js does not exist: give the module that exports `conformance`/,
    );
    expect(missing.stderr).not.toContain('Invalid options');
  });
});
