/**
 * `npm run soak`: the long soak. First the kill loop (test/soak/driver.ts): a syncing worker killed again and again
 * behind a fault-injecting proxy, checked against its source; then the reference backend's fuzz test with many runs.
 * Configured by environment variables (see docs/testing.md); prints one line per worker and a summary, and exits 1
 * when anything was found.
 */
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseOptions } from '../src/internal/options.js';
import { runSoak } from '../test/soak/driver.js';
import { exitWithin } from '../test/soak/processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FUZZ_TEST = 'test/backend/fuzz.test.ts';

const whole = z.string().regex(/^\d+$/, 'must be a whole number').transform(Number);
const share = z
  .string()
  .regex(/^(0(\.\d+)?|1(\.0*)?|\.\d+)$/, 'must be a number from 0 to 1')
  .transform(Number);

const Environment = z.object({
  SOAK_SEED: whole.optional(),
  SOAK_APPROVALS: whole.pipe(z.number().min(1).max(1_000_000)).default(50_000),
  SOAK_KILLS: whole.default(20),
  SOAK_TERMS: whole.optional(),
  SOAK_CHANGE_RATE: share.default(0.2),
  SOAK_FAULT_RATE: share.default(0.05),
  SOAK_MINUTES: whole.pipe(z.number().min(1)).default(30),
  SOAK_LOG_LEVEL: z.enum(['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('silent'),
  FUZZ_RUNS: whole.default(10_000),
  FUZZ_SEED: whole.optional(),
  FUZZ_MINUTES: whole.pipe(z.number().min(1)).default(15),
});

async function main(): Promise<number> {
  const settings = parseOptions(Environment, process.env, 'soak environment');
  const seed = settings.SOAK_SEED ?? randomInt(2 ** 31);
  console.log(
    `Soak: ${settings.SOAK_APPROVALS} approvals, ${settings.SOAK_KILLS} kills, ` +
      `${settings.SOAK_TERMS ?? Math.ceil(settings.SOAK_KILLS / 4)} SIGTERMs, faults in ${settings.SOAK_FAULT_RATE * 100}% ` +
      `of requests, at most ${settings.SOAK_MINUTES} minutes. SOAK_SEED=${seed} repeats this run.`,
  );
  const started = Date.now();
  const report = await runSoak({
    seed,
    approvals: settings.SOAK_APPROVALS,
    kills: settings.SOAK_KILLS,
    ...(settings.SOAK_TERMS === undefined ? {} : { terms: settings.SOAK_TERMS }),
    changeRate: settings.SOAK_CHANGE_RATE,
    faultRate: settings.SOAK_FAULT_RATE,
    deadlineMs: settings.SOAK_MINUTES * 60_000,
    workerLogLevel: settings.SOAK_LOG_LEVEL,
    onProgress: (line) => console.log(`  ${line}`),
  });
  const faults = Object.entries(report.faults)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  console.log(
    `Kill loop done in ${Math.round((Date.now() - started) / 1000)} s: ${report.generations.length} workers, ` +
      `${report.batches} batches and ${report.stateWrites} state writes acknowledged, ${report.severed} requests ` +
      `lost with a killed worker; requests by fault: ${faults}.`,
  );
  for (const problem of report.problems) console.error(`PROBLEM: ${problem}`);
  console.log(
    report.problems.length === 0
      ? `The service holds exactly the source's final ${report.approvals} approvals; the cursor never moved back.`
      : `${report.problems.length} problems (SOAK_SEED=${seed}).`,
  );

  const fuzz = await runFuzz(settings.FUZZ_RUNS, settings.FUZZ_SEED ?? seed, settings.FUZZ_MINUTES * 60_000);
  return report.problems.length === 0 && fuzz ? 0 : 1;
}

/** Runs the backend's fuzz test with `runs` runs; true when it passed or there is none to run. */
async function runFuzz(runs: number, seed: number, limitMs: number): Promise<boolean> {
  if (runs === 0) return true;
  if (!existsSync(join(ROOT, FUZZ_TEST))) {
    console.log(`No ${FUZZ_TEST} to run.`);
    return true;
  }
  console.log(
    `Fuzz: ${FUZZ_TEST} with FUZZ_RUNS=${runs} FUZZ_SEED=${seed}, at most ${limitMs / 60_000} minutes.`,
  );
  const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
  const child = spawn(
    process.execPath,
    [vitest, 'run', FUZZ_TEST, `--testTimeout=${limitMs}`, `--hookTimeout=${limitMs}`],
    {
      cwd: ROOT,
      env: { ...process.env, FUZZ_RUNS: String(runs), FUZZ_SEED: String(seed) },
      stdio: 'inherit',
    },
  );
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const ended = await exitWithin(exit, limitMs);
  if (ended === undefined) {
    console.error(`PROBLEM: the fuzz test had not finished after ${limitMs / 60_000} minutes; stopping it.`);
    child.kill('SIGKILL');
    await exit;
    return false;
  }
  return ended.code === 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
