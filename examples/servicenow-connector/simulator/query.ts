/**
 * The part of ServiceNow's encoded query language the simulated instance reads: conditions joined by `^` (and) and
 * `^OR` (or), the operators `=`, `!=`, `<`, `<=`, `>`, `>=`, `IN`, `NOT IN`, `STARTSWITH`, `ENDSWITH`, `LIKE`,
 * `ISEMPTY` and `ISNOTEMPTY`, and `ORDERBY<field>`/`ORDERBYDESC<field>`. As the instance does by default, a condition
 * on a field the table does not have is ignored (the rest of the query applies). What it does not read (a
 * `javascript:` value, `^NQ`, a related-list query) is a {@link QueryError}: the simulator's own, answered `400`.
 * @module
 */
import type { Row } from './instance.js';
import type { TableDefinition } from './tables.js';

/** A query the simulator does not read; answered `400`. */
export class QueryError extends Error {
  override name = 'QueryError';
}

/** A parsed query: which records it keeps, and in which order. */
export interface ParsedQuery {
  matches(row: Readonly<Row>): boolean;
  compare(a: Readonly<Row>, b: Readonly<Row>): number;
}

type Test = (value: string, operand: string, numeric: boolean) => boolean;

const compareValues = (value: string, operand: string, numeric: boolean) =>
  numeric ? Number(value) - Number(operand) : value < operand ? -1 : value > operand ? 1 : 0;

// Longest first, so that `<=` is not read as `<` and `NOT IN` not as `IN`.
const OPERATORS: readonly (readonly [string, Test])[] = [
  ['ISNOTEMPTY', (value) => value !== ''],
  ['ISEMPTY', (value) => value === ''],
  ['STARTSWITH', (value, operand) => value.startsWith(operand)],
  ['ENDSWITH', (value, operand) => value.endsWith(operand)],
  ['NOT IN', (value, operand) => !operand.split(',').includes(value)],
  ['LIKE', (value, operand) => value.toLowerCase().includes(operand.toLowerCase())],
  ['IN', (value, operand) => operand.split(',').includes(value)],
  ['!=', (value, operand) => value !== operand],
  ['>=', (value, operand, numeric) => compareValues(value, operand, numeric) >= 0],
  ['<=', (value, operand, numeric) => compareValues(value, operand, numeric) <= 0],
  ['=', (value, operand) => value === operand],
  ['>', (value, operand, numeric) => compareValues(value, operand, numeric) > 0],
  ['<', (value, operand, numeric) => compareValues(value, operand, numeric) < 0],
];

/** Reads an encoded query against a table's fields. */
export function parseQuery(text: string, table: TableDefinition): ParsedQuery {
  // Each term of the outer list is an and; each of its alternatives an or.
  const conditions: ((row: Readonly<Row>) => boolean)[][] = [];
  const order: { field: string; descending: boolean }[] = [];
  for (const term of text === '' ? [] : text.split('^')) {
    if (term === '' || term === 'EQ') continue;
    if (term.startsWith('NQ') || term.startsWith('RLQUERY') || term.startsWith('ENDRLQUERY')) {
      throw new QueryError(`The simulator does not read "${term.slice(0, 10)}…" in an encoded query`);
    }
    const sort = /^ORDERBY(DESC)?([a-z_][a-z0-9_]*)$/.exec(term);
    if (sort !== null) {
      if (Object.hasOwn(table.fields, sort[2]!))
        order.push({ field: sort[2]!, descending: sort[1] !== undefined });
      continue;
    }
    // Field names are lower case: a term in capitals starting with OR is an alternative of the term before.
    const or = term.startsWith('OR') ? term.slice(2) : undefined;
    const condition = parseCondition(or ?? term, table);
    if (or !== undefined && conditions.length > 0) conditions.at(-1)!.push(condition);
    else conditions.push([condition]);
  }
  return {
    matches: (row) => conditions.every((alternatives) => alternatives.some((test) => test(row))),
    compare: (a, b) => {
      for (const { field, descending } of order) {
        const numeric = table.fields[field]?.type === 'integer';
        const by = compareValues(a[field] ?? '', b[field] ?? '', numeric);
        if (by !== 0) return descending ? -by : by;
      }
      return 0;
    },
  };
}

function parseCondition(term: string, table: TableDefinition): (row: Readonly<Row>) => boolean {
  const field = /^[a-z_][a-z0-9_]*/.exec(term)?.[0];
  if (field === undefined) throw new QueryError(`The simulator cannot read the condition "${term}"`);
  const rest = term.slice(field.length);
  const found = OPERATORS.find(([operator]) => rest.startsWith(operator));
  if (found === undefined) throw new QueryError(`The simulator cannot read the condition "${term}"`);
  const [operator, test] = found;
  const operand = rest.slice(operator.length);
  if (operand.startsWith('javascript:')) {
    throw new QueryError('The simulator runs no javascript: in an encoded query');
  }
  // The instance ignores a condition on a field the table does not have (glide.invalid_query.returns_no_rows off).
  const definition = table.fields[field];
  if (definition === undefined) return () => true;
  const numeric = definition.type === 'integer';
  return (row) => test(row[field] ?? '', operand, numeric);
}
