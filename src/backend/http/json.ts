import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
// A `\uD800`-`\uDFFF` escape: the only way a JSON text can spell half of a surrogate pair.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * Makes JSON the only body type, parsed so that an empty body counts as no body (a client may send
 * `Content-Type: application/json` on every request, reads included). A `__proto__` key is kept as sent:
 * `JSON.parse` makes it an own property like any other, so a body can never change an object's prototype.
 *
 * Text the store could not keep as sent is refused rather than changed: bytes that are not UTF-8, and strings or keys
 * holding half of a surrogate pair (which would be stored as U+FFFD).
 */
export function registerJsonParser(app: FastifyInstance): void {
  // Fastify would otherwise hand a text/plain body to the route as a string.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      const text = decode(body as Buffer);
      // A search that stops at the first non-space character, where `trim()` would scan from both ends.
      if (!/\S/.test(text)) {
        done(null, undefined);
        return;
      }
      const value: unknown = JSON.parse(text);
      if (SURROGATE_ESCAPE.test(text) && !isWellFormed(value)) {
        throw ServiceError.badRequest(
          'body: a string holds half of a surrogate pair (a lone \\uD800-\\uDFFF escape)',
        );
      }
      done(null, value);
    } catch (error) {
      // JSON.parse's own SyntaxError is answered as fastify's parse errors are: a 400 naming the body.
      done(
        error instanceof ServiceError ? error : Object.assign(error as Error, { statusCode: 400 }),
        undefined,
      );
    }
  });
}

function decode(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw ServiceError.badRequest('body: is not valid UTF-8');
  }
}

/** Whether every string and key in a parsed JSON value is well-formed UTF-16. Iterative: depth cannot overflow it. */
function isWellFormed(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return false;
    } else if (Array.isArray(value)) {
      pending.push(...value);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (!key.isWellFormed()) return false;
        pending.push(item);
      }
    }
  }
  return true;
}
