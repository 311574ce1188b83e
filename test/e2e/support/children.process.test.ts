import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runVitestOfItsOwn } from '../../setup/vitest-of-its-own.js';

/** Whether `pid` runs: a zombie, ended and not yet reaped (by init, its parent gone), does not. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
};

it('a process a test started is killed when the test times out, which its own finally cannot do', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'children-'));
  try {
    const pidFile = join(dir, 'pid');
    const code = await runVitestOfItsOwn('test/e2e/support/fixtures', ['--reporter', 'dot'], {
      CHILD_PID_FILE: pidFile,
    });
    expect(code).toBe(1);
    const pid = Number(await readFile(pidFile, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    // SIGKILL is delivered at once, its end reported a moment later.
    for (let tries = 0; tries < 100 && alive(pid); tries += 1) await new Promise((r) => setTimeout(r, 50));
    const survived = alive(pid);
    if (survived) process.kill(pid, 'SIGKILL');
    expect(survived).toBe(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
