/**
 * What the files of this folder share: each drives the clients end to end against the reference backend, over real
 * HTTP, and calls {@link clientsAgainstBackend} once at its top for a backend of its own, with clients that it closes
 * after the file. Together they cover every one of the 18 endpoints through its client method, the backend's real
 * errors as the clients map them, splitting, paging, and retries against injected faults.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import {
  type FaultRuleInput,
  type ReferenceBackend,
  startReferenceBackend,
  type Tenant,
} from '../../../src/backend/index.js';
import {
  type ApiError,
  IntegrationClient,
  ManagementClient,
  NotFoundError,
} from '../../../src/client/index.js';

// Retries as a test wants them: the same policy as production, with waits of at most a few milliseconds.
export const RETRY = { retries: 3, baseDelayMs: 1, maxDelayMs: 5 };
export const V2_FAILURE = { status: 'failure' };
export const UNAUTHORIZED_DETAIL = '[Authentication] failed to get token data';
export const T0 = Date.parse('2026-05-01T10:00:00.000Z');
export const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

/** The backend of a test file, and how its tests make clients of it and inject faults into it. */
export interface BackendOfFile {
  /** The file's backend, started before its first test. */
  backend(): ReferenceBackend;
  /** A client of the Management API (v1), closed after the file. */
  management(token: string, retry?: typeof RETRY): ManagementClient;
  /** A client of the Integration API (v2), closed after the file. */
  integration(token: string, retry?: typeof RETRY): IntegrationClient;
  /** Closes these clients, made by the test itself, after the file. */
  closeAfterFile(...made: Array<ManagementClient | IntegrationClient>): void;
  /** A fresh organization with one system, and a client of each API for it. */
  tenant(): Tenant & { v1: ManagementClient; v2: IntegrationClient };
  /** Adds a fault; returns how many of its `times` matching requests have reached the backend so far. */
  inject(rule: FaultRuleInput): () => number;
  /** Counts the requests that reach the backend for `method` and `path`, changing nothing about them. */
  countRequests(method: NonNullable<FaultRuleInput['method']>, path: string): () => number;
}

/**
 * Starts a backend on port 0 for the calling test file, clears its faults after each test, and closes it and every
 * client made of it after the file. Call it once, at the top of the file.
 */
export function clientsAgainstBackend(): BackendOfFile {
  let started: ReferenceBackend | undefined;
  const clients: Array<ManagementClient | IntegrationClient> = [];
  beforeAll(async () => {
    started = await startReferenceBackend({ port: 0 });
  });
  afterEach(() => started?.faults.clear());
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await started?.close();
  });

  const backend = (): ReferenceBackend => {
    if (started === undefined) throw new Error('the backend starts in beforeAll: use it in a test or a hook');
    return started;
  };
  const management = (token: string, retry: typeof RETRY = RETRY): ManagementClient => {
    const client = new ManagementClient({ baseUrl: backend().url, token, retry });
    clients.push(client);
    return client;
  };
  const integration = (token: string, retry: typeof RETRY = RETRY): IntegrationClient => {
    const client = new IntegrationClient({ baseUrl: backend().url, token, retry });
    clients.push(client);
    return client;
  };
  const inject = (rule: FaultRuleInput): (() => number) => {
    const times = rule.times ?? 1;
    const { faults } = backend();
    const { id } = faults.inject({ ...rule, times });
    return () => times - (faults.list().find((fault) => fault.id === id)?.remaining ?? 0);
  };
  return {
    backend,
    management,
    integration,
    closeAfterFile: (...made) => void clients.push(...made),
    tenant() {
      const created = backend().createTenant();
      return { ...created, v1: management(created.managementToken), v2: integration(created.connectorToken) };
    },
    inject,
    countRequests: (method, path) =>
      inject({ method, path, times: 1_000_000, fault: { type: 'delay', ms: 0 } }),
  };
}

/** The error a promise rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

export function person(n: number, domain = 'people.example') {
  const tag = String(n).padStart(5, '0');
  return { email: `person-${tag}@${domain}`, firstName: `First${tag}`, lastName: `Lastname-${tag}` };
}

export async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

export function expectV1NotFound(error: unknown, collection: string, id: string): void {
  expect(error).toBeInstanceOf(NotFoundError);
  const notFound = error as NotFoundError;
  expect(notFound).toMatchObject({
    code: 'not_found',
    status: 404,
    kind: 'Not Found',
    detail: `Failed to find the an item ${collection} ${id}`,
    body: { Error: `Not Found. Failed to find the an item ${collection} ${id}` },
  });
  expect(notFound.message).toContain(
    `answered 404: Not Found. Failed to find the an item ${collection} ${id}`,
  );
}

export function expectV2(error: unknown, type: new (...args: never[]) => ApiError, status: number): void {
  expect(error).toBeInstanceOf(type);
  expect(error).toMatchObject({ status, body: V2_FAILURE, kind: undefined, detail: undefined });
}
