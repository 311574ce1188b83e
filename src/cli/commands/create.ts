import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { CommandLine } from '../../internal/command-line.js';
import { nonEmptyString } from '../../internal/options.js';
import { packageRoot } from '../../internal/package-root.js';
import { readCommandLine } from '../command-line.js';
import { terminalPrompter } from '../create/prompts.js';
import { type KitPackage, packageNameProblem, scaffold, targetProblem } from '../create/scaffold.js';
import { DEFAULT_TEMPLATE, listTemplates, type Template } from '../create/templates.js';
import { EXIT_CODES } from '../exit-codes.js';

/** Where `connector create` reads, writes and runs; the process's own by default, stand-ins in tests. */
export interface CreateCommandIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const PACKAGE_MANAGERS = ['npm', 'pnpm', 'yarn', 'bun'] as const;
type PackageManager = (typeof PACKAGE_MANAGERS)[number];
const DEFAULT_FOLDER = 'my-connector';
const SUBJECT = 'options of connector create';

function usage(templates: readonly Template[]): string {
  const width = Math.max(...templates.map((template) => template.name.length));
  const list = templates.map(
    (template) => `                           ${template.name.padEnd(width)}  ${template.description}`,
  );
  return `Usage: connector create [folder] [options]

Creates a connector project in a new (or empty) folder, ${DEFAULT_FOLDER} by default: package.json, tsconfig,
src/connector.ts, src/main.ts, a test, a Dockerfile, .env.example and a README. On a terminal it asks for what the
flags do not say; otherwise, or with --yes, it takes the defaults. Also run as \`npm create connector@latest\` and
\`npx create-connector\`.

Options:
  --template NAME          the template (default ${DEFAULT_TEMPLATE}):
${list.join('\n')}
  --package-manager NAME   npm, pnpm, yarn or bun (default: the one that runs this command, else npm)
  --no-install             do not install the dependencies
  --no-git                 do not initialise a git repository
  --kit-tarball FILE       depend on the kit packed in this tarball (npm pack), not on its published version: to
                           try a kit before its release (npm run try, in the kit's repository)
  -y, --yes                ask nothing: take the defaults for what the flags do not say
  -h, --help               show this help

Exit codes: 0 when the project was created; 2 for bad input or a refused folder (nothing is written then); 1 when
cancelled (nothing is written then either), or when installing the dependencies failed (the project stays).`;
}

/** What the flags and the questions chose. */
interface Choices {
  folder: string;
  template: Template;
  packageManager: PackageManager;
  install: boolean;
  git: boolean;
}

function createCommandLine(templates: readonly Template[]) {
  const names = templates.map((template) => template.name) as [string, ...string[]];
  return new CommandLine({
    subject: SUBJECT,
    usage: usage(templates),
    arguments: { folder: nonEmptyString().optional() },
    extraArgument: 'give one folder',
    flags: {
      template: { type: 'string', schema: z.enum(names).optional() },
      'package-manager': { type: 'string', schema: z.enum(PACKAGE_MANAGERS).optional() },
      'no-install': { type: 'boolean', schema: z.boolean().default(false) },
      'no-git': { type: 'boolean', schema: z.boolean().default(false) },
      'kit-tarball': { type: 'string', schema: nonEmptyString().optional() },
      yes: { type: 'boolean', short: 'y', schema: z.boolean().default(false) },
    },
  });
}

type CreateOptions = Exclude<ReturnType<ReturnType<typeof createCommandLine>['parse']>, 'help'>;

/** `connector create`: creates a project from a template, and resolves with the exit code. */
export async function runCreateCommand(
  argv: readonly string[],
  io: CreateCommandIo = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  },
): Promise<number> {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const complain = (line: string) => io.stderr.write(`${line}\n`);
  const root = packageRoot();
  if (root === undefined) {
    complain('The templates of approval-connector-kit were not found: install the kit again.');
    return EXIT_CODES.failed;
  }
  const templatesFolder = join(root, 'templates');
  const templates = listTemplates(templatesFolder);
  const options = readCommandLine(createCommandLine(templates), argv, { io });
  if (typeof options === 'number') return options;

  let choices: Choices;
  try {
    choices = await choose(options, templates, io);
  } catch (error) {
    if ((error as Error).name === 'AbortError') {
      complain('Cancelled: nothing was created.');
      return EXIT_CODES.failed;
    }
    complain((error as Error).message);
    return error instanceof ValidationError ? EXIT_CODES.refused : EXIT_CODES.failed;
  }

  const { template, packageManager, install, git } = choices;
  const target = resolve(io.cwd, choices.folder);
  try {
    create(target, template, templatesFolder, root, resolveTarball(options['--kit-tarball'], io.cwd));
  } catch (error) {
    complain((error as Error).message);
    return error instanceof ValidationError ? EXIT_CODES.refused : EXIT_CODES.failed;
  }
  say(`Created ${target} from the ${template.name} template.`);

  if (git) await initialiseGit(target, io, say);
  if (install) {
    say(`Installing the dependencies with ${packageManager}…`);
    const code = await runChild(packageManager, ['install'], target, io);
    if (code !== 0) {
      complain(
        `${packageManager} install failed (${code === 'missing' ? `${packageManager} was not found` : `exit code ${code}`}); the project is there: install its dependencies yourself.`,
      );
      return EXIT_CODES.failed;
    }
  }
  say(nextSteps(relative(io.cwd, target) || '.', choices));
  return EXIT_CODES.done;
}

/** The kit's tarball `--kit-tarball` names, as an absolute path; refused when it does not exist. */
function resolveTarball(tarball: string | undefined, cwd: string): string | undefined {
  if (tarball === undefined) return undefined;
  const path = resolve(cwd, tarball);
  if (existsSync(path)) return path;
  throw new ValidationError(SUBJECT, [
    { path: ['--kit-tarball'], code: 'custom', message: `${tarball} does not exist: give the kit's tarball` },
  ]);
}

/** Writes the project's files from the template; its package.json depends on the tarball, when one is given. */
function create(
  target: string,
  template: Template,
  templatesFolder: string,
  root: string,
  tarball?: string,
): void {
  scaffold({
    target,
    name: basename(target),
    template,
    templatesFolder,
    kit: readKitPackage(root),
    // An absolute path: the project's package.json is read from its own folder.
    ...(tarball === undefined ? {} : { kitSpec: `file:${tarball}` }),
  });
}

/**
 * What the flags say, and on a terminal (unless `--yes`) the answers to what they do not; otherwise the defaults.
 * A folder that cannot be used is refused before anything else is asked.
 */
async function choose(
  options: CreateOptions,
  templates: readonly Template[],
  io: CreateCommandIo,
): Promise<Choices> {
  const folderProblem = (folder: string) => {
    const target = resolve(io.cwd, folder);
    return packageNameProblem(basename(target)) ?? targetProblem(target);
  };
  const interactive = io.stdin.isTTY === true && !options['--yes'];
  const prompter = interactive ? terminalPrompter(io.stdin, io.stdout) : undefined;
  try {
    const folder =
      options.folder ??
      (await prompter?.text('Where should the project go?', {
        initial: DEFAULT_FOLDER,
        check: folderProblem,
      })) ??
      DEFAULT_FOLDER;
    const problem = folderProblem(folder);
    if (problem !== undefined)
      throw new ValidationError(SUBJECT, [{ path: ['folder'], code: 'custom', message: problem }]);
    const templateName =
      options['--template'] ??
      (await prompter?.select(
        'Which template?',
        templates.map((template) => ({ value: template.name, hint: template.description })),
        DEFAULT_TEMPLATE,
      )) ??
      DEFAULT_TEMPLATE;
    const packageManager = options['--package-manager'] ?? detectPackageManager(io.env);
    const install =
      !options['--no-install'] &&
      ((await prompter?.confirm(`Install the dependencies with ${packageManager}?`, true)) ?? true);
    const git =
      !options['--no-git'] && ((await prompter?.confirm('Initialise a git repository?', true)) ?? true);
    const template = templates.find((candidate) => candidate.name === templateName)!;
    return { folder, template, packageManager, install, git };
  } finally {
    prompter?.close();
  }
}

/** The commands to run next, from the folder `create` ran in (`cd` is the project's folder from there). */
function nextSteps(cd: string, { packageManager, install }: Choices): string {
  // `bun test` is bun's own test runner, not the project's script.
  const run = (script: string) =>
    packageManager === 'bun' || (packageManager === 'npm' && script !== 'test')
      ? `${packageManager} run ${script}`
      : `${packageManager} ${script}`;
  const steps: Array<[string, string?]> = [
    ...(cd === '.' ? [] : [[`cd ${cd.includes(' ') ? JSON.stringify(cd) : cd}`] as [string]]),
    ...(install ? [] : [[`${packageManager} install`] as [string]]),
    [run('test'), 'type-check, then run the tests'],
    [run('dev'), 'develop: the connector against a local backend and its console, restarted on changes'],
  ];
  const width = Math.max(...steps.map(([command]) => command.length));
  return [
    '',
    'Next:',
    ...steps.map(
      ([command, why]) => `  ${why === undefined ? command : `${command.padEnd(width)}  # ${why}`}`,
    ),
    '',
    'Its README.md says how to run it, in a container too.',
  ].join('\n');
}

function readKitPackage(root: string): KitPackage {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as KitPackage;
}

// `npm create`, `pnpm create`, `yarn create` and `bunx` say who they are in this variable: `pnpm/9.1.0 npm/? node/…`.
function detectPackageManager(env: NodeJS.ProcessEnv): PackageManager {
  const name = env.npm_config_user_agent?.split('/')[0];
  return PACKAGE_MANAGERS.find((manager) => manager === name) ?? 'npm';
}

async function initialiseGit(
  target: string,
  io: CreateCommandIo,
  say: (line: string) => void,
): Promise<void> {
  // A project created inside another repository (a monorepo) belongs to that one.
  const inside = await runChild('git', ['rev-parse', '--is-inside-work-tree'], target, io, { quiet: true });
  if (inside === 'missing') {
    say('git was not found: no repository initialised.');
    return;
  }
  if (inside === 0) {
    say('Inside a git repository already: no repository initialised.');
    return;
  }
  if ((await runChild('git', ['init', '--quiet'], target, io)) === 0) say('Initialised a git repository.');
}

/** Runs a command in `cwd` with the command's output going to `io`; answers its exit code, or `'missing'`. */
function runChild(
  command: string,
  args: readonly string[],
  cwd: string,
  io: CreateCommandIo,
  { quiet = false } = {},
): Promise<number | 'missing'> {
  return new Promise((resolveCode) => {
    const child = spawn(command, args, {
      cwd,
      env: io.env,
      stdio: ['ignore', quiet ? 'ignore' : 'pipe', quiet ? 'ignore' : 'pipe'],
      // npm, pnpm and yarn are `.cmd` scripts on Windows, which only a shell runs.
      shell: process.platform === 'win32',
    });
    child.stdout?.pipe(io.stdout, { end: false });
    child.stderr?.pipe(io.stderr, { end: false });
    child.on('error', (error: NodeJS.ErrnoException) => {
      resolveCode(error.code === 'ENOENT' ? 'missing' : 1);
    });
    child.on('close', (code) => resolveCode(code ?? 1));
  });
}
