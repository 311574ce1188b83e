import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.js';

/** How long a login link works if nobody opens it: an hour. */
export const LOGIN_LINK_TTL_MS = 60 * 60 * 1000;
/** The header that carries a session's CSRF token on every state-changing console request. */
export const CSRF_HEADER = 'x-console-csrf';
/** The most sessions kept at once; signing in past it ends the oldest. */
const MAX_SESSIONS = 100;

interface Session {
  csrfToken: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex');
const sameText = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/**
 * Who may use the console: one-time login tokens (the banner's link), sessions they are exchanged for (an HttpOnly,
 * SameSite=Strict cookie), and the CSRF token of each session. All in memory: a restart signs everyone out.
 */
export class ConsoleSessions {
  /** Login tokens by their SHA-256, with when each stops working (on the monotonic clock, not the store's). */
  readonly #loginTokens = new Map<string, number>();
  /** Login tokens spent, by their SHA-256, kept until they would have expired: to say why a link no longer works. */
  readonly #spent = new Map<string, number>();
  /** Sessions by the SHA-256 of their cookie, oldest first. */
  readonly #sessions = new Map<string, Session>();

  constructor(private readonly adminToken: string) {}

  /** A new one-time login token: it opens one session, once, within {@link LOGIN_LINK_TTL_MS}. */
  issueLoginToken(): string {
    const token = randomBytes(32).toString('base64url');
    this.#forgetPast();
    this.#loginTokens.set(digest(token), performance.now() + LOGIN_LINK_TTL_MS);
    return token;
  }

  /**
   * Exchanges a login token (spent by this call) or the admin token for a new session; sets its cookie and answers
   * its CSRF token. Anything else is a 401 that changes nothing.
   */
  signIn(request: FastifyRequest, reply: FastifyReply, token: string): { csrfToken: string } {
    const hash = digest(token);
    const expiresAt = this.#loginTokens.get(hash);
    this.#loginTokens.delete(hash);
    if (expiresAt !== undefined) {
      if (expiresAt <= performance.now())
        throw new ServiceError('Unauthorized', 'the login link has expired: a link works for an hour');
      this.#spent.set(hash, expiresAt);
    } else if (this.#spent.has(hash)) {
      throw new ServiceError('Unauthorized', 'the login link has been used already: a link signs in once');
    } else if (!sameText(token, this.adminToken)) {
      throw new ServiceError(
        'Unauthorized',
        'this is neither a login link of this backend nor its admin token (links end when the backend restarts)',
      );
    }
    const id = randomBytes(32).toString('base64url');
    const session = { csrfToken: randomBytes(32).toString('base64url') };
    this.#sessions.set(digest(id), session);
    if (this.#sessions.size > MAX_SESSIONS)
      this.#sessions.delete(this.#sessions.keys().next().value as string);
    void reply.header('set-cookie', `${cookieName(request)}=${id}; Path=/console; HttpOnly; SameSite=Strict`);
    return { csrfToken: session.csrfToken };
  }

  /**
   * The request's session, or a 401 when it has no valid session cookie. A request that changes something must also
   * carry the session's CSRF token in {@link CSRF_HEADER} and come from the console's own origin, or it is a 403.
   */
  require(request: FastifyRequest): Session & { id: string } {
    const id = readCookie(request.headers.cookie, cookieName(request));
    const session = id === undefined ? undefined : this.#sessions.get(digest(id));
    if (id === undefined || session === undefined) {
      throw new ServiceError('Unauthorized', 'sign in to the console first: open the link printed at start');
    }
    if (!SAFE_METHODS.has(request.method)) {
      const sent = request.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !sameText(sent, session.csrfToken)) {
        throw new ServiceError('Forbidden', `the ${CSRF_HEADER} header is missing or wrong`);
      }
      checkOrigin(request);
    }
    return { ...session, id: digest(id) };
  }

  /** Ends the request's session and clears its cookie. */
  signOut(request: FastifyRequest, reply: FastifyReply): void {
    const session = this.require(request);
    this.#sessions.delete(session.id);
    void reply.header(
      'set-cookie',
      `${cookieName(request)}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0`,
    );
  }

  /** Forgets the login tokens, unused or spent, an hour after their own hour has passed. */
  #forgetPast(): void {
    const before = performance.now() - LOGIN_LINK_TTL_MS;
    for (const tokens of [this.#loginTokens, this.#spent]) {
      for (const [hash, expiresAt] of tokens) if (expiresAt <= before) tokens.delete(hash);
    }
  }

  /** Whether the session (by the id {@link require} answered) still exists. */
  isOpen(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * A request sent by a page of another origin names that origin; one the browser sends for the console's own page
 * names the console's. (SameSite=Strict keeps the cookie off cross-site requests already; this covers other ports
 * of the same host, which are the same site.)
 */
export function checkOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${request.headers.host}`) {
    throw new ServiceError('Forbidden', `requests from ${origin} are not accepted`);
  }
}

/** One cookie per backend: cookies do not tell ports apart, and two backends on one host would sign each other out. */
function cookieName(request: FastifyRequest): string {
  return `console-session-${request.socket.localPort}`;
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}
