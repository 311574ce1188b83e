import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { parseOptions } from '../../internal/options.js';

/** The template a new project gets when none is chosen. */
export const DEFAULT_TEMPLATE = 'incremental';

/** The folder every template is laid over: what all generated projects share. */
export const BASE_FOLDER = '_base';

/** What describes a template, in its folder's `template.json` (not copied). */
export const TEMPLATE_FILE = 'template.json';

/** Where, beside `templates/`, the examples a template may name live. */
export const EXAMPLES_FOLDER = 'examples';

const ranges = z.record(z.string().min(1), z.string().min(1));

const templateFileSchema = z.strictObject({
  /** One line, shown beside the template's name in the prompt and in `--help`. */
  description: z.string().min(1),
  /**
   * An example of the kit (a folder of `examples/`) whose files the project gets, laid over the base and under the
   * template's own: an example of the repository is then also a template, with no second copy to keep in step.
   */
  example: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'names a folder of examples/: lowercase letters, digits and -')
    .optional(),
  /** Added to the base's package.json; a `*` range becomes the kit's own, as in the base. */
  package: z
    .strictObject({
      scripts: ranges.optional(),
      dependencies: ranges.optional(),
      devDependencies: ranges.optional(),
      /** The packages whose install scripts npm may run (npm's `allowScripts`), such as tsx's esbuild. */
      allowScripts: z.record(z.string().min(1), z.boolean()).optional(),
    })
    .optional(),
});

/** What a template adds to the base's package.json. */
export type PackageAdditions = NonNullable<z.infer<typeof templateFileSchema>['package']>;

/** A template of `templates/`: a folder with a `template.json`, laid over the base. */
export interface Template {
  name: string;
  description: string;
  /** The folders whose files the project gets, laid over the base in this order: the example's, then the template's. */
  folders: string[];
  /** What the template adds to the base's package.json. */
  package: PackageAdditions;
}

/**
 * The templates in `templatesFolder`: each folder with a `template.json` is one (adding a template is adding a
 * folder), listed with the default first, then by name. Folders whose name starts with `_` are not templates.
 */
export function listTemplates(templatesFolder: string): Template[] {
  const templates = readdirSync(templatesFolder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('_'))
    .map((entry) => readTemplate(templatesFolder, entry.name));
  return templates.sort(
    (a, b) =>
      Number(b.name === DEFAULT_TEMPLATE) - Number(a.name === DEFAULT_TEMPLATE) ||
      a.name.localeCompare(b.name),
  );
}

function readTemplate(templatesFolder: string, name: string): Template {
  const folder = join(templatesFolder, name);
  const file = join(folder, TEMPLATE_FILE);
  const subject = `${TEMPLATE_FILE} of template ${name}`;
  if (!existsSync(file)) {
    throw new ValidationError(`template ${name}`, [
      { path: [TEMPLATE_FILE], code: 'custom', message: `is missing from ${folder}` },
    ]);
  }
  const described = parseOptions(templateFileSchema, JSON.parse(readFileSync(file, 'utf8')), subject);
  const folders = [folder];
  if (described.example !== undefined) {
    const example = join(templatesFolder, '..', EXAMPLES_FOLDER, described.example);
    if (!existsSync(example) || !statSync(example).isDirectory()) {
      throw new ValidationError(subject, [
        { path: ['example'], code: 'custom', message: `names ${example}, which is not a folder` },
      ]);
    }
    folders.unshift(example);
  }
  return { name, description: described.description, folders, package: described.package ?? {} };
}
