import { createHash, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { Principal, Store } from '../store/index.js';

/** The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

/** The principal of a service request, or the published 401 for a missing, unknown or wrong-kind token. */
export function authenticate(store: Store, header: string | undefined, kind: Principal['kind']): Principal {
  const token = bearerToken(header);
  const principal = token === undefined ? undefined : store.tokens.resolve(token);
  if (principal === undefined || principal.kind !== kind) throw ServiceError.unauthorized();
  return principal;
}

/** Compares digests, so the time taken says nothing about how much of the admin token matched. */
export function isAdminToken(header: string | undefined, adminToken: string): boolean {
  const token = bearerToken(header);
  if (token === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(token), digest(adminToken));
}
