import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Connector } from '../../connector/index.js';
import { ValidationError } from '../../errors.js';
import { type ConnectorFactory, runWorker } from '../../worker/index.js';
import { WORKER_COMMAND_LINE, WORKER_USAGE } from '../../worker/internal.js';
import { EXIT_CODES } from '../exit-codes.js';
import { DEFAULT_MODULE } from './default-module.js';

/** What `connector run --help` prints, and a refusal of its configuration ends with. */
export const RUN_USAGE = `Usage: connector run [module] [--role sync|tasks|all]

Runs the connector that the module exports as a long-lived worker, until SIGTERM or SIGINT. The module (default:
${DEFAULT_MODULE}) has a default export that is the connector, or a function that builds it, sync or async:
  export default ({ env, logger, role }) => new MyConnector(new SourceClient(env.SOURCE_URL));

${WORKER_USAGE}`;

/** `connector run [module]`: the worker. Resolves with its exit code. */
export async function runRunCommand(argv: readonly string[]): Promise<number> {
  // The worker checks its own flags; the first word that is no flag nor a flag's value is the module.
  const { help, words } = WORKER_COMMAND_LINE.scan(argv);
  if (help) {
    console.log(RUN_USAGE);
    return EXIT_CODES.done;
  }
  const [module] = words;
  const rest = module === undefined ? [...argv] : argv.filter((_, index) => index !== module.index);
  const path = resolve(module?.value ?? DEFAULT_MODULE);
  return runWorker(
    async (context) => {
      const exported = await importConnectorModule(path);
      // The worker checks that what it gets is a connector (its `tasks` and `source`).
      return typeof exported === 'function' ? exported(context) : (exported as Connector<object>);
    },
    { argv: rest, usage: RUN_USAGE },
  );
}

/**
 * What a connector module exports by default: the connector or a function that builds it. A `ValidationError` names
 * what is wrong with the module; the worker checks that what it gets is a connector.
 */
async function importConnectorModule(path: string): Promise<ConnectorFactory | object> {
  const refuse = (message: string) =>
    new ValidationError('connector module', [{ code: 'custom', path: [], message }]);
  if (!existsSync(path)) {
    throw refuse(`${path} does not exist: give the module's path, \`connector run dist/connector.js\``);
  }
  const exported: unknown = ((await import(pathToFileURL(path).href)) as { default?: unknown }).default;
  const example = 'export default new MyConnector(…), or ({ env }) => new MyConnector(…)';
  if (exported === undefined) throw refuse(`${path} has no default export: ${example}`);
  if (typeof exported !== 'function' && (typeof exported !== 'object' || exported === null)) {
    throw refuse(
      `The default export of ${path} is neither a connector nor a function that builds one: ${example}`,
    );
  }
  // A class is a function too, but one that cannot be called without `new`.
  if (typeof exported === 'function' && /^class\b/.test(Function.prototype.toString.call(exported))) {
    throw refuse(
      `The default export of ${path} is a class; export the connector, or a function that builds one: ${example}`,
    );
  }
  return exported as ConnectorFactory | object;
}
