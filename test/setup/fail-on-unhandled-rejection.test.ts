import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runVitestOfItsOwn } from './vitest-of-its-own.js';

interface Report {
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

it('fails a test during which a rejection went unhandled, also under fake timers, and only that test', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'unhandled-'));
  try {
    const output = join(dir, 'report.json');
    const code = await runVitestOfItsOwn('test/setup/fixtures', [
      '--reporter',
      'json',
      '--outputFile',
      output,
    ]);
    expect(code).toBe(1);
    const report = JSON.parse(await readFile(output, 'utf8')) as Report;
    const results = report.testResults.flatMap((file) => file.assertionResults);
    expect(results.map(({ title, status }) => ({ title, status }))).toEqual([
      { title: 'leaves a rejection unhandled', status: 'failed' },
      { title: 'leaves a rejection unhandled under fake timers', status: 'failed' },
      { title: 'handles every rejection', status: 'passed' },
    ]);
    expect(results[0]?.failureMessages[0]).toContain('Unhandled rejection during the test');
    expect(results[0]?.failureMessages[0]).toContain('a job nobody awaited');
    expect(results[1]?.failureMessages[0]).toContain('another job nobody awaited');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
