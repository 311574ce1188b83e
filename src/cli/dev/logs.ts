/**
 * The log lines `connector dev` prints: its workers' (JSON lines on their stdout), the backend's and its own, each
 * printed readably for a person (pino-pretty) or passed on as JSON, above the status block.
 * @module
 */
import { prettyLogOptions } from '../../internal/pretty-logs.js';
import type { DevOutput } from './output.js';

/** A pino line, as a worker writes it. */
export interface LogLine {
  level: number;
  msg?: string;
  err?: { message?: unknown };
  [field: string]: unknown;
}

/** pino's level of `error`: a line at it or above is a connector's last error. */
export const ERROR_LEVEL = 50;

/** How the lines are printed: readably (`pretty`) or as the JSON lines they are. */
export type LogFormat = 'pretty' | 'json';

/** Prints log lines, JSON or not, on a {@link DevOutput}. */
export class LogPrinter {
  readonly #output: DevOutput;
  readonly #pretty: ((line: LogLine) => string) | undefined;

  private constructor(output: DevOutput, pretty: ((line: LogLine) => string) | undefined) {
    this.#output = output;
    this.#pretty = pretty;
  }

  /** A printer in `format`; colours when the output is a terminal. */
  static async create(output: DevOutput, format: LogFormat): Promise<LogPrinter> {
    if (format === 'json') return new LogPrinter(output, undefined);
    // Loaded only here, as a worker loads it: nothing else of the kit needs it.
    const { prettyFactory } = await import('pino-pretty');
    return new LogPrinter(output, prettyFactory(prettyLogOptions(output.interactive)));
  }

  /** Prints text as it is: what a compiler printed, say. */
  text(text: string): void {
    this.#output.write(text);
  }

  /**
   * Prints a line a process wrote: a pino line readably (or as JSON, with `fields` added), any other text as it is.
   * Answers the pino line, parsed, when it was one.
   */
  print(text: string, fields: Record<string, unknown> = {}): LogLine | undefined {
    const line = parseLogLine(text);
    if (line === undefined) {
      this.text(text);
      return undefined;
    }
    const labelled = { ...line, ...fields };
    this.#output.write(this.#pretty?.(labelled) ?? JSON.stringify(labelled));
    return line;
  }

  /** A pino destination that prints each line through this printer: for the loop's own logger and the backend's. */
  destination(): { write(chunk: string): void } {
    return {
      write: (chunk) => {
        for (const text of chunk.split('\n')) if (text !== '') this.print(text);
      },
    };
  }
}

/** The pino line `text` holds, or `undefined` when it holds none (any other output, a line cut short). */
export function parseLogLine(text: string): LogLine | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || typeof (value as LogLine).level !== 'number') {
      return undefined;
    }
    return value as LogLine;
  } catch {
    return undefined;
  }
}
