#!/usr/bin/env node
/**
 * The `connector` command. Each subcommand lives in `commands/`; this file only checks the Node.js version and
 * dispatches.
 * @module
 */
// The only static imports: they load on any Node.js. Commands are imported once the version is known to be supported,
// because a static import would load undici and `node:sqlite` before the first line of this file runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unsupportedNodeMessage } from '../internal/node-version.js';
import { packageRoot } from '../internal/package-root.js';

const USAGE = `Usage: connector <command> [options]

Commands:
  create      Create a connector project from a template (what \`npx create-connector\` runs)
  run         Run a connector as a worker, configured by its environment (docs/worker.md of the kit)
  dev         The local loop: a reference backend and the project's connector, restarted on every change
  backend     Run the reference backend (the Approval Service, v1 and v2) as a server
  keys        Generate the key ring of a read-only key store (keys generate)
  verify      Run the conformance battery against the project's connector and its source driver
  check-node  Exit 0 on a Node.js the kit runs on; otherwise say which one this is and which it needs

Options:
  -v, --version  print the kit's version
  -h, --help     show this help

Run \`connector <command> --help\` for the options of a command. Exit codes, of every command: 0 done, 1 failed,
2 refused (a wrong command line, variable or file: nothing was done). On a Node.js older than the kit needs, every
command prints which one it found and which it needs, and exits 1.`;

type Command = (argv: readonly string[]) => Promise<number>;

// Each loaded only when it runs: a command's imports are its own.
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  run: async () => (await import('./commands/run.js')).runRunCommand,
  dev: async () => (await import('./commands/dev.js')).runDevCommand,
  backend: async () => (await import('./commands/backend.js')).runBackendCommand,
  keys: async () => (await import('./commands/keys.js')).runKeysCommand,
  verify: async () => (await import('./commands/verify.js')).runVerifyCommand,
  create: async () => (await import('./commands/create.js')).runCreateCommand,
};

async function main(argv: readonly string[]): Promise<number> {
  const unsupported = unsupportedNodeMessage();
  if (unsupported !== undefined) {
    console.error(unsupported);
    return 1;
  }
  stopWithParent();
  const [command, ...rest] = argv;
  if (command !== undefined && Object.hasOwn(COMMANDS, command)) return (await COMMANDS[command]!())(rest);
  switch (command) {
    // The Node.js check above is all there is to it: the generated projects' `pretest` and `prestart` scripts run it,
    // so that an old Node gets this one message rather than a crash inside a tool.
    case 'check-node':
      if (rest.length > 0) {
        console.error(`connector check-node takes no arguments, got \`${rest[0]}\`\n\n${USAGE}`);
        return 2;
      }
      return 0;
    case '-v':
    case '--version':
      console.log(kitVersion());
      return 0;
    // The exit codes of every command (`exit-codes.ts`, not imported here: it loads the kit): 2 for a command line
    // that is refused.
    case '-h':
    case '--help':
      console.log(USAGE);
      return 0;
    case undefined:
      console.error(USAGE);
      return 2;
    default:
      console.error(`Unknown command: ${command}\n\n${USAGE}`);
      return 2;
  }
}

/** The kit's version, from its package.json. */
function kitVersion(): string {
  const root = packageRoot();
  if (root === undefined) throw new Error('the package.json of approval-connector-kit was not found');
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * Started by another process with an IPC channel (`connector dev` starts its workers so), this one stops, as on
 * SIGTERM, when that parent goes: a worker never outlives the loop that ran it, however the loop ended.
 */
function stopWithParent(): void {
  if (process.channel === undefined) return;
  // The channel is only a sign of the parent's life: it keeps nothing running.
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

process.exitCode = await main(process.argv.slice(2));
