/**
 * A record as the Table API answers it: the fields `sysparm_fields` names (every field without it; a name the table
 * has not is ignored), each as `sysparm_display_value` asks: the value (`false`, the default), the display value
 * (`true`), or both (`all`: `{"display_value", "value"}`), a reference with its `link` unless
 * `sysparm_exclude_reference_link=true`. Display values are read by the user who asked: choices by their labels,
 * references by the referenced record's display field, date-times in the user's time zone.
 * @module
 */
import type { Row, SimulatedInstance } from './instance.js';
import { type FieldDefinition, money, TABLES } from './tables.js';

type Rendered = string | Record<string, string>;

export class Rendering {
  readonly #instance: SimulatedInstance;
  /** The instance's URL, which a reference's `link` starts with. */
  readonly #base: () => string;

  constructor(instance: SimulatedInstance, base: () => string) {
    this.#instance = instance;
    this.#base = base;
  }

  render(
    table: string,
    row: Readonly<Row>,
    params: URLSearchParams,
    viewer: Readonly<Row>,
  ): Record<string, Rendered> {
    const definition = TABLES[table]!;
    const asked = params.get('sysparm_fields');
    const names = asked === null || asked === '' ? Object.keys(definition.fields) : asked.split(',');
    const mode = params.get('sysparm_display_value') ?? 'false';
    const withLinks = params.get('sysparm_exclude_reference_link') !== 'true';
    const rendered: Record<string, Rendered> = {};
    for (const name of names) {
      const field = definition.fields[name];
      if (field === undefined) continue;
      // A journal field reads empty through the Table API; its entries are in the journal.
      const value = field.type === 'journal' ? '' : (row[name] ?? '');
      const display = this.#display(field, value, row, viewer);
      const reference = referenceTable(field, row, this.#instance);
      const link: Record<string, string> =
        withLinks && reference !== undefined && value !== ''
          ? { link: `${this.#base()}/api/now/table/${reference}/${value}` }
          : {};
      const linked = link.link !== undefined;
      if (mode === 'all') rendered[name] = { display_value: display, value, ...link };
      else if (mode === 'true') rendered[name] = linked ? { display_value: display, ...link } : display;
      else rendered[name] = linked ? { ...link, value } : value;
    }
    return rendered;
  }

  #display(field: FieldDefinition, value: string, row: Readonly<Row>, viewer: Readonly<Row>): string {
    switch (field.type) {
      case 'choice':
        return field.choices?.[value] ?? value;
      case 'reference':
      case 'document_id': {
        const table = referenceTable(field, row, this.#instance);
        const referenced = table === undefined ? undefined : this.#instance.row(table, value);
        return referenced === undefined || table === undefined
          ? ''
          : (referenced[TABLES[table]!.displayField] ?? '');
      }
      case 'table_name':
        return TABLES[value]?.label ?? value;
      case 'date_time':
        return this.#instance.display(value, viewer);
      case 'currency':
        return money(value);
      default:
        return value;
    }
  }
}

/** The table a reference (or a `document_id`, by the record's `source_table`) refers to. */
function referenceTable(
  field: FieldDefinition,
  row: Readonly<Row>,
  instance: SimulatedInstance,
): string | undefined {
  if (field.type === 'document_id') return row.source_table || undefined;
  if (field.type !== 'reference' || field.reference === undefined) return undefined;
  return field.reference === 'task' ? instance.taskTable(row.sysapproval ?? '') : field.reference;
}
