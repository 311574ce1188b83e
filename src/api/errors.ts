import { z } from 'zod';

/** The v1 error body: one string field `Error` holding `<kind>. <detail>`. */
export const V1ErrorBody = z.looseObject({ Error: z.string() });
export type V1ErrorBody = z.infer<typeof V1ErrorBody>;

/**
 * Splits a v1 error message into its kind and detail at the first `. `:
 * `Not Found. Failed to find the an item users 42` gives kind `Not Found` and detail `Failed to find the an item users 42`.
 */
export function parseV1ErrorMessage(message: string): { kind: string; detail: string } {
  const at = message.indexOf('. ');
  if (at === -1) return { kind: message.replace(/\.$/, ''), detail: '' };
  return { kind: message.slice(0, at), detail: message.slice(at + 2) };
}

/** Builds a v1 error message from its kind and detail. */
export function v1ErrorMessage(kind: string, detail: string): string {
  return `${kind}. ${detail}`;
}
