import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs the fixtures of `folder` (relative to the repository, with a vitest.config.ts of its own) in a vitest of
 * their own, with this process's environment but for this run's vitest variables, plus `env`; resolves with its exit
 * code.
 */
export async function runVitestOfItsOwn(
  folder: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<number | null> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')),
  );
  const child = spawn(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', '--root', folder, ...args],
    {
      cwd: root,
      env: { ...inherited, ...env },
      stdio: 'ignore',
    },
  );
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}
