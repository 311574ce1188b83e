/**
 * The part of JQL the simulated Jira understands: clauses joined by `AND` (parentheses allowed) on `project`,
 * `id`/`issue`, `key`, `status` and `updated`, and `ORDER BY` on `updated`, `created`, `key` and `id`. Anything else is a
 * `400` with Jira's error shape, as an unsupported query would be in a real site's search. An `id` or `key` that
 * names no issue the caller can see is a `400` too, when `issueExists` is given, as Jira's validation makes it.
 * @module
 */
import { instantOf } from './time.js';

/** The issue fields a query can test. */
export interface QueryableIssue {
  id: number;
  key: string;
  projectKey: string;
  number: number;
  status: string;
  createdAt: number;
  updatedAt: number;
}

export interface ParsedQuery {
  /** Whether the query restricts the issues at all (Jira refuses an unbounded query). */
  bounded: boolean;
  matches(issue: QueryableIssue): boolean;
  /** The sort key of an issue under the query's order; the issue id breaks ties. */
  sortKey(issue: QueryableIssue): readonly (number | string)[];
  /** Each sort key element's direction: 1 ascending, -1 descending. */
  directions: readonly (1 | -1)[];
}

/** A query Jira would refuse; the message is what Jira's `errorMessages` would say. */
export class JqlError extends Error {}

type Token = { kind: 'word' | 'string' | 'symbol'; text: string };

/**
 * Parses `jql`. Date-times (`"yyyy-MM-dd HH:mm"`, `"yyyy/MM/dd HH:mm"`, or a date alone) are read in `timeZone`,
 * the searching account's, as Jira reads them.
 */
export function parseJql(
  jql: string,
  timeZone: string,
  projects: ReadonlySet<string>,
  issueExists?: (idOrKey: string) => boolean,
): ParsedQuery {
  const tokens = tokenize(jql);
  let at = 0;
  const peek = () => tokens[at];
  const isSymbol = (symbol: string) => peek()?.kind === 'symbol' && peek()!.text === symbol;
  const isWord = (word: string) => peek()?.kind === 'word' && peek()!.text.toLowerCase() === word;
  const expect = (text: string) => {
    const token = tokens[at];
    if (token === undefined || token.kind === 'string' || token.text.toLowerCase() !== text.toLowerCase()) {
      throw new JqlError(
        `Error in the JQL Query: Expecting '${text}' but got '${token?.text ?? 'the end'}'.`,
      );
    }
    at++;
  };

  type Predicate = (issue: QueryableIssue) => boolean;
  const clause = (): Predicate => {
    if (isSymbol('(')) {
      at++;
      const inner = conjunction();
      expect(')');
      return inner;
    }
    const field = tokens[at++];
    if (field?.kind !== 'word')
      throw new JqlError(`Error in the JQL Query: Expecting a field but got '${field?.text ?? 'the end'}'.`);
    const name = field.text.toLowerCase();
    const operator = tokens[at++]?.text.toLowerCase();
    if (operator === 'in' || operator === 'not') {
      if (operator === 'not') expect('in');
      expect('(');
      const values: string[] = [];
      for (;;) {
        values.push(value());
        if (isSymbol(',')) at++;
        else break;
      }
      expect(')');
      const test = equality(name, values);
      return operator === 'in' ? test : (issue) => !test(issue);
    }
    if (operator === '=' || operator === '!=') {
      const test = equality(name, [value()]);
      return operator === '=' ? test : (issue) => !test(issue);
    }
    if (operator === '>=' || operator === '>' || operator === '<=' || operator === '<') {
      if (name !== 'updated' && name !== 'created') {
        throw new JqlError(`The operator '${operator}' is not supported by the '${field.text}' field.`);
      }
      const instant = dateTime(value(), timeZone);
      const of = (issue: QueryableIssue) => (name === 'updated' ? issue.updatedAt : issue.createdAt);
      if (operator === '>=') return (issue) => of(issue) >= instant;
      if (operator === '>') return (issue) => of(issue) > instant;
      if (operator === '<=') return (issue) => of(issue) <= instant;
      return (issue) => of(issue) < instant;
    }
    throw new JqlError(`Error in the JQL Query: Expecting an operator but got '${operator ?? 'the end'}'.`);
  };
  const conjunction = (): Predicate => {
    const parts = [clause()];
    while (isWord('and')) {
      at++;
      parts.push(clause());
    }
    if (isWord('or')) throw new JqlError('The simulated Jira does not support OR.');
    return (issue) => parts.every((part) => part(issue));
  };
  const value = (): string => {
    const token = tokens[at++];
    if (token === undefined || token.kind === 'symbol') {
      throw new JqlError(`Error in the JQL Query: Expecting a value but got '${token?.text ?? 'the end'}'.`);
    }
    return token.text;
  };
  const equality = (name: string, values: readonly string[]): Predicate => {
    if (name === 'project') {
      const keys = values.map((text) => text.toUpperCase());
      for (const key of keys) {
        if (!projects.has(key))
          throw new JqlError(`The value '${key}' does not exist for the field 'project'.`);
      }
      return (issue) => keys.includes(issue.projectKey);
    }
    if (name === 'id' || name === 'issue' || name === 'key' || name === 'issuekey') {
      // Jira validates each id or key against the issues the caller can see, and refuses the whole query.
      const missing = issueExists === undefined ? undefined : values.find((text) => !issueExists(text));
      if (missing !== undefined) {
        throw new JqlError(`An issue with key '${missing}' does not exist for field '${name}'.`);
      }
      const wanted = new Set(values.map((text) => text.toUpperCase()));
      return (issue) => wanted.has(String(issue.id)) || wanted.has(issue.key);
    }
    if (name === 'status') {
      const names = new Set(values.map((text) => text.toLowerCase()));
      return (issue) => names.has(issue.status.toLowerCase());
    }
    throw new JqlError(`Field '${name}' does not exist or you do not have permission to view it.`);
  };

  let matches: Predicate = () => true;
  let bounded = false;
  if (peek() !== undefined && !isWord('order')) {
    matches = conjunction();
    bounded = true;
  }
  const order: { field: string; direction: 1 | -1 }[] = [];
  if (isWord('order')) {
    at++;
    expect('by');
    for (;;) {
      const field = tokens[at++]?.text.toLowerCase();
      if (field !== 'updated' && field !== 'created' && field !== 'key' && field !== 'id') {
        throw new JqlError(`Not able to sort using field '${field ?? ''}'.`);
      }
      let direction: 1 | -1 = 1;
      if (isWord('asc') || isWord('desc')) direction = tokens[at++]!.text.toLowerCase() === 'asc' ? 1 : -1;
      order.push({ field, direction });
      if (isSymbol(',')) at++;
      else break;
    }
  }
  if (at < tokens.length)
    throw new JqlError(`Error in the JQL Query: Expecting the end but got '${tokens[at]!.text}'.`);
  if (order.length === 0) order.push({ field: 'key', direction: 1 });

  // What each element of the sort key reads of an issue, worked out once for the query rather than per issue.
  const parts: ((issue: QueryableIssue) => number | string)[] = order.flatMap(({ field }) => {
    if (field === 'updated') return [(issue: QueryableIssue) => issue.updatedAt];
    if (field === 'created') return [(issue: QueryableIssue) => issue.createdAt];
    if (field === 'key')
      return [(issue: QueryableIssue) => issue.projectKey, (issue: QueryableIssue) => issue.number];
    return [(issue: QueryableIssue) => issue.id];
  });
  parts.push((issue) => issue.id);
  const sortKey = (issue: QueryableIssue) => parts.map((part) => part(issue));
  const directions = [
    ...order.flatMap(({ field, direction }) => (field === 'key' ? [direction, direction] : [direction])),
    1 as const,
  ];
  return { bounded, matches, sortKey, directions };
}

/** The fields and operators a dynamic webhook's JQL filter may use (the platform API's `WebhookDetails.jqlFilter`). */
const DYNAMIC_FILTER_FIELDS = new Set(['issuekey', 'project', 'issuetype', 'status', 'assignee', 'reporter']);
const DYNAMIC_FILTER_OPERATORS = new Set(['=', '!=', 'in', 'not']);
const OPERATORS = new Set(['=', '!=', '>', '>=', '<', '<=', '~', '!~', 'in', 'not', 'is', 'was', 'changed']);

/**
 * What Jira would refuse of a dynamic webhook's JQL filter: a field or an operator outside the subset the platform
 * API documents (fields `issueKey`, `project`, `issuetype`, `status`, `assignee`, `reporter`, `issue.property`,
 * `cf[id]`; operators `=`, `!=`, `IN`, `NOT IN`), in the words of its documented example ("The clause watchCount is
 * unsupported"); `undefined` when it is within it. `issue.property` and `cf[id]` are not simulated.
 */
export function dynamicFilterProblem(jql: string): string | undefined {
  let tokens: Token[];
  try {
    tokens = tokenize(jql);
  } catch (error) {
    return (error as Error).message;
  }
  for (let at = 0; at + 1 < tokens.length; at++) {
    const [field, operator] = [tokens[at]!, tokens[at + 1]!];
    if (field.kind !== 'word' || !OPERATORS.has(operator.text.toLowerCase())) continue;
    if (!DYNAMIC_FILTER_FIELDS.has(field.text.toLowerCase()))
      return `The clause ${field.text} is unsupported`;
    if (!DYNAMIC_FILTER_OPERATORS.has(operator.text.toLowerCase())) {
      return `The operator ${operator.text} is unsupported`;
    }
  }
  return undefined;
}

/** Compares two sort keys under their directions. */
export function compareSortKeys(
  a: readonly (number | string)[],
  b: readonly (number | string)[],
  directions: readonly (1 | -1)[],
): number {
  for (let i = 0; i < directions.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return (x < y ? -1 : 1) * directions[i]!;
  }
  return 0;
}

function dateTime(text: string, timeZone: string): number {
  const match = /^(\d{4})[-/](\d{2})[-/](\d{2})(?: (\d{2}):(\d{2}))?$/.exec(text);
  if (match === null) {
    throw new JqlError(
      `Date value '${text}' for field 'updated' is invalid. Valid formats include: 'yyyy/MM/dd HH:mm', 'yyyy-MM-dd HH:mm', 'yyyy/MM/dd', 'yyyy-MM-dd'.`,
    );
  }
  const [, year, month, day, hour = '00', minute = '00'] = match;
  const wall = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute));
  return instantOf(wall, timeZone);
}

function tokenize(jql: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(>=|<=|!=|[=<>(),])|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s=<>!(),"']+))/gy;
  let match: RegExpExecArray | null;
  let end = 0;
  for (;;) {
    match = pattern.exec(jql);
    if (match === null) break;
    end = pattern.lastIndex;
    const [, symbol, double, single, word] = match;
    if (symbol !== undefined) tokens.push({ kind: 'symbol', text: symbol });
    else if (double !== undefined || single !== undefined) {
      tokens.push({ kind: 'string', text: (double ?? single)!.replace(/\\(.)/g, '$1') });
    } else tokens.push({ kind: 'word', text: word! });
  }
  if (jql.slice(end).trim() !== '') {
    throw new JqlError(
      `Error in the JQL Query: The character '${jql.slice(end).trim()[0]}' is a reserved JQL character.`,
    );
  }
  return tokens;
}
