import { request } from 'undici';
import {
  type ReferenceBackend,
  type ReferenceBackendOptions,
  startReferenceBackend,
  type Tenant,
} from '../../src/backend/index.js';

/** An answer as the tests look at it: status, parsed JSON body (or text), headers. */
export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests index into answers freely; the assertions check the shape.
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** A raw body, sent as it is: text as UTF-8, or the very bytes. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** One HTTP request to the backend, with a JSON body when given. */
export async function call(
  backend: ReferenceBackend,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const answer = await request(`${backend.url}${path}`, { method, headers, body });
  const text = await answer.body.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: answer.statusCode, body: parsed, headers: answer.headers };
}

/** A clock the tests move by hand, so no test waits for time to pass. */
export class ManualClock {
  #now: number;

  constructor(start = Date.parse('2026-05-01T00:00:00.000Z')) {
    this.#now = start;
  }

  readonly now = (): number => this.#now;

  advance(ms: number): void {
    this.#now += ms;
  }
}

/** Starts a backend on port 0 with a manual clock. */
export async function start(options: ReferenceBackendOptions = {}): Promise<{
  backend: ReferenceBackend;
  clock: ManualClock;
}> {
  const clock = new ManualClock();
  const backend = await startReferenceBackend({ now: clock.now, ...options });
  return { backend, clock };
}

export const V2_FAILURE = { status: 'failure' };
export const UNAUTHORIZED = { Error: 'Unauthorized. [Authentication] failed to get token data' };

export function notFound(collection: string, id: string) {
  return { Error: `Not Found. Failed to find the an item ${collection} ${id}` };
}

/** A UUID no store will have. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/**
 * A new tenant whose connector has registered the approve and reject task types (and what `registration` adds) and
 * pushed `approvals` through the connector API.
 */
export async function registerTenant(
  backend: ReferenceBackend,
  approvals: unknown[],
  registration: Record<string, unknown> = {},
): Promise<Tenant> {
  const tenant = backend.createTenant();
  await call(backend, 'PATCH', '/v2/connector', {
    token: tenant.connectorToken,
    body: { taskTypes: ['approve', 'reject'], ...registration },
  });
  await call(backend, 'PUT', '/v2/rawapprovals', { token: tenant.connectorToken, body: { approvals } });
  return tenant;
}

type User = ReturnType<ReferenceBackend['createUser']>;

/** Creates a user of the tenant's organization for each `[email, firstName, lastName]`, answering them in order. */
export function createUsers<const People extends readonly (readonly [string, string, string])[]>(
  backend: ReferenceBackend,
  tenant: Tenant,
  people: People,
): { -readonly [K in keyof People]: User } {
  return people.map(([email, firstName, lastName]) =>
    backend.createUser(tenant.organization.id, { email, firstName, lastName }),
  ) as { -readonly [K in keyof People]: User };
}

/** Maps users of the tenant's organization to users of its system, through the management API. */
export function mapUsers(
  backend: ReferenceBackend,
  tenant: Tenant,
  mappings: { userId: string; systemUserId: string }[],
): Promise<Answer> {
  return call(backend, 'POST', `/v1/systems/${tenant.system.id}/usermappings/bulk`, {
    token: tenant.managementToken,
    body: mappings,
  });
}
