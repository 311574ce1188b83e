import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { ValidationError, type ValidationIssue } from '../../errors.js';
import { BASE_FOLDER, type PackageAdditions, TEMPLATE_FILE, type Template } from './templates.js';

/** What the scaffolder reads of the kit's own package.json. */
export interface KitPackage {
  name: string;
  version: string;
  engines: { node: string };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** What {@link scaffold} creates. */
export interface ScaffoldOptions {
  /** The new project's folder: one that does not exist yet, or an empty one. */
  target: string;
  /** The project's package name. */
  name: string;
  template: Template;
  /** The `templates/` folder, which holds the base every template is laid over. */
  templatesFolder: string;
  /** The kit the project is created with: the project depends on it, and on what it is built and tested with. */
  kit: KitPackage;
  /**
   * What the project's dependency on the kit says, in place of `^<version>`: `file:<tarball>`, to try a kit not
   * published yet.
   * @default `^` and the kit's version
   */
  kitSpec?: string;
}

// npm leaves every `.gitignore` and `.npmrc` out of a published package, so templates hold them under these names.
const DOTFILES = new Map([
  ['gitignore', '.gitignore'],
  ['npmrc', '.npmrc'],
]);
// What an example's folder may hold that is not the project's: what the repository installed or built in it.
const NOT_COPIED = new Set(['node_modules', 'dist']);
// In this order, the kit's own range of a package is looked up: what it runs with, then what it is built with.
const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'devDependencies'] as const;
const SUBJECT = 'options of connector create';

/** What keeps `target` from being a new project's folder, in words; `undefined` when nothing does. */
export function targetProblem(target: string): string | undefined {
  if (!existsSync(target)) return undefined;
  if (!statSync(target).isDirectory()) return `\`${target}\` is a file, not a folder`;
  const entries = readdirSync(target);
  if (entries.length === 0) return undefined;
  const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? ', …' : '');
  return `\`${target}\` is not empty (it holds ${shown}): choose a new folder, or an empty one`;
}

/** Why `name` cannot name an npm package, in words; `undefined` when it can. */
export function packageNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > 214) return 'a package name is 1 to 214 characters long';
  if (!/^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/.test(name)) {
    return `\`${name}\` cannot name an npm package: use lowercase letters, digits, and - . _ ~ (not first)`;
  }
  return undefined;
}

/**
 * Creates a project from a template: the base's files, then the template's folders' over them (its example's, then
 * its own: a file of the same path replaces the one before; `node_modules` and `dist` are skipped), with `gitignore` and `npmrc` written as `.gitignore` and `.npmrc`, `<%= name %>` replaced by the project's name, and
 * in package.json the name set, what the template adds merged in, and every `*` range (a dependency's, or `engines.node`) replaced by the kit's own: the
 * kit itself at its version, any other package at the range the kit's package.json gives it (as a dependency, a peer
 * dependency, else a dev dependency). Everything is checked before the first file is written. Answers the files
 * written, relative to `target`.
 */
export function scaffold({
  target,
  name,
  template,
  templatesFolder,
  kit,
  kitSpec,
}: ScaffoldOptions): string[] {
  const issues = [targetProblem(target), packageNameProblem(name)]
    .filter((problem) => problem !== undefined)
    .map((message): ValidationIssue => ({ path: ['folder'], code: 'custom', message }));
  if (issues.length > 0) throw new ValidationError(SUBJECT, issues);

  const sources = new Map<string, string>();
  for (const folder of [join(templatesFolder, BASE_FOLDER), ...template.folders]) {
    for (const file of filesUnder(folder)) {
      const path = relative(folder, file);
      if (path !== TEMPLATE_FILE) sources.set(path, file);
    }
  }
  const files = new Map<string, string>();
  for (const [path, source] of sources) {
    const text = render(readFileSync(source, 'utf8'), { name }, `${template.name}/${path}`);
    const dotfile = DOTFILES.get(basename(path));
    const written = dotfile === undefined ? path : join(dirname(path), dotfile);
    files.set(
      written,
      written === 'package.json' ? projectPackage(text, name, kit, template.package, kitSpec) : text,
    );
  }

  for (const [path, text] of files) {
    mkdirSync(dirname(join(target, path)), { recursive: true });
    writeFileSync(join(target, path), text);
  }
  return [...files.keys()].sort();
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => !NOT_COPIED.has(entry.name))
    .flatMap((entry) => {
      const path = join(entry.parentPath, entry.name);
      if (entry.isDirectory()) return filesUnder(path);
      return entry.isFile() ? [path] : [];
    });
}

function render(text: string, variables: Record<string, string>, file: string): string {
  return text.replace(/<%=\s*([\w.-]*)\s*%>/g, (_, variable: string) => {
    const value = variables[variable];
    if (value === undefined) {
      throw new ValidationError(`template file ${file}`, [
        {
          path: [],
          code: 'custom',
          message: `\`<%= ${variable} %>\` is not a known variable (the known ones: ${Object.keys(variables).join(', ')})`,
        },
      ]);
    }
    return value;
  });
}

type PackageJson = Record<string, unknown> & {
  engines?: Record<string, string>;
} & Partial<Record<(typeof DEPENDENCY_FIELDS)[number], Record<string, string>>>;

function projectPackage(
  text: string,
  name: string,
  kit: KitPackage,
  additions: PackageAdditions,
  kitSpec: string | undefined,
): string {
  const project = JSON.parse(text) as PackageJson;
  project.name = name;
  for (const [field, entries] of Object.entries(additions)) {
    project[field] = { ...(project[field] as Record<string, string> | undefined), ...entries };
  }
  if (project.engines?.node === '*') project.engines.node = kit.engines.node;
  for (const field of DEPENDENCY_FIELDS) {
    for (const [dependency, range] of Object.entries(project[field] ?? {})) {
      if (range !== '*') continue;
      project[field]![dependency] =
        dependency === kit.name && kitSpec !== undefined ? kitSpec : kitRange(dependency, kit);
    }
  }
  return `${JSON.stringify(project, null, 2)}\n`;
}

function kitRange(dependency: string, kit: KitPackage): string {
  if (dependency === kit.name) return `^${kit.version}`;
  for (const field of DEPENDENCY_FIELDS) {
    const range = kit[field]?.[dependency];
    if (range !== undefined) return range;
  }
  throw new ValidationError('template package.json', [
    {
      path: [dependency],
      code: 'custom',
      message: `asks for the kit's range of \`${dependency}\` (\`*\`), but the kit does not use that package`,
    },
  ]);
}
