#!/usr/bin/env node
/**
 * The `connector` command. Each subcommand lives in `commands/`; this file only checks the Node.js version and
 * dispatches.
 * @module
 */
// The only static import: it loads on any Node.js. Commands are imported once the version is known to be supported,
// because a static import would load undici and `node:sqlite` before the first line of this file runs.
import { unsupportedNodeMessage } from '../internal/node-version.js';

const USAGE = `Usage: connector <command> [options]

Commands:
  create    Create a connector project from a template (what \`npx create-connector\` runs)
  run       Run a connector as a worker, configured by its environment (see docs/worker.md)
  dev       The local loop: a reference backend and the project's connector, restarted on every change
  backend   Run the reference backend (the Approval Service, v1 and v2) as a server
  keys      Generate the key ring of a read-only key store (keys generate)

Run \`connector <command> --help\` for the options of a command.`;

async function main(argv: readonly string[]): Promise<number> {
  const unsupported = unsupportedNodeMessage();
  if (unsupported !== undefined) {
    console.error(unsupported);
    return 1;
  }
  stopWithParent();
  const [command, ...rest] = argv;
  switch (command) {
    case 'run': {
      const { runRunCommand } = await import('./commands/run.js');
      return runRunCommand(rest);
    }
    case 'dev': {
      const { runDevCommand } = await import('./commands/dev.js');
      return runDevCommand(rest);
    }
    case 'backend': {
      const { runBackendCommand } = await import('./commands/backend.js');
      return runBackendCommand(rest);
    }
    case 'keys': {
      const { runKeysCommand } = await import('./commands/keys.js');
      return runKeysCommand(rest);
    }
    case 'create': {
      const { runCreateCommand } = await import('./commands/create.js');
      return runCreateCommand(rest);
    }
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
