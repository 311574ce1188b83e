import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

const templateFileSchema = z.strictObject({
  /** One line, shown beside the template's name in the prompt and in `--help`. */
  description: z.string().min(1),
});

/** A template of `templates/`: a folder with a `template.json`, laid over the base. */
export interface Template {
  name: string;
  description: string;
  /** The template's own folder. */
  folder: string;
}

/**
 * The templates in `templatesFolder`: each folder with a `template.json` is one (adding a template is adding a
 * folder), listed with the default first, then by name. Folders whose name starts with `_` are not templates.
 */
export function listTemplates(templatesFolder: string): Template[] {
  const templates = readdirSync(templatesFolder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('_'))
    .map((entry): Template => {
      const folder = join(templatesFolder, entry.name);
      const file = join(folder, TEMPLATE_FILE);
      if (!existsSync(file)) {
        throw new ValidationError(`template ${entry.name}`, [
          { path: [TEMPLATE_FILE], code: 'custom', message: `is missing from ${folder}` },
        ]);
      }
      const { description } = parseOptions(
        templateFileSchema,
        JSON.parse(readFileSync(file, 'utf8')),
        `${TEMPLATE_FILE} of template ${entry.name}`,
      );
      return { name: entry.name, description, folder };
    });
  return templates.sort(
    (a, b) =>
      Number(b.name === DEFAULT_TEMPLATE) - Number(a.name === DEFAULT_TEMPLATE) ||
      a.name.localeCompare(b.name),
  );
}
