import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type CommandIo, readCommandLine } from '../../src/cli/command-line.js';
import { runBackendCommand } from '../../src/cli/commands/backend.js';
import { runDevCommand } from '../../src/cli/commands/dev.js';
import { runKeysCommand } from '../../src/cli/commands/keys.js';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { CommandLine } from '../../src/internal/command-line.js';
import { nonEmptyString, portText } from '../../src/internal/options.js';
import { runWorker } from '../../src/worker/index.js';
import { WORKER_USAGE } from '../../src/worker/internal.js';
import { programUsage } from '../../src/worker/process/run-worker.js';

const USAGE = 'Usage: demo [file] [--port N] [--dry-run]';

const demo = new CommandLine({
  subject: 'options of demo',
  usage: USAGE,
  arguments: { file: nonEmptyString().default('demo.json') },
  extraArgument: 'give one file',
  flags: {
    port: { type: 'string', schema: portText().default(8080) },
    'dry-run': { type: 'boolean', short: 'n', schema: z.boolean().default(false) },
  },
  variables: { DEMO_TOKEN: z.string().min(8).optional() },
  secret: ['DEMO_TOKEN'],
});

/** Reads `argv` as a command's `main` does, with the output kept. */
function read(argv: string[], env: Record<string, string> = {}, check?: (options: object) => unknown) {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = {
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  };
  const result = readCommandLine(demo, argv, { io, ...(check === undefined ? {} : { check }) });
  return { result, stdout, stderr };
}

describe('a command line', () => {
  it('gives the flags, the arguments and the variables, every default applied', () => {
    expect(read(['data.json', '-n', '--port=0'], { DEMO_TOKEN: 'secret-token-1' }).result).toEqual({
      file: 'data.json',
      '--port': 0,
      '--dry-run': true,
      '--help': false,
      DEMO_TOKEN: 'secret-token-1',
    });
    expect(read([], { DEMO_TOKEN: '' }).result).toEqual({
      file: 'demo.json',
      '--port': 8080,
      '--dry-run': false,
      '--help': false,
      DEMO_TOKEN: undefined,
    });
  });

  it('says which flags npm kept for itself in an npm script, and the command line that passes them on', () => {
    // `npm run dev --port 8090 --dry-run`, as npm 11 runs it: the flags become its configuration, the value a word.
    const kept = read(['8090'], {
      npm_lifecycle_event: 'dev',
      npm_config_port: 'true',
      npm_config_dry_run: 'true',
    });
    expect(kept.result).toMatchObject({ file: '8090', '--port': 8080, '--dry-run': false });
    expect(kept.stderr).toBe(
      [
        'npm kept --port for itself (npm reads the flags before `--` as its own): run `npm run dev -- --port 8090` to give it to the command',
        'npm kept --dry-run for itself (npm reads the flags before `--` as its own): run `npm run dev -- --dry-run` to give it to the command',
        '',
      ].join('\n'),
    );
    // A value npm kept as it was given, and npm's own configuration outside an npm script.
    expect(read([], { npm_lifecycle_event: 'start', npm_config_port: '9000' }).stderr).toContain(
      'run `npm run start -- --port 9000`',
    );
    expect(read([], { npm_config_port: '8090' }).stderr).toBe('');
  });

  it('answers --help with the usage on stdout and exit code 0, whatever else is wrong', () => {
    const help = read(['-h', 'one', 'two'], { DEMO_TOKEN: 'short' });
    expect(help).toEqual({ result: EXIT_CODES.done, stdout: `${USAGE}\n`, stderr: '' });
  });

  it('refuses with the usage, then every problem in one line, the last, on stderr, and exit code 2', () => {
    const bad = read(['one', 'two', '--prot', '80', '--port', 'eighty'], { DEMO_TOKEN: 'short-1' });
    expect(bad.result).toBe(EXIT_CODES.refused);
    expect(bad.stdout).toBe('');
    const [message, ...rest] = bad.stderr.trimEnd().split('\n').reverse();
    expect(message).toBe(
      'Invalid options of demo: Unexpected argument `two`: give one file; ' +
        'Expected `--port` to be an integer from 0 to 65535, got `"eighty"` (string); ' +
        'Unknown option `--prot`; did you mean `--port`?; ' +
        'Expected `DEMO_TOKEN` to be a string of at least 8 characters, got a string (not shown: it is secret)',
    );
    expect(rest.reverse().join('\n')).toBe(`${USAGE}\n`);
    expect(bad.stderr).not.toContain('short-1');
  });

  it('takes the word after an unknown flag for its value, not for an argument', () => {
    expect(read(['--prot', '80']).stderr.trimEnd().split('\n').at(-1)).toBe(
      'Invalid options of demo: Unknown option `--prot`; did you mean `--port`?',
    );
  });

  it('refuses what a command checks further, alike', () => {
    const refused = read(['missing.json'], {}, () => {
      throw demo.refuse('missing.json does not exist');
    });
    expect(refused.result).toBe(EXIT_CODES.refused);
    expect(refused.stderr).toBe(`${USAGE}\n\nInvalid options of demo: missing.json does not exist\n`);
  });
});

describe('the commands’ command lines', () => {
  afterEach(() => vi.restoreAllMocks());

  /** Runs a command in this process with its output kept: a refused command line starts nothing. */
  async function run(command: (argv: readonly string[]) => Promise<number>, argv: string[]) {
    let stdout = '';
    let stderr = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
      stdout += String(text);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
      stderr += String(text);
      return true;
    });
    const code = await command(argv);
    vi.restoreAllMocks();
    return { code, stdout, stderr };
  }

  it.each([
    ['backend', runBackendCommand, [], '`--port`, `--host`, `--data`, `--seed`, `--help`'],
    ['dev', runDevCommand, [], '`--port`, `--data`, `--seed`, `--help`'],
    ['keys', runKeysCommand, ['generate'], '`--previous`, `--out`, `--help`'],
  ] as const)(
    'connector %s refuses a bad flag with its usage, then one line, the last, exit code 2',
    async (name, command, argv, known) => {
      const help = await run(command, ['--help']);
      expect(help.code).toBe(EXIT_CODES.done);
      expect(help.stdout).toMatch(new RegExp(`^Usage: connector ${name} `));
      // The exit codes it says are those it exits with.
      const { done, failed, refused } = EXIT_CODES;
      expect(help.stdout).toMatch(new RegExp(`\nExit codes: ${done} `));
      expect(help.stdout).toMatch(new RegExp(`; ${failed} when`));
      expect(help.stdout).toMatch(new RegExp(`; ${refused} for bad options`));
      const bad = await run(command, [...argv, '--bogus']);
      expect(bad).toEqual({
        code: EXIT_CODES.refused,
        stdout: '',
        stderr: `${help.stdout}\nInvalid options of connector ${name}: Unknown option \`--bogus\`; the known ones are ${known}\n`,
      });
    },
  );

  it('a worker refuses its configuration as a command its command line, and answers --help alike', async () => {
    const worker = (env: Record<string, string>) => (argv: readonly string[]) =>
      runWorker(
        () => {
          throw new Error('a refused worker builds no connector');
        },
        { argv, env },
      );
    const help = await run(worker({ OPERATIONS_PORT: 'ninety' }), ['--help', '--bogus']);
    const usage = programUsage(process.argv[1]);
    expect(help).toEqual({ code: EXIT_CODES.done, stdout: `${usage}\n`, stderr: '' });
    // A usage line first, naming the program as it was started, then the worker's options.
    expect(usage).toMatch(/^Usage: node \S+ \[options\]\n\nRuns the connector as a worker/);
    expect(usage.endsWith(WORKER_USAGE)).toBe(true);
    expect(programUsage(join(process.cwd(), 'dist', 'main.js')).split('\n')[0]).toBe(
      `Usage: node ${join('dist', 'main.js')} [options]`,
    );
    const bad = await run(worker({ APPROVAL_SERVICE_URL: 'http://127.0.0.1:1', OPERATIONS_PORT: 'ninety' }), [
      '--rol',
      'tasks',
    ]);
    expect(bad).toEqual({
      code: EXIT_CODES.refused,
      stdout: '',
      stderr:
        `${usage}\n\n` +
        'Invalid worker configuration: Unknown option `--rol`; did you mean `--role`?; ' +
        'Expected `OPERATIONS_PORT` to be an integer from 0 to 65535, got `"ninety"` (string); ' +
        'Expected `APPROVAL_CONNECTOR_TOKEN` to be set to the connector token (or `service.token` in the config file), ' +
        'got nothing\n',
    });
  });
});
