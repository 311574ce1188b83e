#!/usr/bin/env node
/**
 * The `connector` command. Each subcommand lives in `commands/`; this file only dispatches.
 * @module
 */
import { runBackendCommand } from './commands/backend.js';

const USAGE = `Usage: connector <command> [options]

Commands:
  backend   Run the reference backend (the Approval Service, v1 and v2) as a server

Run \`connector <command> --help\` for the options of a command.`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'backend':
      return runBackendCommand(rest);
    case undefined:
    case '-h':
    case '--help':
      console.log(USAGE);
      return command === undefined ? 1 : 0;
    default:
      console.error(`Unknown command: ${command}\n\n${USAGE}`);
      return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
