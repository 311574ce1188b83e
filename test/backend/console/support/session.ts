import type { ReferenceBackend } from '../../../../src/backend/index.js';
import { type Answer, type CallOptions, call } from '../../helpers.js';

/** A console session as a browser holds it: its cookie and its CSRF token. */
export interface ConsoleSession {
  cookie: string;
  csrfToken: string;
}

/** The one-time token of a login link (`…/console/#login=<token>`). */
export function loginToken(link: string): string {
  const token = new URL(link).hash.match(/^#login=(.+)$/)?.[1];
  if (token === undefined) throw new Error(`Not a login link: ${link}`);
  return token;
}

/** Exchanges a login token (or the admin token) for a session, as the page does. */
export async function signIn(backend: ReferenceBackend, token: string): Promise<ConsoleSession> {
  const answer = await call(backend, 'POST', '/console/api/session', { body: { token } });
  if (answer.status !== 200)
    throw new Error(`Sign-in failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  const cookie = String(answer.headers['set-cookie']).split(';', 1)[0] ?? '';
  return { cookie, csrfToken: answer.body.csrfToken };
}

/** A console request with the session's cookie, and its CSRF token on a request that changes something. */
export function consoleCall(
  backend: ReferenceBackend,
  session: ConsoleSession,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  return call(backend, method, `/console/api${path}`, {
    ...options,
    headers: {
      cookie: session.cookie,
      ...(method === 'GET' ? {} : { 'x-console-csrf': session.csrfToken }),
      ...options.headers,
    },
  });
}
