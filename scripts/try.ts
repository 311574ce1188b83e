/**
 * `npm run try -- <folder> [connector create options]`: a connector project made from the packages as this clone
 * would publish them, before their release. Packs the kit and create-connector (`npm pack`, the kit's `prepack`
 * building it) into `.connector/try/` (replaced at each run), installs both tarballs into a temporary folder, runs
 * create-connector from there, as `npx create-connector` would, with `--kit-tarball`: the project depends on the
 * kit's tarball, and its install (unless `--no-install`) installs the kit from it. The project is made in the folder
 * `npm run try` was run in.
 *
 *     npm run try -- ../my-connector [--template NAME] [--no-install] [--no-git] [--yes]
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKED = join(ROOT, '.connector', 'try');
// Only npm's errors: the kit's own install is not the user's concern, the project's is printed in full.
const QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

/** Runs a command to its end, its output passed on (`quiet`: its stdout kept back); rejects when it fails. */
function run(command: string, args: readonly string[], cwd: string, { quiet = false } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ['inherit', quiet ? 'ignore' : 'inherit', 'inherit'],
      shell: process.platform === 'win32',
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}`));
    });
  });
}

/** Packs the package of `folder` into a folder of its own under `.connector/try/`; answers the tarball's path. */
async function pack(folder: string, name: string): Promise<string> {
  const destination = join(PACKED, name);
  mkdirSync(destination, { recursive: true });
  await run('npm', ['pack', '--pack-destination', destination, '--loglevel=error'], folder, { quiet: true });
  const [tarball] = readdirSync(destination).filter((file) => file.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack of ${name} wrote no tarball`);
  return join(destination, tarball);
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    console.log(`Usage: npm run try -- <folder> [connector create options]

Packs the kit and create-connector as this clone would publish them, and creates a connector project in <folder>
(relative to where npm run try runs) with create-connector from its tarball, the project depending on the kit's
tarball; its install, unless --no-install, installs the kit from it. The tarballs are kept in .connector/try/.`);
    return argv.length === 0 ? 2 : 0;
  }
  // Where the user ran `npm run try`: npm runs the script in the repository's root, and says so in INIT_CWD.
  const cwd = process.env.INIT_CWD ?? process.cwd();
  rmSync(PACKED, { recursive: true, force: true });
  console.log('Packing the kit (building it first) and create-connector…');
  const kit = await pack(ROOT, 'kit');
  const createConnector = await pack(join(ROOT, 'packages', 'create-connector'), 'create-connector');
  console.log(`Packed ${kit}\n   and ${createConnector}`);

  const tools = mkdtempSync(join(tmpdir(), 'approval-connector-kit-try-'));
  try {
    writeFileSync(join(tools, 'package.json'), JSON.stringify({ name: 'try', private: true }));
    console.log('Installing create-connector and the kit from their tarballs…');
    await run('npm', ['install', kit, createConnector, ...QUIET], tools, { quiet: true });
    const bin = join(tools, 'node_modules', 'create-connector', 'index.js');
    await run(process.execPath, [bin, ...argv, '--kit-tarball', kit], cwd);
    return 0;
  } finally {
    rmSync(tools, { recursive: true, force: true });
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
}
