import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { TSX } from '../cli/support/processes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs the fixture with `node --test`, in a process of its own, and resolves with its exit code and output. */
async function nodeTest(env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    ['--import', TSX, '--test', '--test-reporter=spec', 'test/conformance/fixtures/node-test-suite.ts'],
    { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const [code] = await once(child, 'exit');
  return { code: code as number | null, output };
}

it('registers the battery with node:test: one test per check, passing for a correct connector', async () => {
  const { code, output } = await nodeTest();
  expect(code, output).toBe(0);
  expect(output).toContain('conformance of FakeIncrementalConnector (seed 9)');
  expect(output).toMatch(/✔ registration\.task-types: /);
  expect(output).toMatch(/✔ sync\.exact: /);
}, 120_000);

it('fails the test of the check a broken connector fails, with what was expected and the seed', async () => {
  const { code, output } = await nodeTest({ CONFORMANCE_BUG: 'resolved-never-set' });
  expect(code, output).toBe(1);
  expect(output).toMatch(/✔ registration\.task-types: /);
  expect(output).toMatch(/✖ sync\.exact: /);
  expect(output).toContain('has resolved false, the source true');
  expect(output).toContain('seed: 9');
}, 120_000);
