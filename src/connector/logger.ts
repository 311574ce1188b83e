/**
 * The logger a connector's code is given in its contexts: the methods the kit itself calls, so that any structured
 * logger fits (the kit's own is pino, with secrets redacted).
 * @module
 */

/**
 * Writes one line at its level: a message, or an object of fields and a message. An `Error` as the object is logged
 * with its message and stack under `err`.
 */
export interface LogFn {
  (message: string, ...args: unknown[]): void;
  (fields: object, message?: string, ...args: unknown[]): void;
}

/**
 * The logger in a task's and a source's context.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import type { TaskContext } from 'approval-connector-kit';
 *
 * function transitioned(context: TaskContext, key: string, transition: string): void {
 *   const log = context.logger.child({ issue: key });
 *   log.info({ transition }, 'transitioned the issue');
 * }
 * ```
 */
export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** A logger that adds `bindings` to every line it writes. */
  child(bindings: Record<string, unknown>): Logger;
}
