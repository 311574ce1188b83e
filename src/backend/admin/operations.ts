import { applySeed, parseSeed, type SeededSignIns, seededSignIns } from '../seed/load.js';
import type { SeedInput } from '../seed/schema.js';
import type {
  ApprovalRecord,
  ConnectorRecord,
  ConnectorStateRecord,
  NewOrganization,
  NewSystem,
  NewTask,
  NewUserInput,
  Organization,
  Store,
  SystemRecord,
  TaskInfo,
  UserRecord,
} from '../store/index.js';

/** Options of {@link AdminOperations.createTenant}. */
export interface NewTenant {
  /** @default 'Organization' */
  organizationName?: string;
  /** @default 'System' */
  systemName?: string;
  /** The management token to store. @default a random token */
  managementToken?: string;
  /** The connector token to store. @default a random token */
  connectorToken?: string;
}

/** An organization with one system, and a token for each API. */
export interface Tenant {
  organization: Organization;
  /** Opens the v1 API for `organization`. */
  managementToken: string;
  system: SystemRecord;
  /** Opens the v2 API for `system`. */
  connectorToken: string;
}

/**
 * What an operator can do outside the service's own API: the programmatic handle and the admin HTTP API are both
 * built on it. Each call runs in one transaction; failures are {@link ServiceError}s.
 */
export class AdminOperations {
  /** `seeded` hears of the console sign-ins of every seed loaded, by system id. */
  constructor(
    private readonly store: Store,
    private readonly seeded: (signIns: SeededSignIns) => void = () => {},
  ) {}

  createOrganization(input: NewOrganization = {}): Organization {
    return this.store.transaction(() => this.store.organizations.create(input));
  }

  /** Stores a management token of the organization and returns it: the one given, or a new random one. */
  createManagementToken(orgId: string, options: { token?: string } = {}): string {
    return this.store.transaction(() => {
      this.store.organizations.get(orgId);
      return this.store.tokens.createManagement(orgId, options.token);
    });
  }

  createUser(orgId: string, input: NewUserInput): UserRecord {
    return this.store.transaction(() => {
      this.store.organizations.get(orgId);
      return this.store.users.create(orgId, input);
    });
  }

  createSystem(orgId: string, input: NewSystem = {}): SystemRecord {
    return this.store.transaction(() => {
      this.store.organizations.get(orgId);
      return this.store.systems.create(orgId, input);
    });
  }

  /** Stores a connector token of the system and returns it: the one given, or a new random one. */
  createConnectorToken(systemId: string, options: { token?: string } = {}): string {
    return this.store.transaction(() => {
      const system = this.store.systems.get(systemId);
      return this.store.tokens.createConnector(system.orgId, system.id, options.token);
    });
  }

  /** An organization, a management token, a system of it and a connector token, in one call. */
  createTenant(options: NewTenant = {}): Tenant {
    return this.store.transaction(() => {
      const organization = this.store.organizations.create({ name: options.organizationName });
      const system = this.store.systems.create(organization.id, { name: options.systemName });
      return {
        organization,
        managementToken: this.store.tokens.createManagement(organization.id, options.managementToken),
        system,
        connectorToken: this.store.tokens.createConnector(organization.id, system.id, options.connectorToken),
      };
    });
  }

  /**
   * Creates a waiting task. Refused for a task type the connector has not registered (409), an approval the system
   * does not hold (404), or, when the connector registered `authRequired`, an expired key (409) or missing
   * credentials (400).
   *
   * The task remembers the trace it was created in (`createdTraceId`): `traceId` when given (the admin API and the
   * console give their request's), otherwise the active OpenTelemetry span's, if any.
   */
  createTask(input: NewTask, traceId?: string): TaskInfo {
    return this.store.transaction(() => {
      this.store.systems.get(input.systemId);
      return this.store.tasks.create(input, traceId);
    });
  }

  /** A task's status, deliveries and result; `undefined` for an unknown task. */
  getTask(taskId: string): TaskInfo | undefined {
    return this.store.tasks.info(taskId);
  }

  listTasks(systemId: string): TaskInfo[] {
    this.store.systems.get(systemId);
    return this.store.tasks.list(systemId);
  }

  /** Ends leases now so their tasks are offered again: one task's, one system's, or all. Returns how many ended. */
  expireLeases(filter: { taskId?: string; systemId?: string } = {}): number {
    return this.store.transaction(() => this.store.tasks.expireLeases(filter));
  }

  /** Every approval of the system with its data, in ascending `(lastModified, id)`. */
  listApprovals(systemId: string): ApprovalRecord[] {
    this.store.systems.get(systemId);
    return this.store.approvals.all(systemId);
  }

  getConnector(systemId: string): ConnectorRecord {
    this.store.systems.get(systemId);
    return this.store.connectors.get(systemId);
  }

  getState(systemId: string): ConnectorStateRecord {
    this.store.systems.get(systemId);
    return this.store.states.get(systemId);
  }

  /**
   * The system a connector token opens: how a tool that was given only the token (`connector dev`, from a seed)
   * finds the system's tasks and approvals. `undefined` for a management token and for a token the backend does not
   * know.
   */
  systemOfToken(token: string): SystemRecord | undefined {
    const principal = this.store.tokens.resolve(token);
    return principal?.kind === 'connector' ? this.store.systems.find(principal.systemId) : undefined;
  }

  /** Loads a seed, all or nothing; throws a `ValidationError` naming the first problem. */
  seed(seed: SeedInput): void {
    const parsed = parseSeed(seed);
    this.seeded(seededSignIns(this.store, parsed, applySeed(this.store, parsed)));
  }
}
