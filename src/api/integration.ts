/**
 * Schemas of the Connector Integration API (v2): raw approvals, connector, tasks, state and UI templates,
 * endpoints 8 to 18. Response schemas are loose (unknown fields pass through); request schemas are exact.
 */
import { z } from 'zod';
import { DateTime, DateTimeInput, JsonObject, JsonObjectInput, Uuid } from './primitives.js';

/** A successful v2 answer whose `data` holds `key`, validated by `schema`. */
export function successEnvelope<K extends string, S extends z.ZodType>(key: K, schema: S) {
  return z.looseObject({
    status: z.literal('success'),
    data: z.looseObject({ [key]: schema } as { [P in K]: S }),
  });
}

/** A successful v2 answer to a write: the status alone. */
export const SuccessStatus = z.looseObject({ status: z.literal('success') });

/** What {@link SuccessStatus} accepts, checked without zod: an object whose `status` is `"success"`. */
export function isSuccessStatus(body: unknown): boolean {
  return isObject(body) && body.status === 'success';
}

/** The v2 error body. */
export const V2ErrorBody = z.looseObject({ status: z.literal('failure') });

/** The longest approval id, in characters (UTF-16 code units, as JavaScript counts a string's length). */
export const MAX_APPROVAL_ID_LENGTH = 255;

/**
 * An approval's id as a request names it, in a path (endpoints 8 and 9) or in a body (endpoint 11), with the same
 * rules everywhere so that every approval written can be read: 1 to {@link MAX_APPROVAL_ID_LENGTH} characters,
 * not `.` or `..` (URL parsers resolve those as path segments), and well-formed Unicode (a lone surrogate cannot be
 * percent-encoded in a path, nor stored as UTF-8 text unchanged).
 */
export const ApprovalId = z
  .string()
  .min(1)
  .max(MAX_APPROVAL_ID_LENGTH)
  .refine((value) => value !== '.' && value !== '..', { message: 'cannot be "." or ".." in a URL path' })
  .refine((value) => !/\p{Cs}/u.test(value), { message: 'must be well-formed Unicode (no lone surrogate)' });

/** An approval as the service returns it. `data` is absent in the shallow view. */
export const Approval = z.looseObject({
  id: z.string(),
  schemaId: z.string(),
  approver: z.string(),
  resolved: z.boolean(),
  lastModified: DateTime,
  data: JsonObject.optional(),
});
export type Approval = z.infer<typeof Approval>;

/**
 * The fields of an approval write (endpoint 9's body.approval). All optional on the wire; the service requires
 * `schemaId` and `approver` when the approval is new. Without `lastModified` the write is applied unconditionally.
 */
export const ApprovalFields = z.object({
  schemaId: z.string().min(1).optional(),
  approver: z.string().min(1).optional(),
  resolved: z.boolean().optional(),
  lastModified: DateTimeInput.optional(),
  data: JsonObjectInput.optional(),
});
export type ApprovalFields = z.input<typeof ApprovalFields>;

/** One approval of a batch write (endpoint 11's body.approvals). */
export const ApprovalWrite = ApprovalFields.extend({ id: ApprovalId });
export type ApprovalWrite = z.input<typeof ApprovalWrite>;

/** The five statuses a task result can have. */
export const TaskResultStatus = z.enum([
  'success',
  'internalError',
  'authenticationError',
  'serviceUnavailable',
  'systemError',
]);
export type TaskResultStatus = z.infer<typeof TaskResultStatus>;

/** What a connector reports when it has run a task. */
export const TaskResult = z.object({
  status: TaskResultStatus,
  meta: JsonObjectInput.optional(),
});
export type TaskResult = z.infer<typeof TaskResult>;

/**
 * The approver's credentials, sealed to the connector's public key with a NaCl box (x25519-xsalsa20-poly1305).
 * Binary fields are standard base64. The format is fixed in `docs/api-contract.md`.
 */
export const EncryptedCredentials = z.looseObject({
  algorithm: z.literal('x25519-xsalsa20-poly1305'),
  /** The connector public key the credentials were sealed to, so the connector can pick the matching secret key. */
  publicKey: z.string(),
  /** The sender's one-time public key. */
  ephemeralPublicKey: z.string(),
  nonce: z.string(),
  ciphertext: z.string(),
});
export type EncryptedCredentials = z.infer<typeof EncryptedCredentials>;

/** A task to execute: an action of one of the connector's task types on one approval. */
export const Task = z.looseObject({
  id: Uuid,
  type: z.string(),
  data: z.looseObject({
    approval: JsonObject,
    approveComments: z.string().optional(),
    credentials: EncryptedCredentials.optional(),
  }),
});
export type Task = z.infer<typeof Task>;

const UUID_PATTERN = Uuid.def.pattern as RegExp;

/**
 * Whether {@link Task} accepts `value` as it is, checked rule by rule without zod, for the task every lease brings:
 * it accepts nothing the schema refuses. What it turns down is for the schema to read, and to explain.
 */
export function isTask(value: unknown): value is Task {
  if (!isObject(value)) return false;
  const { id, type, data } = value;
  if (typeof id !== 'string' || !UUID_PATTERN.test(id) || typeof type !== 'string' || !isObject(data))
    return false;
  const { approval, approveComments, credentials } = data;
  return (
    z.core.util.isPlainObject(approval) &&
    (approveComments === undefined || typeof approveComments === 'string') &&
    (credentials === undefined || isEncryptedCredentials(credentials))
  );
}

function isEncryptedCredentials(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { algorithm, publicKey, ephemeralPublicKey, nonce, ciphertext } = value;
  return (
    algorithm === 'x25519-xsalsa20-poly1305' &&
    typeof publicKey === 'string' &&
    typeof ephemeralPublicKey === 'string' &&
    typeof nonce === 'string' &&
    typeof ciphertext === 'string'
  );
}

/**
 * Whether endpoint 14's body schema, `{ taskResult: TaskResult }`, accepts `body` and gives it back unchanged,
 * checked without zod, for the result a worker reports after most tasks: a plain object whose one key is
 * `taskResult`, a plain object whose one key is `status`, one of the five statuses. A result with `meta` is for the
 * schema to read.
 */
export function isBareTaskResultBody(body: unknown): boolean {
  if (!hasOnlyKey(body, 'taskResult')) return false;
  const { taskResult } = body;
  return hasOnlyKey(taskResult, 'status') && TASK_RESULT_STATUSES.has(taskResult.status);
}

const TASK_RESULT_STATUSES: ReadonlySet<unknown> = new Set(TaskResultStatus.options);

/**
 * Whether `value` is a plain object (zod's own test) with one own key, `key`, holding a value rather than a getter:
 * read twice, it is the same.
 */
export function hasOnlyKey<K extends string>(value: unknown, key: K): value is Record<K, unknown> {
  if (!z.core.util.isPlainObject(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== key) return false;
  const property = Object.getOwnPropertyDescriptor(value, key);
  return property !== undefined && 'value' in property;
}

/** What zod's objects accept: anything of type `object` but `null` and arrays. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Endpoint 12's body: what the connector can do, and its public key when actions need credentials. */
export const ConnectorRegistration = z
  .object({
    taskTypes: z.array(z.string().min(1)).optional(),
    authRequired: z.boolean().optional(),
    publicKey: z.string().min(1).optional(),
    publicKeyExpiredAt: DateTimeInput.optional(),
  })
  .superRefine((body, ctx) => {
    // A key is registered with its expiry: the two come together, and they must come when authRequired is true.
    const required =
      body.authRequired === true || body.publicKey !== undefined || body.publicKeyExpiredAt !== undefined;
    if (!required) return;
    const why =
      body.authRequired === true ? 'is required when authRequired is true' : 'comes with the other key field';
    if (body.publicKey === undefined) ctx.addIssue({ code: 'custom', path: ['publicKey'], message: why });
    if (body.publicKeyExpiredAt === undefined) {
      ctx.addIssue({ code: 'custom', path: ['publicKeyExpiredAt'], message: why });
    }
  });
export type ConnectorRegistration = z.input<typeof ConnectorRegistration>;

/** The connector's stored state. */
export const ConnectorState = z.looseObject({
  id: Uuid,
  createdAt: DateTime,
  updatedAt: DateTime,
  state: JsonObject,
});
export type ConnectorState = z.infer<typeof ConnectorState>;

/** A UI template as read: `uiTemplate` is keyed by schema id. */
export const UiTemplate = z.looseObject({
  id: Uuid,
  type: z.string(),
  uiTemplate: z.record(z.string(), JsonObject),
});
export type UiTemplate = z.infer<typeof UiTemplate>;

/** A UI template to write. */
export const UiTemplateWrite = z.object({
  type: z.string().min(1),
  schemaId: z.string().min(1),
  template: JsonObjectInput,
});
export type UiTemplateWrite = z.infer<typeof UiTemplateWrite>;

/** Query of Get approvals (endpoint 10). The time filter is sent as `lastModified[gt]`. */
export const GetApprovalsQuery = z.object({
  'lastModified[gt]': DateTimeInput.optional(),
  resolved: z.boolean().optional(),
  view: z.enum(['full', 'shallow']).optional(),
});

/** Get approvals answers at most this many approvals. */
export const APPROVALS_PAGE_SIZE = 50;
