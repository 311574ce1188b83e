/**
 * For a program's entry file (a connector project's `src/main.ts`), imported before anything else: on a Node.js the
 * kit does not run on, it prints which one this is, which one the kit needs and where to get it, on one line of
 * stderr, and exits with 1. On a supported Node.js it does nothing.
 *
 * The kit's other entry points throw an `UnsupportedNodeError` on import instead (see `node-guard.ts`), which
 * a program may catch; left uncaught, Node.js prints it with its stack. A program's entry has nothing to catch it
 * with, since its static imports run before its first line, so this module ends the process itself. ES modules run
 * in the order they are imported: imported first, it runs before any module of the kit or its dependencies.
 * @module
 */
import { unsupportedNodeMessage } from './internal/node-version.js';

const problem = unsupportedNodeMessage();
if (problem !== undefined) {
  // biome-ignore lint/suspicious/noConsole: the message is this module's whole point, printed before any logger loads.
  console.error(problem);
  process.exit(1);
}
