/**
 * The 18 endpoints, each described once: method, path, and the schemas of its path parameters, query, body and
 * success answer. The clients, the reference backend and the OpenAPI document are all built from this table.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import {
  Approval,
  ApprovalFields,
  ApprovalId,
  ApprovalWrite,
  ConnectorRegistration,
  ConnectorState,
  GetApprovalsQuery,
  hasOnlyKey,
  isBareTaskResultBody,
  isSuccessStatus,
  SuccessStatus,
  successEnvelope,
  Task,
  TaskResult,
  UiTemplate,
  UiTemplateWrite,
} from './integration.js';
import {
  AddUserResultWire,
  GetUsersQuery,
  NewUser,
  NewUserMapping,
  PageQuery,
  System,
  User,
  UserMapping,
  UserRef,
} from './management.js';
import { JsonObjectInput } from './primitives.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One endpoint of the service. `path` marks parameters as `:name`. */
export interface Endpoint {
  readonly number: number;
  readonly api: 'v1' | 'v2';
  readonly method: HttpMethod;
  readonly path: string;
  readonly summary: string;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** The success answer. For v2 the envelope is part of the schema. */
  readonly response: z.ZodType;
  /**
   * A cheaper check of a success answer than `response`, for the answers a client reads on every call: it accepts
   * nothing `response` refuses, and needs no transform, so an answer it accepts is used as it is; any other answer
   * is parsed with `response`, which names what is wrong.
   */
  readonly accepts?: (body: unknown) => boolean;
  /**
   * A cheaper check of a call's path parameters and body than `params` and `body`, for the calls a worker makes
   * after every task: it accepts nothing they refuse, and only what they give back unchanged, so an input it
   * accepts is sent as it is; any other input is parsed with the schemas, which name what is wrong.
   */
  readonly acceptsInput?: (params: unknown, body: unknown) => boolean;
}

// `.` and `..` cannot be sent as a path segment: URL parsers resolve them, and the request would go elsewhere.
const PathSegment = z
  .string()
  .min(1)
  .refine((value) => !isDotSegment(value), { message: 'cannot be "." or ".." in a URL path' });

function isDotSegment(value: string): boolean {
  return value === '.' || value === '..';
}
const IdParam = z.object({ id: PathSegment });
const ApprovalIdParam = z.object({ approvalId: ApprovalId });
const TaskIdParam = z.object({ taskId: PathSegment });

/** What {@link TaskIdParam} accepts and gives back unchanged, checked without zod: `{ taskId }`, a path segment. */
function isTaskIdParam(params: unknown): boolean {
  if (!hasOnlyKey(params, 'taskId')) return false;
  const { taskId } = params;
  return typeof taskId === 'string' && taskId !== '' && !isDotSegment(taskId);
}

function endpoint<const E extends Endpoint>(definition: E): E {
  return definition;
}

/** Every endpoint of the Management API (v1) and the Integration API (v2), keyed by the client method name. */
export const endpoints = {
  getUsers: endpoint({
    number: 1,
    api: 'v1',
    method: 'GET',
    path: '/v1/users',
    summary: 'Get users',
    query: GetUsersQuery,
    response: z.array(User),
  }),
  addUsers: endpoint({
    number: 2,
    api: 'v1',
    method: 'POST',
    path: '/v1/orgs/:id/users/bulk',
    summary: 'Add users',
    params: IdParam,
    body: z.array(NewUser).min(1),
    response: z.array(AddUserResultWire),
  }),
  deleteUsers: endpoint({
    number: 3,
    api: 'v1',
    method: 'DELETE',
    path: '/v1/users',
    summary: 'Delete users',
    body: z.array(UserRef).min(1),
    response: z.unknown(),
  }),
  getUserMappings: endpoint({
    number: 4,
    api: 'v1',
    method: 'GET',
    path: '/v1/users/:id/usermappings',
    summary: 'Get user mappings of a user',
    params: IdParam,
    response: z.array(UserMapping),
  }),
  getSystemUserMappings: endpoint({
    number: 5,
    api: 'v1',
    method: 'GET',
    path: '/v1/systems/:id/usermappings',
    summary: 'Get user mappings of a system',
    params: IdParam,
    query: PageQuery,
    response: z.array(UserMapping),
  }),
  addUserMappings: endpoint({
    number: 6,
    api: 'v1',
    method: 'POST',
    path: '/v1/systems/:id/usermappings/bulk',
    summary: 'Add user mappings',
    params: IdParam,
    body: z.array(NewUserMapping).min(1),
    response: z.unknown(),
  }),
  getSystems: endpoint({
    number: 7,
    api: 'v1',
    method: 'GET',
    path: '/v1/systems',
    summary: 'Get systems',
    response: z.array(System),
  }),
  getApproval: endpoint({
    number: 8,
    api: 'v2',
    method: 'GET',
    path: '/v2/rawapprovals/:approvalId',
    summary: 'Get approval',
    params: ApprovalIdParam,
    response: successEnvelope('approval', Approval),
  }),
  putApproval: endpoint({
    number: 9,
    api: 'v2',
    method: 'PUT',
    path: '/v2/rawapprovals/:approvalId',
    summary: 'Update approval',
    params: ApprovalIdParam,
    body: z.object({ approval: ApprovalFields }),
    response: SuccessStatus,
    accepts: isSuccessStatus,
  }),
  getApprovals: endpoint({
    number: 10,
    api: 'v2',
    method: 'GET',
    path: '/v2/rawapprovals',
    summary: 'Get approvals',
    query: GetApprovalsQuery,
    response: successEnvelope('approvals', z.array(Approval)),
  }),
  putApprovals: endpoint({
    number: 11,
    api: 'v2',
    method: 'PUT',
    path: '/v2/rawapprovals',
    summary: 'Update approvals',
    body: z.object({ approvals: z.array(ApprovalWrite).min(1) }),
    response: SuccessStatus,
    accepts: isSuccessStatus,
  }),
  registerConnector: endpoint({
    number: 12,
    api: 'v2',
    method: 'PATCH',
    path: '/v2/connector',
    summary: 'Update connector',
    body: ConnectorRegistration,
    response: SuccessStatus,
    accepts: isSuccessStatus,
  }),
  getTask: endpoint({
    number: 13,
    api: 'v2',
    method: 'GET',
    path: '/v2/connector/tasks',
    summary: 'Get task',
    // The spec does not show the answer when no task waits; `null` is what the reference backend sends.
    response: successEnvelope('task', Task.nullable().optional()),
  }),
  reportTaskResult: endpoint({
    number: 14,
    api: 'v2',
    method: 'PATCH',
    path: '/v2/connector/tasks/:taskId',
    summary: 'Update task result',
    params: TaskIdParam,
    body: z.object({ taskResult: TaskResult }),
    acceptsInput: (params, body) => isTaskIdParam(params) && isBareTaskResultBody(body),
    response: SuccessStatus,
    accepts: isSuccessStatus,
  }),
  getState: endpoint({
    number: 15,
    api: 'v2',
    method: 'GET',
    path: '/v2/connector/state',
    summary: 'Get connector state',
    response: successEnvelope('state', ConnectorState.nullable().optional()),
  }),
  putState: endpoint({
    number: 16,
    api: 'v2',
    method: 'PUT',
    path: '/v2/connector/state',
    summary: 'Update connector state',
    body: z.object({ state: JsonObjectInput }),
    response: SuccessStatus,
    accepts: isSuccessStatus,
  }),
  getUiTemplates: endpoint({
    number: 17,
    api: 'v2',
    method: 'GET',
    path: '/v2/connector/ui-templates',
    summary: 'Get UI templates',
    response: successEnvelope('uiTemplates', z.array(UiTemplate)),
  }),
  putUiTemplates: endpoint({
    number: 18,
    api: 'v2',
    // Published as GET with a JSON body, without a hyphen in the path; sent exactly so.
    method: 'GET',
    path: '/v2/connector/uitemplates',
    summary: 'Add or update UI templates',
    body: z.object({ uiTemplates: z.array(UiTemplateWrite).min(1) }),
    response: SuccessStatus,
    accepts: isSuccessStatus,
  }),
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof endpoints;

/** Fills `:name` placeholders of an endpoint path, percent-encoding each value. */
export function buildPath(template: string, params: Readonly<Record<string, string>> = {}): string {
  const parts = partsOf(template);
  let path = parts[0] as string;
  for (let index = 1; index < parts.length; index += 2) {
    const name = parts[index] as string;
    const value = params[name];
    if (value === undefined) {
      throw new ValidationError(`path parameters of ${template}`, [
        { path: [name], message: 'is required', code: 'invalid_type' },
      ]);
    }
    path += encodeURIComponent(value) + parts[index + 1];
  }
  return path;
}

// Each template split once, on every request after the first: literal text, a parameter's name, literal text, ….
const TEMPLATE_PARTS = new Map<string, readonly string[]>();

function partsOf(template: string): readonly string[] {
  let parts = TEMPLATE_PARTS.get(template);
  if (parts === undefined) {
    parts = template.split(/:([A-Za-z]+)/);
    TEMPLATE_PARTS.set(template, parts);
  }
  return parts;
}
