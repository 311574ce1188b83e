import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { ConformanceSubject } from '../../conformance/index.js';
import { formatReport, runConformance } from '../../conformance/index.js';
import { CommandLine } from '../../internal/command-line.js';
import { readCommandLine } from '../command-line.js';
import { EXIT_CODES } from '../exit-codes.js';

/** The module `connector verify` loads when it is given none: the build of the project's `src/conformance.ts`. */
export const DEFAULT_VERIFY_MODULE = 'dist/conformance.js';

const USAGE = `Usage: connector verify [module] [--seed <n>] [--runs <n>] [--only <check>]... [--skip <check>]...

Runs the conformance battery (docs/conformance.md of the kit) against the connector and source driver that the
module exports, prints the report, and exits 0 when every check passed or was skipped, 1 when a check failed, and
2 when a check could not run (the driver threw) or the module or an option is refused. The module (default:
${DEFAULT_VERIFY_MODULE}, the build of src/conformance.ts) exports \`conformance\`:
  export const conformance = { driver: () => new MyDriver(), connector: (driver) => new MyConnector(driver.source) };
A .ts module is loaded through tsx when the project has it.

Options:
  --seed <n>     the seed to draw from (default: random, printed in the report)
  --runs <n>     sequences the generated check runs (default 10)
  --only <name>  run only the checks whose name is or starts with this (repeatable: sync., tasks.failures)
  --skip <name>  leave those checks out (repeatable)
  -h, --help     show this help`;

const commandLine = new CommandLine({
  subject: 'options of connector verify',
  usage: USAGE,
  arguments: { module: z.string().default(DEFAULT_VERIFY_MODULE) },
  extraArgument: 'connector verify takes one module',
  flags: {
    seed: { type: 'string', schema: z.string().optional() },
    runs: { type: 'string', schema: z.string().optional() },
    only: { type: 'string', multiple: true, schema: z.array(z.string()).optional() },
    skip: { type: 'string', multiple: true, schema: z.array(z.string()).optional() },
  },
});

/** `connector verify [module]`: the conformance battery. Resolves with its exit code. */
export async function runVerifyCommand(argv: readonly string[]): Promise<number> {
  const options = readCommandLine(commandLine, argv, {
    check: (options) => ({
      ...options,
      seed: integerOption(options['--seed'], '--seed', 0),
      numRuns: integerOption(options['--runs'], '--runs', 1),
    }),
  });
  if (typeof options === 'number') return options;
  const { seed, numRuns, '--only': only, '--skip': skip } = options;
  const path = resolve(options.module);
  const subject = await loadSubject(path);
  if (typeof subject === 'string') {
    console.error(subject);
    return EXIT_CODES.refused;
  }
  const report = await runConformance(subject, {
    ...(seed === undefined ? {} : { seed }),
    ...(numRuns === undefined ? {} : { numRuns }),
    ...(only === undefined ? {} : { only }),
    ...(skip === undefined ? {} : { skip }),
  });
  console.log(formatReport(report));
  // A check that could not run says nothing of the connector: the driver (or the module) is what to fix first.
  if (report.checks.some((check) => check.status === 'error')) return EXIT_CODES.refused;
  return report.passed ? EXIT_CODES.done : EXIT_CODES.failed;
}

/** The option as an integer from `min` up, `undefined` when absent; refused when it is none. */
function integerOption(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (/^\d+$/.test(value) && Number.isSafeInteger(number) && number >= min) return number;
  throw commandLine.refuse(`Expected ${name} to be an integer from ${min} up, got \`${value}\``);
}

/** The subject the module exports as `conformance` (or by default), or the message saying what is wrong. */
async function loadSubject(path: string): Promise<ConformanceSubject | string> {
  if (!existsSync(path)) {
    return `${path} does not exist: give the module that exports \`conformance\` (build the project first for ${DEFAULT_VERIFY_MODULE})`;
  }
  if (/\.[cm]?ts$/.test(path)) {
    const loaded = await loadTsx();
    if (loaded !== undefined) return loaded;
  }
  const module = (await import(pathToFileURL(path).href)) as { conformance?: unknown; default?: unknown };
  const subject = module.conformance ?? module.default;
  const shape = '{ driver: () => SourceDriver, connector: (driver) => Connector }';
  if (
    typeof subject !== 'object' ||
    subject === null ||
    typeof (subject as ConformanceSubject).driver !== 'function' ||
    typeof (subject as ConformanceSubject).connector !== 'function'
  ) {
    return `${path} exports no \`conformance\` of the shape ${shape}`;
  }
  return subject as ConformanceSubject;
}

/** Lets `import()` load TypeScript through the project's tsx; the message when it cannot. */
async function loadTsx(): Promise<string | undefined> {
  // Already loaded with `node --import tsx`.
  if (process.execArgv.some((argument) => argument.includes('tsx'))) return undefined;
  try {
    const api = createRequire(join(process.cwd(), 'package.json')).resolve('tsx/esm/api');
    const { register } = (await import(pathToFileURL(api).href)) as { register: () => unknown };
    register();
    return undefined;
  } catch {
    return 'A .ts module needs tsx in the project (npm install -D tsx); or build the project and give the .js module';
  }
}
