import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listTemplates } from '../../src/cli/create/templates.js';
import { packageRoot } from '../../src/internal/package-root.js';

// docs/create-connector.md names the templates twice: in the refusal of an unknown one, and in its table.

const root = packageRoot()!;
const doc = readFileSync(join(root, 'docs', 'create-connector.md'), 'utf8');
const names = listTemplates(join(root, 'templates')).map((template) => template.name);

describe('docs/create-connector.md', () => {
  it('quotes the refusal of an unknown template with every template of templates/, in order', () => {
    const quoted = /``(Expected `--template` to be one of [\s\S]*?)``/.exec(doc)?.[1];
    expect(quoted?.replace(/\s+/g, ' ')).toBe(
      `Expected \`--template\` to be one of ${names.map((name) => `\`${name}\``).join(', ')}, got \`"jria"\` (string)`,
    );
  });

  it('lists in its table of templates every template of templates/, in order, and no other', () => {
    const section = doc.slice(doc.indexOf('## The templates'));
    const rows = [...section.matchAll(/^\| `([^`]+)` +\|/gm)].map((match) => match[1]);
    expect(rows).toEqual(names);
  });
});
