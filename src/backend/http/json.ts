import type { FastifyInstance } from 'fastify';

/**
 * Makes JSON the only body type, parsed so that an empty body counts as no body (a client may send
 * `Content-Type: application/json` on every request, reads included). A `__proto__` key is kept as sent:
 * `JSON.parse` makes it an own property like any other, so a body can never change an object's prototype.
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
      done(null, JSON.parse(text));
    } catch (error) {
      done(Object.assign(error as Error, { statusCode: 400 }), undefined);
    }
  });
}
