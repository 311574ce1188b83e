/**
 * The kit's one error hierarchy. Every error the kit throws on purpose is an {@link ApprovalKitError} with a
 * stable string `code`; branch on `code` (or `instanceof`), never on the message.
 * @module
 */

/** Base class of every error the kit throws on purpose. */
export class ApprovalKitError extends Error {
  /** Stable, machine-readable identifier of the kind of failure. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One problem found while validating input: where it is and what is wrong. */
export interface ValidationIssue {
  /** Path to the offending value, as property names and array indexes. Empty for the value itself. */
  path: ReadonlyArray<string | number>;
  /** What is wrong, in plain words. */
  message: string;
}

/**
 * Input failed validation: a request before it was sent, an option, a config file, or a request the reference
 * backend received. Carries every issue found, not just the first.
 */
export class ValidationError extends ApprovalKitError {
  readonly issues: readonly ValidationIssue[];

  constructor(subject: string, issues: readonly ValidationIssue[], options?: { cause?: unknown }) {
    super('validation', `Invalid ${subject}: ${formatIssues(issues)}`, options);
    this.issues = issues;
  }
}

/**
 * Renders issues as `path: message; path: message`, the form used in every validation message. A message that names
 * its own path already, as an option's does (``Expected `sync.schedule` to be …``), is shown as it is.
 */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) => {
      const path = formatPath(issue.path);
      return path === '' || issue.message.includes(`\`${path}\``)
        ? issue.message
        : `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** Renders a path as `a.b[0].c`. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('');
}
