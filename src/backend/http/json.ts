import type { FastifyInstance } from 'fastify';

/**
 * Makes JSON the only body type, parsed so that an empty body counts as no body (a client may send
 * `Content-Type: application/json` on every request, reads included) and `__proto__` keys are dropped (a body can
 * never change an object's prototype).
 */
export function registerJsonParser(app: FastifyInstance): void {
  // Fastify would otherwise hand a text/plain body to the route as a string.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      // The reviver makes parsing several times slower; only a text that names `__proto__` can need it.
      done(null, text.includes('__proto__') ? JSON.parse(text, dropProto) : JSON.parse(text));
    } catch (error) {
      done(Object.assign(error as Error, { statusCode: 400 }), undefined);
    }
  });
}

function dropProto(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}
