/**
 * Schemas of the Management API (v1): users, user mappings and systems, endpoints 1 to 7.
 * Response schemas are loose (unknown fields pass through); request schemas are exact.
 */
import { z } from 'zod';
import { Uuid } from './primitives.js';

/** The field names that `searchableFields` and `filterFields` may list. */
export const UserQueryField = z.enum(['firstName', 'lastName', 'email']);
export type UserQueryField = z.infer<typeof UserQueryField>;

/** A user as Get users returns it. The first name is spelled `firastName`, exactly as the service sends it. */
export const User = z.looseObject({
  id: Uuid,
  email: z.string(),
  firastName: z.string(),
  lastName: z.string(),
  orgId: Uuid,
});
export type User = z.infer<typeof User>;

/** A user to add (element of the Add users body). Here the first name is spelled `firstName`. */
export const NewUser = z.object({
  email: z.string().min(1),
  firstName: z.string(),
  lastName: z.string(),
});
export type NewUser = z.infer<typeof NewUser>;

/**
 * One element of the Add users answer: the outcome for one user, in the order they were sent.
 * The spec does not show its fields; this is the shape `docs/api-contract.md` fixes.
 */
export const AddUserResult = z.looseObject({
  email: z.string().optional(),
  status: z.enum(['success', 'failure']),
  id: Uuid.optional(),
  error: z.string().optional(),
});
/**
 * What the client accepts as an Add users result item: the documented shape, or the plausible others
 * (`success: boolean`; only `id` on success; only `error` on failure). The client normalizes it to {@link AddUserResult}.
 */
export const AddUserResultWire = z.looseObject({
  email: z.string().optional(),
  status: z.string().optional(),
  success: z.boolean().optional(),
  id: Uuid.optional(),
  error: z.string().optional(),
});
export type AddUserResult = z.infer<typeof AddUserResult>;

/** A mapping from a service user to that user's identifier in one source system. */
export const UserMapping = z.looseObject({
  systemUserId: z.string(),
  systemId: Uuid,
  userId: Uuid,
});
export type UserMapping = z.infer<typeof UserMapping>;

/**
 * A user named in a body (Delete users, Add user mappings): any non-empty string, as in a path. An id that names no
 * user of the organization, whether or not it is a UUID, is Not Found (the spec's one known case), never a 400.
 */
export const UserRef = z.string().min(1);

/**
 * A mapping to add. `upsert: 1` replaces the user's existing mapping in the system; without it, a user already mapped
 * to another identifier is a conflict (see `docs/api-contract.md`).
 */
export const NewUserMapping = z.object({
  userId: UserRef,
  systemUserId: z.string().min(1),
  upsert: z.union([z.literal(0), z.literal(1)]).optional(),
});
export type NewUserMapping = z.infer<typeof NewUserMapping>;

/** A source system of the organization. */
export const System = z.looseObject({
  id: Uuid,
  name: z.string(),
  orgId: Uuid,
});
export type System = z.infer<typeof System>;

const Int32 = z.number().int().min(-2147483648).max(2147483647);
const FieldList = z
  .string()
  .min(1)
  .refine((value) => value.split(',').every((name) => UserQueryField.safeParse(name.trim()).success), {
    message: 'must be a comma-separated list of firstName, lastName, email',
  });

/** Paging of endpoints 1 and 5: `page` counts from 1; with `page` and no `limit`, the limit is 10. */
export const PageQuery = z.object({
  page: Int32.min(1).optional(),
  limit: Int32.min(1).optional(),
});
export type PageQuery = z.infer<typeof PageQuery>;

/** Query of Get users (endpoint 1), with the spec's rules: a term comes with the fields it applies to. */
export const GetUsersQuery = PageQuery.extend({
  search: z.string().min(1).optional(),
  searchableFields: FieldList.optional(),
  filter: z.string().min(1).optional(),
  filterFields: FieldList.optional(),
}).superRefine((query, ctx) => {
  if (query.search !== undefined && query.searchableFields === undefined) {
    ctx.addIssue({ code: 'custom', path: ['searchableFields'], message: 'is required when search is given' });
  }
  if (query.filter !== undefined && query.filterFields === undefined) {
    ctx.addIssue({ code: 'custom', path: ['filterFields'], message: 'is required when filter is given' });
  }
});
export type GetUsersQuery = z.infer<typeof GetUsersQuery>;

/** The largest body, in bytes, that Add users and Delete users accept (100K). */
export const MANAGEMENT_BODY_LIMIT_BYTES = 100 * 1024;

/** With `page` and no `limit`, endpoints 1 and 5 answer this many items. */
export const DEFAULT_PAGE_LIMIT = 10;
