/**
 * The part of OData V2's query language the simulated task collection understands: `$filter` with `eq`, `and`,
 * `or` and parentheses on a few properties, `$orderby` on `CreatedOn` and `InstanceID`, `$skip`, `$top`,
 * `$expand`, and the key of one task. Anything else is refused with a reason, as SAP refuses a query it cannot run.
 * @module
 */
import type { SimulatedTask } from './inbox.js';

/** A query the simulator cannot run; answered `400` with the message. */
export class QueryError extends Error {
  override name = 'QueryError';
}

const FILTERABLE: Record<string, (task: SimulatedTask) => string> = {
  Status: (task) => task.status,
  TaskDefinitionID: (task) => task.definition.id,
  SAP__Origin: (task) => task.origin,
  Priority: (task) => task.priority,
};

type Predicate = (task: SimulatedTask) => boolean;

/** Parses a `$filter` into a predicate. */
export function parseFilter(text: string): Predicate {
  const tokens = tokenize(text);
  let position = 0;
  const peek = () => tokens[position];
  const next = () => {
    const token = tokens[position];
    if (token === undefined) throw new QueryError(`Invalid $filter: it ends early ("${text}")`);
    position += 1;
    return token;
  };
  const expression = (): Predicate => {
    let left = term();
    while (is(peek(), 'name', 'or')) {
      next();
      const [a, b] = [left, term()];
      left = (task) => a(task) || b(task);
    }
    return left;
  };
  const term = (): Predicate => {
    let left = factor();
    while (is(peek(), 'name', 'and')) {
      next();
      const [a, b] = [left, factor()];
      left = (task) => a(task) && b(task);
    }
    return left;
  };
  const factor = (): Predicate => {
    const token = next();
    if (is(token, 'punctuation', '(')) {
      const inner = expression();
      if (!is(next(), 'punctuation', ')'))
        throw new QueryError(`Invalid $filter: a ")" is missing ("${text}")`);
      return inner;
    }
    const read = token.kind === 'name' ? FILTERABLE[token.value] : undefined;
    if (read === undefined)
      throw new QueryError(`Invalid $filter: "${token.value}" cannot be filtered on here`);
    if (!is(next(), 'name', 'eq'))
      throw new QueryError(`Invalid $filter: only "eq" is supported ("${text}")`);
    const literal = next();
    if (literal.kind !== 'string')
      throw new QueryError(`Invalid $filter: ${token.value} is compared with a string`);
    return (task) => read(task) === literal.value;
  };
  const predicate = expression();
  if (position !== tokens.length) throw new QueryError(`Invalid $filter: unexpected "${peek()?.value}"`);
  return predicate;
}

/** Parses `$orderby` into a comparison of tasks. */
export function parseOrderBy(text: string): (a: SimulatedTask, b: SimulatedTask) => number {
  const keys = text.split(',').map((part) => {
    const [name, direction = 'asc', ...rest] = part.trim().split(/\s+/);
    if (rest.length > 0 || (direction !== 'asc' && direction !== 'desc')) {
      throw new QueryError(`Invalid $orderby: "${part.trim()}"`);
    }
    const sign = direction === 'asc' ? 1 : -1;
    if (name === 'CreatedOn')
      return (a: SimulatedTask, b: SimulatedTask) => sign * (a.createdOn.getTime() - b.createdOn.getTime());
    if (name === 'InstanceID')
      return (a: SimulatedTask, b: SimulatedTask) => sign * a.instanceId.localeCompare(b.instanceId);
    throw new QueryError(`Invalid $orderby: "${name}" cannot be sorted on here`);
  });
  return (a, b) => {
    for (const compare of keys) {
      const order = compare(a, b);
      if (order !== 0) return order;
    }
    return 0;
  };
}

/** Parses `$skip` or `$top`: a whole number. */
export function parseCount(name: string, text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new QueryError(`Invalid ${name}: "${text}" is not a whole number`);
  return Number(text);
}

/** The navigation properties the simulator can expand. */
export type Expandable = 'PotentialOwners' | 'CustomAttributeData';

/** Parses `$expand` into the navigation properties to expand. */
export function parseExpand(text: string): Set<Expandable> {
  const names = new Set<Expandable>();
  for (const name of text.split(',').map((part) => part.trim())) {
    if (name !== 'PotentialOwners' && name !== 'CustomAttributeData') {
      throw new QueryError(`Invalid $expand: "${name}" cannot be expanded here`);
    }
    names.add(name);
  }
  return names;
}

/** Parses the key predicate of one task, `SAP__Origin='…',InstanceID='…'` (in either order). */
export function parseTaskKey(text: string): { origin: string; instanceId: string } {
  const key = new Map<string, string>();
  const pattern = /([A-Za-z_][A-Za-z0-9_]*)='((?:[^']|'')*)'(?:,(?!$)|$)/y;
  while (pattern.lastIndex < text.length) {
    const match = pattern.exec(text);
    if (match === null) throw new QueryError(`Invalid key predicate: "${text}"`);
    key.set(match[1] as string, (match[2] as string).replaceAll("''", "'"));
  }
  const origin = key.get('SAP__Origin');
  const instanceId = key.get('InstanceID');
  if (key.size !== 2 || origin === undefined || instanceId === undefined) {
    throw new QueryError(`Invalid key predicate: a task is keyed by SAP__Origin and InstanceID ("${text}")`);
  }
  return { origin, instanceId };
}

interface Token {
  kind: 'name' | 'string' | 'punctuation';
  value: string;
}

function is(token: Token | undefined, kind: Token['kind'], value: string): boolean {
  return token?.kind === kind && token.value === value;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:([A-Za-z_][A-Za-z0-9_]*)|'((?:[^']|'')*)'|([()]))/y;
  let index = 0;
  while (index < text.length) {
    if (/^\s+$/.test(text.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(text);
    if (match === null)
      throw new QueryError(`Invalid $filter: cannot read it from position ${index} ("${text}")`);
    index = pattern.lastIndex;
    if (match[1] !== undefined) tokens.push({ kind: 'name', value: match[1] });
    else if (match[2] !== undefined) tokens.push({ kind: 'string', value: match[2].replaceAll("''", "'") });
    else tokens.push({ kind: 'punctuation', value: match[3] as string });
  }
  return tokens;
}
