import type { Spread } from './stats.js';

/** One line of the results table. */
export interface Row {
  name: string;
  /** What was measured, with its unit. */
  measurement: string;
  /** The ratio this line reports, as text (empty for a baseline). */
  ratio: string;
  /** The goal this line is measured against, when it has one (`≥ 0.95x`). */
  goal?: string;
  /** Whether this run met the goal; every row with a goal says. */
  met?: boolean;
  /** Why the goal is missed, when it is: what the profile in docs/benchmarks.md found. */
  why?: string;
}

/** A row's goal with its verdict: `≥ 0.9x: met`, or `≥ 0.9x: missed (why)`. */
export function verdict(row: Row): string {
  if (row.goal === undefined) return '';
  if (row.met === undefined) return row.goal;
  if (row.met) return `${row.goal}: met`;
  return `${row.goal}: missed${row.why === undefined ? '' : ` (${row.why})`}`;
}

/** Formats a ratio as `12.3x`. */
export function ratio(value: number): string {
  return `${value.toFixed(value >= 10 ? 1 : 2)}x`;
}

/** Formats a number with thousands separators and no decimals. */
export function whole(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Formats a spread as `median (min-max)`. */
export function range(values: Spread, format: (value: number) => string): string {
  return `${format(values.median)} (${format(values.min)}-${format(values.max)})`;
}

/** Formats bytes as MiB with one decimal. */
export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Renders rows as a plain-text table. */
export function renderTable(rows: readonly Row[]): string {
  const header: Row = { name: 'benchmark', measurement: 'measurement', ratio: 'ratio', goal: 'goal' };
  const all = [header, ...rows];
  const width = (text: (row: Row) => string) => Math.max(...all.map((row) => text(row).length));
  const widths = {
    name: width((row) => row.name),
    measurement: width((row) => row.measurement),
    ratio: width((row) => row.ratio),
  };
  const line = (row: Row) =>
    `${row.name.padEnd(widths.name)}  ${row.measurement.padStart(widths.measurement)}  ${row.ratio.padStart(widths.ratio)}  ${verdict(row)}`.trimEnd();
  const rule = '-'.repeat(widths.name + widths.measurement + widths.ratio + width(verdict) + 6);
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Renders rows as a Markdown table, for `bench/RESULTS.md`. */
export function renderMarkdownTable(rows: readonly Row[]): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  return [
    '| benchmark | measurement | ratio | goal |',
    '| --- | ---: | ---: | --- |',
    ...rows.map(
      (row) =>
        `| ${cell(row.name)} | ${cell(row.measurement)} | ${cell(row.ratio)} | ${cell(verdict(row))} |`,
    ),
  ].join('\n');
}
