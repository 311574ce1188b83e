import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../src/cli/exit-codes.js';
import { killAll, spawnCli } from './support/processes.js';

const kit = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

afterEach(() => killAll());

describe('the connector command', () => {
  it.for(['--version', '-v'])('prints the kit’s version with %s, and exits 0', async (flag) => {
    const cli = spawnCli([flag]);
    expect(await cli.exited).toBe(EXIT_CODES.done);
    expect(cli.stdout()).toBe(`${kit.version}\n`);
    expect(cli.stderr()).toBe('');
  });

  it('lists in its help every command and option it answers, and the exit codes of them all', async () => {
    const cli = spawnCli(['--help']);
    expect(await cli.exited).toBe(EXIT_CODES.done);
    for (const command of ['create', 'run', 'dev', 'backend', 'verify', 'keys', 'check-node']) {
      expect(cli.stdout()).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
    }
    expect(cli.stdout()).toMatch(/^ {2}-v, --version +\S/m);
    expect(cli.stdout()).toMatch(/^ {2}-h, --help +\S/m);
    expect(cli.stdout()).toContain(
      `${EXIT_CODES.done} done, ${EXIT_CODES.failed} failed,\n${EXIT_CODES.refused} refused`,
    );
  });

  it('checks the Node.js with check-node: on this one, exits 0 and prints nothing', async () => {
    const cli = spawnCli(['check-node']);
    expect(await cli.exited).toBe(EXIT_CODES.done);
    expect(cli.stdout() + cli.stderr()).toBe('');
  });

  it('refuses an argument to check-node, and an unknown command, with 2', async () => {
    const extra = spawnCli(['check-node', 'now']);
    expect(await extra.exited).toBe(EXIT_CODES.refused);
    expect(extra.stderr()).toMatch(
      /^connector check-node takes no arguments, got `now`\n\nUsage: connector /,
    );
    const unknown = spawnCli(['--versoin']);
    expect(await unknown.exited).toBe(EXIT_CODES.refused);
    expect(unknown.stderr()).toMatch(/^Unknown command: --versoin\n/);
    // The name of a property every object has is no command either.
    const inherited = spawnCli(['toString']);
    expect(await inherited.exited).toBe(EXIT_CODES.refused);
    expect(inherited.stderr()).toMatch(/^Unknown command: toString\n/);
  });
});
