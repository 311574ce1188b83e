/** The console's endpoints, as the page calls them. Types are the backend's own, imported as types only. */
import type { EncryptedCredentials } from '../../../api/index.js';
import type { ConnectorCall, ConnectorHealth } from '../../activity/index.js';
import type { FaultInfo, FaultRuleInput } from '../../faults/schema.js';
import type {
  ApprovalRecord,
  ConnectorRecord,
  ConnectorStateRecord,
  Organization,
  SystemRecord,
  TaskEvent,
  TaskInfo,
  UiTemplateRecord,
  UserMappingRecord,
  UserRecord,
} from '../../store/index.js';
import type { ApprovalWrite, LiveEvent } from '../live.js';
import type { DemoSignIn } from '../routes.js';

export type {
  ConnectorCall,
  ConnectorHealth,
  EncryptedCredentials,
  FaultInfo,
  FaultRuleInput,
  LiveEvent,
  TaskEvent,
  TaskInfo,
  UiTemplateRecord,
};

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
  health: ConnectorHealth;
  /** Demo sign-ins of the system's approvers, to fill in on an action. */
  demoSignIns: DemoSignIn[];
  /** The backend's clock. */
  now: string;
}

/** An approval with its recent writes, and its approver as the organization knows them (when it does). */
export type ApprovalView = ApprovalRecord & { history: ApprovalWrite[]; approverUser?: UserRecord };

export type TaskWithTimeline = TaskInfo & { timeline: TaskEvent[] };

export interface ApprovalDetail {
  approval: ApprovalView;
  tasks: TaskWithTimeline[];
  now: string;
}

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
  let answer: Response;
  try {
    answer = await fetch(`/console/api${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    // The browser says only "Failed to fetch": nothing answered.
    throw new ConsoleError(
      0,
      'unreachable',
      'The backend cannot be reached: is it still running? The page reconnects when it is back.',
    );
  }
  const parsed: unknown = await answer.json().catch(() => undefined);
  if (!answer.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ConsoleError(
      answer.status,
      error?.code ?? 'http_error',
      plain(error?.message ?? answer.statusText),
    );
  }
  return parsed as T;
}

/** The backend's error messages, in words a reader of the page can act on. */
function plain(message: string): string {
  const words = message.replace(/^Unauthorized\. (\w)/, (_all, first: string) => first.toUpperCase());
  return words
    .replace(
      /^Not Found\. Failed to find the an item (\w+) (.+)$/,
      (_all, collection: string, id: string) => `There is no ${collection.replace(/s$/, '')} “${id}”.`,
    )
    .replace(/Too small: expected number to be >=(\d+)/g, 'must be $1 or more')
    .replace(/Too big: expected number to be <=(\d+)/g, 'must be $1 or less');
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
  approvals(
    systemId: string,
    query: { resolved?: boolean; search?: string; limit: number; offset?: number },
  ) {
    const params = new URLSearchParams({ limit: String(query.limit), offset: String(query.offset ?? 0) });
    if (query.resolved !== undefined) params.set('resolved', String(query.resolved));
    if (query.search) params.set('search', query.search);
    return request<{ total: number; approvals: ApprovalView[] }>(
      'GET',
      `/systems/${encodeURIComponent(systemId)}/approvals?${params}`,
    );
  },
  approval: (systemId: string, approvalId: string) =>
    request<ApprovalDetail>(
      'GET',
      `/systems/${encodeURIComponent(systemId)}/approvals/${encodeURIComponent(approvalId)}`,
    ),
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
