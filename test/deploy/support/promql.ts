/**
 * Enough PromQL to hold alert rules to a worker's metrics: expressions parsed by Prometheus' own grammar
 * (`@prometheus-io/lezer-promql`, the parser of Prometheus' web UI), the selectors read out of them, samples read
 * from a scrape in the Prometheus text format, and an evaluator of the instant threshold expressions the stall
 * rules are (selectors, numbers, comparisons, arithmetic, `and`/`or`/`unless`): an expression it cannot evaluate is
 * an error, never a silent "does not fire".
 * @module
 */
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@prometheus-io/lezer-promql';

/** A label matcher of a selector: `status=~"internalError|systemError"`. */
export interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** A series selector of an expression: its metric name and its matchers. */
export interface Selector {
  name: string;
  matchers: Matcher[];
}

/** One sample of a scrape: a series and its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The syntax tree of an expression; an expression Prometheus would refuse throws, naming where. */
export function parsePromQL(expr: string): SyntaxNode {
  const tree = parser.parse(expr);
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) throw new Error(`Not PromQL at ${node.from}: ${expr}`);
    },
  });
  return tree.topNode;
}

const text = (expr: string, node: SyntaxNode) => expr.slice(node.from, node.to);
const children = (node: SyntaxNode): SyntaxNode[] => {
  const found: SyntaxNode[] = [];
  for (let child = node.firstChild; child !== null; child = child.nextSibling) found.push(child);
  return found;
};

/** Every series selector of an expression, those inside functions and aggregations too. */
export function selectorsOf(expr: string): Selector[] {
  const selectors: Selector[] = [];
  const visit = (node: SyntaxNode) => {
    if (node.name === 'VectorSelector') selectors.push(selectorOf(expr, node));
    else for (const child of children(node)) visit(child);
  };
  visit(parsePromQL(expr));
  return selectors;
}

/** The labels an expression's aggregations group by (`by (namespace, type)`), or leave out (`without (...)`). */
export function groupingLabelsOf(expr: string): string[] {
  const labels: string[] = [];
  const visit = (node: SyntaxNode) => {
    if (node.name === 'GroupingLabels')
      labels.push(...node.getChildren('LabelName').map((label) => text(expr, label)));
    else for (const child of children(node)) visit(child);
  };
  visit(parsePromQL(expr));
  return labels;
}

function selectorOf(expr: string, node: SyntaxNode): Selector {
  const identifier = node.getChild('Identifier');
  const matchers: Matcher[] = [];
  for (const matcher of node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
    const label = text(expr, matcher.getChild('LabelName') as SyntaxNode);
    const op = text(expr, matcher.getChild('MatchOp') as SyntaxNode) as Matcher['op'];
    const value = JSON.parse(text(expr, matcher.getChild('StringLiteral') as SyntaxNode)) as string;
    matchers.push({ label, op, value });
  }
  const byName = matchers.find((matcher) => matcher.label === '__name__' && matcher.op === '=');
  const name = identifier === null ? byName?.value : text(expr, identifier);
  if (name === undefined) throw new Error(`A selector without a metric name: ${text(expr, node)}`);
  return { name, matchers: matchers.filter((matcher) => matcher !== byName) };
}

/** The samples of a scrape in the Prometheus text format (comments and blank lines skipped). */
export function parseSamples(scrape: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of scrape.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`Not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, label, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[label as string] = JSON.parse(`"${value}"`) as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** What an expression evaluates to: a number, or the series it keeps. */
type Value = number | Sample[];

/**
 * Evaluates an instant threshold expression over a scrape's samples, as Prometheus would at that instant, and gives
 * the series it keeps: an alert rule with this expression fires (once its `for` has passed) when there is any.
 */
export function evaluate(expr: string, samples: readonly Sample[]): Sample[] {
  const value = evaluateNode(expr, parsePromQL(expr).firstChild as SyntaxNode, samples);
  if (typeof value === 'number') throw new Error(`Not a vector: ${expr}`);
  return value;
}

const COMPARISONS: Record<string, (a: number, b: number) => boolean> = {
  Eql: (a, b) => a === b,
  Neq: (a, b) => a !== b,
  Gtr: (a, b) => a > b,
  Lss: (a, b) => a < b,
  Gte: (a, b) => a >= b,
  Lte: (a, b) => a <= b,
};
const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  Add: (a, b) => a + b,
  Sub: (a, b) => a - b,
  Mul: (a, b) => a * b,
  Div: (a, b) => a / b,
};

function evaluateNode(expr: string, node: SyntaxNode, samples: readonly Sample[]): Value {
  switch (node.name) {
    case 'NumberDurationLiteral':
      return Number(text(expr, node));
    case 'ParenExpr':
      return evaluateNode(expr, node.firstChild as SyntaxNode, samples);
    case 'VectorSelector': {
      const { name, matchers } = selectorOf(expr, node);
      return samples.filter((sample) => sample.name === name && matchers.every((m) => matches(m, sample)));
    }
    case 'BinaryExpr':
      return evaluateBinary(expr, node, samples);
    default:
      throw new Error(
        `Cannot evaluate ${node.name} (${text(expr, node)}): not an instant threshold expression`,
      );
  }
}

function evaluateBinary(expr: string, node: SyntaxNode, samples: readonly Sample[]): Value {
  const parts = children(node);
  if (parts.length !== 3)
    throw new Error(`Cannot evaluate a binary expression with modifiers: ${text(expr, node)}`);
  const [left, op, right] = parts as [SyntaxNode, SyntaxNode, SyntaxNode];
  const a = evaluateNode(expr, left, samples);
  const b = evaluateNode(expr, right, samples);
  if (op.name === 'And' || op.name === 'Or' || op.name === 'Unless') return setOperation(op.name, a, b, expr);
  const compare = COMPARISONS[op.name];
  const compute = ARITHMETIC[op.name];
  if (typeof a === 'number' && typeof b === 'number') {
    if (compute === undefined) throw new Error(`A comparison of two numbers needs bool: ${text(expr, node)}`);
    return compute(a, b);
  }
  if (typeof a !== 'number' && typeof b !== 'number') {
    throw new Error(`Cannot evaluate vector ${op.name} vector: ${text(expr, node)}`);
  }
  // One side a vector, the other a number, in the order written.
  const operands = (value: number): [number, number] =>
    typeof a === 'number' ? [a, value] : [value, b as number];
  const vector = (typeof a === 'number' ? b : a) as Sample[];
  if (compare !== undefined) return vector.filter((sample) => compare(...operands(sample.value)));
  if (compute !== undefined) {
    // Arithmetic drops the metric name, as Prometheus does.
    return vector.map((sample) => ({
      name: '',
      labels: sample.labels,
      value: compute(...operands(sample.value)),
    }));
  }
  throw new Error(`Cannot evaluate ${op.name}: ${text(expr, node)}`);
}

function setOperation(op: 'And' | 'Or' | 'Unless', a: Value, b: Value, expr: string): Sample[] {
  if (typeof a === 'number' || typeof b === 'number') throw new Error(`Set operations take vectors: ${expr}`);
  const key = (sample: Sample) => JSON.stringify(Object.entries(sample.labels).sort());
  const right = new Set(b.map(key));
  if (op === 'And') return a.filter((sample) => right.has(key(sample)));
  if (op === 'Unless') return a.filter((sample) => !right.has(key(sample)));
  const left = new Set(a.map(key));
  return [...a, ...b.filter((sample) => !left.has(key(sample)))];
}

function matches({ label, op, value }: Matcher, sample: Sample): boolean {
  const actual = sample.labels[label] ?? '';
  switch (op) {
    case '=':
      return actual === value;
    case '!=':
      return actual !== value;
    case '=~':
      return new RegExp(`^(?:${value})$`).test(actual);
    case '!~':
      return !new RegExp(`^(?:${value})$`).test(actual);
  }
}
