import type { z } from 'zod';
import {
  type AddUserResult,
  type AddUserResultWire,
  endpoints,
  type GetUsersQuery,
  MANAGEMENT_BODY_LIMIT_BYTES,
  type NewUser,
  type NewUserMapping,
  type PageQuery,
  type System,
  type User,
  type UserMapping,
} from '../api/index.js';
import { InvalidResponseError, PartialAddUsersError } from './errors.js';
import type { ClientOptions, RequestOptions } from './options.js';
import { splitByBytes } from './split.js';
import { Transport } from './transport.js';

/**
 * Bytes the client allows in one Add users or Delete users body. Below the service's 100K under either reading of
 * "K" (100,000 or 102,400), so that a caller never meets a 413.
 */
export const CLIENT_BODY_BUDGET_BYTES = Math.min(100_000, MANAGEMENT_BODY_LIMIT_BYTES);

/** Options of the paging iterators. */
export interface IterateOptions extends RequestOptions {
  /**
   * Items per page.
   * @default 100
   */
  pageSize?: number;
}

/**
 * Client of the Management API (v1), endpoints 1 to 7, authenticated with a management token of one organization.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { ManagementClient } from 'approval-connector-kit/client';
 *
 * const management = new ManagementClient({ baseUrl, token: managementToken });
 * const results = await management.addUsers(orgId, [{ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }]);
 * ```
 */
export class ManagementClient {
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    this.#transport = new Transport(options);
  }

  /** Endpoint 1: one page of users (or all, without `page` and `limit`). The first name is `firastName`. */
  async getUsers(query: GetUsersQuery = {}, options?: RequestOptions): Promise<User[]> {
    return this.#transport.call(endpoints.getUsers, { query }, options);
  }

  /** Every user matching `query`, walking `page`/`limit` from page 1 until a short page. */
  iterateUsers(
    query: Omit<GetUsersQuery, 'page' | 'limit'> = {},
    options: IterateOptions = {},
  ): AsyncIterableIterator<User> {
    return paginate((page, limit) => this.getUsers({ ...query, page, limit }, options), options.pageSize);
  }

  /**
   * Endpoint 2: adds users to an organization. A list larger than one request's 100K body is sent as several
   * requests, in order; the results come back in the order of `users`, one per user. Never retried once a request
   * may have reached the service, since adding is not idempotent. When a request after the first fails, the users
   * of the earlier ones exist: the {@link PartialAddUsersError} thrown then says which.
   */
  async addUsers(
    orgId: string,
    users: readonly NewUser[],
    options?: RequestOptions,
  ): Promise<AddUserResult[]> {
    const results: AddUserResult[] = [];
    for (const { chunk, prepared } of this.#chunked(endpoints.addUsers, users, 'Add users request', {
      id: orgId,
    })) {
      try {
        const answer = await this.#transport.send(endpoints.addUsers, prepared, options ?? {}, {
          allowEmpty: false,
          repeatability: 'unsent',
        });
        results.push(...normalizeAddUserResults(answer, chunk, prepared.target));
      } catch (error) {
        if (results.length === 0) throw error;
        const notSent = users.slice(results.length + chunk.length);
        throw new PartialAddUsersError(results, chunk, notSent, error);
      }
    }
    return results;
  }

  /**
   * Endpoint 3: deletes users by id. A list larger than one request's 100K body is sent as several requests, each
   * all or nothing on the service. An id listed twice is sent once, as one request would count it once: repeated in
   * a later request, it would be a user that no longer exists.
   */
  async deleteUsers(userIds: readonly string[], options?: RequestOptions): Promise<void> {
    this.#transport.prepare(endpoints.deleteUsers, { body: userIds }); // problems named at their index as given
    const unique = [...new Set(userIds)];
    for (const { prepared } of this.#chunked(endpoints.deleteUsers, unique, 'Delete users request')) {
      await this.#transport.send(endpoints.deleteUsers, prepared, options ?? {}, { allowEmpty: true });
    }
  }

  /** Endpoint 4: the mappings of one user, across the organization's systems. */
  async getUserMappings(userId: string, options?: RequestOptions): Promise<UserMapping[]> {
    return this.#transport.call(endpoints.getUserMappings, { params: { id: userId } }, options);
  }

  /** Endpoint 5: one page of the mappings of a system (or all, without `page` and `limit`). */
  async getSystemUserMappings(
    systemId: string,
    query: PageQuery = {},
    options?: RequestOptions,
  ): Promise<UserMapping[]> {
    return this.#transport.call(
      endpoints.getSystemUserMappings,
      { params: { id: systemId }, query },
      options,
    );
  }

  /** Every mapping of a system, walking `page`/`limit` from page 1 until a short page. */
  iterateSystemUserMappings(
    systemId: string,
    options: IterateOptions = {},
  ): AsyncIterableIterator<UserMapping> {
    return paginate(
      (page, limit) => this.getSystemUserMappings(systemId, { page, limit }, options),
      options.pageSize,
    );
  }

  /**
   * Endpoint 6: adds mappings from service users to their identifiers in a system. With `upsert: 1` an item
   * replaces the user's existing mapping; see `docs/api-contract.md`.
   */
  async addUserMappings(
    systemId: string,
    mappings: readonly NewUserMapping[],
    options?: RequestOptions,
  ): Promise<void> {
    await this.#transport.callOptional(
      endpoints.addUserMappings,
      { params: { id: systemId }, body: mappings },
      options,
    );
  }

  /** Endpoint 7: the organization's systems. */
  async getSystems(options?: RequestOptions): Promise<System[]> {
    return this.#transport.call(endpoints.getSystems, {}, options);
  }

  /** Lets requests in flight finish, then closes the connection pool. Idempotent. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** Aborts requests in flight and closes the connection pool. Idempotent. */
  destroy(): Promise<void> {
    return this.#transport.destroy();
  }

  /** Validates the whole list, then prepares one request per chunk, before anything is sent. */
  #chunked<T>(
    endpoint: typeof endpoints.addUsers | typeof endpoints.deleteUsers,
    items: readonly T[],
    subject: string,
    params?: Record<string, string>,
  ) {
    this.#transport.prepare(endpoint, { params, body: items });
    return splitByBytes(items, CLIENT_BODY_BUDGET_BYTES, subject).map((chunk) => ({
      chunk,
      prepared: this.#transport.prepare(endpoint, { params, body: chunk }),
    }));
  }
}

async function* paginate<T>(
  fetchPage: (page: number, limit: number) => Promise<T[]>,
  pageSize = 100,
): AsyncIterableIterator<T> {
  for (let page = 1; ; page += 1) {
    const items = await fetchPage(page, pageSize);
    yield* items;
    if (items.length < pageSize) return;
  }
}

/**
 * Gives each Add users result item the documented shape, from any of the plausible ones, filling `email` from the
 * user sent at the same position when the service leaves it out.
 */
function normalizeAddUserResults(
  items: readonly z.output<typeof AddUserResultWire>[],
  sent: readonly NewUser[],
  target: { method: string; path: string },
): AddUserResult[] {
  if (items.length !== sent.length) {
    throw new InvalidResponseError(target, 200, [
      {
        path: [],
        message: `expected ${sent.length} results, one per user, got ${items.length}`,
        code: 'custom',
      },
    ]);
  }
  return items.map((item, index) => {
    const { success: _success, ...rest } = item;
    const status = statusOf(item);
    if (status === undefined) {
      throw new InvalidResponseError(target, 200, [
        { path: [index], message: 'no success or failure status', code: 'custom' },
      ]);
    }
    return { ...rest, email: item.email ?? sent[index]?.email, status };
  });
}

function statusOf(item: z.output<typeof AddUserResultWire>): AddUserResult['status'] | undefined {
  if (item.status === 'success' || item.status === 'failure') return item.status;
  if (item.success !== undefined) return item.success ? 'success' : 'failure';
  if (item.error !== undefined) return 'failure';
  if (item.id !== undefined) return 'success';
  return undefined;
}
