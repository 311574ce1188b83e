/** The console's endpoints, as the page calls them. Types are the backend's own, imported as types only. */
import type { EncryptedCredentials } from '../../../api/index.js';
import type { FaultInfo, FaultRuleInput } from '../../faults/schema.js';
import type {
  ApprovalRecord,
  ConnectorRecord,
  ConnectorStateRecord,
  Organization,
  SystemRecord,
  TaskInfo,
  UiTemplateRecord,
  UserMappingRecord,
  UserRecord,
} from '../../store/index.js';
import type { ApprovalWrite, LiveEvent } from '../live.js';

export type { EncryptedCredentials, FaultInfo, FaultRuleInput, LiveEvent, TaskInfo, UiTemplateRecord };

export interface OrganizationView extends Organization {
  users: UserRecord[];
  systems: (SystemRecord & { mappings: UserMappingRecord[] })[];
}

export interface SystemView {
  system: SystemRecord;
  organization: Organization;
  connector: ConnectorRecord;
  templates: UiTemplateRecord[];
  state: ConnectorStateRecord;
  /** The backend's clock. */
  now: string;
}

export type ApprovalView = ApprovalRecord & { history: ApprovalWrite[] };

/** An answer the console refused, with the admin API's error code. */
export class ConsoleError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const CSRF_HEADER = 'x-console-csrf';
let csrfToken: string | undefined;

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== undefined) headers[CSRF_HEADER] = csrfToken;
  const answer = await fetch(`/console/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed: unknown = await answer.json().catch(() => undefined);
  if (!answer.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ConsoleError(answer.status, error?.code ?? 'http_error', error?.message ?? answer.statusText);
  }
  return parsed as T;
}

export const api = {
  /** Exchanges a login token (or the admin token) for the session cookie. */
  async signIn(token: string): Promise<void> {
    csrfToken = (await request<{ csrfToken: string }>('POST', '/session', { token })).csrfToken;
  },
  /** Whether the browser has a session; reads its CSRF token when it has. */
  async resume(): Promise<boolean> {
    try {
      csrfToken = (await request<{ csrfToken: string }>('GET', '/session')).csrfToken;
      return true;
    } catch (error) {
      if (error instanceof ConsoleError && error.status === 401) return false;
      throw error;
    }
  },
  async signOut(): Promise<void> {
    await request('DELETE', '/session');
    csrfToken = undefined;
  },
  organizations: () => request<OrganizationView[]>('GET', '/organizations'),
  system: (systemId: string) => request<SystemView>('GET', `/systems/${encodeURIComponent(systemId)}`),
  approvals(systemId: string, query: { resolved?: boolean; search?: string; limit: number }) {
    const params = new URLSearchParams({ limit: String(query.limit) });
    if (query.resolved !== undefined) params.set('resolved', String(query.resolved));
    if (query.search) params.set('search', query.search);
    return request<{ total: number; approvals: ApprovalView[] }>(
      'GET',
      `/systems/${encodeURIComponent(systemId)}/approvals?${params}`,
    );
  },
  tasks: (systemId: string) =>
    request<{ now: string; tasks: TaskInfo[] }>('GET', `/systems/${encodeURIComponent(systemId)}/tasks`),
  createTask: (
    systemId: string,
    body: {
      type: string;
      approvalId: string;
      approveComments: string;
      sealedCredentials?: EncryptedCredentials;
    },
  ) => request<TaskInfo>('POST', `/systems/${encodeURIComponent(systemId)}/tasks`, body),
  faults: () => request<FaultInfo[]>('GET', '/faults'),
  injectFault: (rule: FaultRuleInput) => request<FaultInfo>('POST', '/faults', rule),
  clearFault: (id: number) => request('DELETE', `/faults/${id}`),
  clearFaults: () => request('DELETE', '/faults'),
  expireLeases: (systemId?: string) =>
    request<{ expired: number }>('POST', '/leases/expire', systemId === undefined ? {} : { systemId }),
};
