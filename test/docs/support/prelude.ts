/**
 * What the docs' examples leave to their reader, supplied by the test of examples: the reader's service URL and
 * tokens, their source system, their connector. The names are declared once, for every example, as globals; an
 * example's own declaration or import of a name hides the global, so a name the kit exports is never one of them
 * (the test checks), and an example that forgets to import a kit name still fails.
 * @module
 */
import { z } from 'zod';
import type { ReferenceBackend, Tenant } from '../../../src/backend/index.js';
import { IntegrationClient } from '../../../src/client/index.js';
import { Connector, incremental, type Logger, type SourceApproval, task } from '../../../src/index.js';

/** The declarations every type-checked example compiles with, as a global script. */
export const EXAMPLE_PRELUDE = `
type Kit = typeof import('approval-connector-kit');

// The Approval Service and the reader's tokens for it.
declare const baseUrl: string;
declare const token: string;
declare const connectorToken: string;
declare const managementToken: string;
declare const orgId: string;
declare const systemId: string;
declare const signal: AbortSignal;
// The reference backend and a tenant of it, as startReferenceBackend() and createTenant() give them.
declare const backend: import('approval-connector-kit/backend').ReferenceBackend;
declare const tenant: import('approval-connector-kit/backend').Tenant;
// A client of the service, and approvals to send with it.
declare const client: import('approval-connector-kit/client').IntegrationClient;
declare const approvals: import('approval-connector-kit/client').ApprovalWrite[];
declare const state: Record<string, unknown>;

// The reader's connector and the source system it reads.
declare const KitConnector: Kit['Connector'];
declare class MyConnector extends KitConnector {
  constructor(...args: unknown[]);
  readonly tasks: { approve: import('approval-connector-kit').TaskDeclaration<typeof Approve> };
  readonly source: import('approval-connector-kit').ConnectorSource;
}
declare const Approve: import('zod').ZodObject<{ approval: import('zod').ZodObject<{ id: import('zod').ZodString }> }>;
/** A source system's client, as the reader writes it. */
interface SourceSystem {
  approve(id: string, options?: { signal?: AbortSignal }): Promise<void>;
  reject(id: string, comments: string, options?: { signal?: AbortSignal }): Promise<void>;
  isOpen(id: string): Promise<boolean>;
  changedSince(since: Date | undefined): AsyncIterable<import('approval-connector-kit').SourceApproval>;
  lookup(ids: readonly string[]): AsyncIterable<import('approval-connector-kit').SourceApproval>;
  users(): Iterable<{ systemUserId: string; email: string }>;
}
declare const source: SourceSystem;
// The reader's test double of their source system, and its driver for the conformance battery.
declare class Requests {}
type RequestsDriver = import('approval-connector-kit/conformance').SourceDriver & { readonly requests: SourceSystem };
declare const RequestsDriver: new (requests?: Requests) => RequestsDriver;
declare const sourceClient: SourceSystem;
interface MySourceClient extends SourceSystem {}
declare const MySourceClient: new () => MySourceClient;
declare function alreadyDecided(id: string): Exclude<import('approval-connector-kit').PrecheckVerdict, true>;
/** A Jira client, as the reader writes it. */
declare class JiraClient {
  transition(key: string, status: string, options: { signal: AbortSignal; idempotencyKey: string }): Promise<void>;
  status(key: string, signal: AbortSignal): Promise<string>;
  issuesUpdatedSince(since: Date | undefined, signal: AbortSignal): AsyncIterable<import('approval-connector-kit').SourceApproval>;
  users(): Iterable<{ systemUserId: string; email: string }>;
}
declare const jira: JiraClient;
declare const sap: { login(user: string, password: string): Promise<void> };
// What the kit gives a connector's code, and what the service sends.
declare const logger: import('approval-connector-kit').Logger;
declare const credentials: import('approval-connector-kit').Credentials;
declare const leased: import('approval-connector-kit/client').Task;
declare const json: unknown;
declare const worker: import('approval-connector-kit/worker').ConnectorWorker;

// The purchase requests of examples/purchase-requests, as the README runs them.
declare const PurchaseRequestConnector: typeof import('../../examples/purchase-requests/connector.js').PurchaseRequestConnector;
declare const purchaseRequests: import('../../examples/purchase-requests/source.js').PurchaseRequests;
declare const InMemoryPurchaseRequests: typeof import('../../examples/purchase-requests/source.js').InMemoryPurchaseRequests;
declare class PurchaseRequestsApi extends InMemoryPurchaseRequests {
  constructor(url: string);
}
`;

/** Files the examples import as their reader's own, by their path in the repo. */
export const EXAMPLE_FILES: Record<string, string> = {
  // The project of runWorker's example: its connector and Jira client.
  'src/worker/process/run-worker.project/src/connector.ts': `
import { Connector, type ConnectorSource } from 'approval-connector-kit';
import type { JiraClient } from './jira.js';
export declare class JiraConnector extends Connector {
  constructor(jira: JiraClient);
  readonly tasks: {};
  readonly source: ConnectorSource;
}
`,
  'src/worker/process/run-worker.project/src/jira.ts': `
export declare class JiraClient {
  constructor(site: string);
}
`,
  // docs/worker.md's project: its connector's Jira client.
  'docs/worker.md.project/src/jira.ts': `
import type { Logger, SourceApproval } from 'approval-connector-kit';
export declare class JiraClient {
  constructor(options: { site: string; token: string; logger: Logger });
  approve(id: string): Promise<void>;
  changedSince(since: Date | undefined): AsyncIterable<SourceApproval>;
}
`,
};

/** The reader's source system, in memory: three open approvals, PO-1 to PO-3, for `ada`. */
class MemorySystem {
  readonly decided = new Map<string, string>();

  async approve(id: string): Promise<void> {
    this.decided.set(id, 'approved');
  }

  async reject(id: string, comments: string): Promise<void> {
    this.decided.set(id, `rejected: ${comments}`);
  }

  async isOpen(id: string): Promise<boolean> {
    return !this.decided.has(id);
  }

  async *changedSince(since: Date | undefined): AsyncIterable<SourceApproval> {
    for (const n of [1, 2, 3]) {
      const lastModified = new Date(Date.UTC(2026, 4, 1, 10, n));
      if (since !== undefined && lastModified < since) continue;
      const id = `PO-${n}`;
      yield { id, schemaId: 'po', approver: 'ada', resolved: this.decided.has(id), lastModified, data: {} };
    }
  }

  async *lookup(ids: readonly string[]): AsyncIterable<SourceApproval> {
    for await (const approval of this.changedSince(undefined)) if (ids.includes(approval.id)) yield approval;
  }

  users(): Iterable<{ systemUserId: string; email: string }> {
    return [{ systemUserId: 'ada', email: 'ada@example.com' }];
  }
}

const Approve = z.object({ approval: z.object({ id: z.string() }) });

/** The reader's connector over a {@link MemorySystem}. */
class MyConnector extends Connector {
  readonly tasks = {
    approve: task({ input: Approve, run: ({ approval }) => this.system.approve(approval.id) }),
  };
  readonly source = incremental({ changes: ({ since }) => this.system.changedSince(since) });

  constructor(private readonly system: MemorySystem = new MemorySystem()) {
    super();
  }
}

const silent: Logger = {
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  fatal: () => {},
  child: () => silent,
};

/**
 * The values of the prelude's names, for an example that runs: a tenant of the backend, clients of it, and the
 * reader's connector over a source system in memory.
 */
export function runtimeGivens(backend: ReferenceBackend, tenant: Tenant): Record<string, unknown> {
  const baseUrl = backend.url;
  return {
    baseUrl,
    token: tenant.connectorToken,
    connectorToken: tenant.connectorToken,
    managementToken: tenant.managementToken,
    orgId: tenant.organization.id,
    systemId: tenant.system.id,
    signal: new AbortController().signal,
    backend,
    tenant,
    client: new IntegrationClient({ baseUrl, token: tenant.connectorToken }),
    approvals: [
      { id: 'PO-1', schemaId: 'po', approver: 'ada', resolved: false, lastModified: new Date(), data: {} },
    ],
    state: { cursor: '2026-05-01T10:00:00.000Z' },
    jira: new MemorySystem(),
    logger: silent,
    source: new MemorySystem(),
    sourceClient: new MemorySystem(),
    MySourceClient: MemorySystem,
    MyConnector,
    Approve,
    alreadyDecided: (id: string) => ({
      status: 'systemError',
      meta: { code: 'already_decided', message: id },
    }),
    sap: { login: async () => {} },
    json: {
      id: 'PO-1',
      schemaId: 'po',
      approver: 'ada',
      resolved: false,
      lastModified: '2026-05-01T10:00:00.000Z',
    },
  };
}
