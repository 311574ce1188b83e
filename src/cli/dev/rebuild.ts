/**
 * What makes a connector's new code run in the local loop: its sources watched, and the project's own `build`
 * script run once they are quiet.
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync, type FSWatcher, readFileSync, watch } from 'node:fs';
import { join } from 'node:path';

/** How a build ended: passed, or failed with what it printed (the compiler's errors). */
export type BuildOutcome = { ok: true } | { ok: false; output: string };

/** Whether the project's package.json has a `build` script; without one, the module is run as it is. */
export function hasBuildScript(project: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      scripts?: Record<string, unknown>;
    };
    return typeof manifest.scripts?.build === 'string';
  } catch {
    return false;
  }
}

/**
 * Runs the project's `build` script with npm (`npm run build`, `tsc -p tsconfig.build.json` in a generated project)
 * and collects what it prints, the compiler's errors included. `signal` ends it (SIGTERM) when the loop closes.
 */
export function buildProject(
  project: string,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<BuildOutcome> {
  return new Promise((resolve) => {
    // --silent: the compiler's own lines, without npm's banner and its error report around them.
    const child = spawn('npm', ['run', 'build', '--silent'], {
      cwd: project,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(signal === undefined ? {} : { signal }),
      // npm is a `.cmd` script on Windows, which only a shell runs.
      shell: process.platform === 'win32',
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error) => resolve({ ok: false, output: `npm could not be run: ${error.message}` }));
    child.on('close', (code, signal) => {
      if (code === 0) resolve({ ok: true });
      else resolve({ ok: false, output: output.trimEnd() || `npm run build ended with ${code ?? signal}` });
    });
  });
}

/** A function that runs once calls to it have stopped for `quietMs`; `cancel()` drops a call still waiting. */
export function debounce(run: () => void, quietMs: number): { call(): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    call: () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timer = undefined;
        run();
      }, quietMs);
    },
    cancel: () => clearTimeout(timer),
  };
}

/** How long a folder is quiet before its changes count: an editor's save, or a `git checkout`, is one change. */
export const QUIET_MS = 200;

/**
 * Watches `folder` and everything under it, and calls `onChange` once it has been quiet for {@link QUIET_MS} after a
 * change. `undefined` when the folder does not exist, or cannot be watched (the system's limit of watches reached).
 */
export function watchFolder(folder: string, onChange: () => void): { close(): void } | undefined {
  if (!existsSync(folder)) return undefined;
  const changed = debounce(onChange, QUIET_MS);
  let watcher: FSWatcher;
  try {
    watcher = watch(folder, { recursive: true }, () => changed.call());
  } catch {
    return undefined;
  }
  // A folder that goes away (renamed, deleted) ends the watch; the loop keeps running what it has.
  watcher.on('error', () => watcher.close());
  return {
    close: () => {
      changed.cancel();
      watcher.close();
    },
  };
}
