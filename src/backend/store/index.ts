import { Approvals } from './approvals.js';
import { StoreChanges } from './changes.js';
import { Connectors } from './connectors.js';
import type { StoreContext } from './context.js';
import { Database } from './database.js';
import { UserMappings } from './mappings.js';
import { Organizations } from './organizations.js';
import { ConnectorStates } from './state.js';
import { Systems } from './systems.js';
import { Tasks } from './tasks.js';
import { UiTemplates } from './templates.js';
import { hashToken, Tokens } from './tokens.js';
import { Users } from './users.js';

export type { ApprovalBrowseQuery, ApprovalChange, ApprovalListQuery, ApprovalRecord } from './approvals.js';
export type { StoreChange, StoreChangeListener, StoreChanges, TaskEvent } from './changes.js';
export type { ConnectorChange, ConnectorRecord } from './connectors.js';
export type { NewMapping, UserMappingRecord } from './mappings.js';
export type { NewOrganization, Organization } from './organizations.js';
export type { ConnectorStateRecord } from './state.js';
export type { NewSystem, SystemRecord } from './systems.js';
export type { NewTask, TaskInfo, TaskStatus, WireTask } from './tasks.js';
export type { UiTemplateChange, UiTemplateRecord } from './templates.js';
export { hashToken, type Principal } from './tokens.js';
export type { AddUserOutcome, NewUserInput, UserListQuery, UserRecord } from './users.js';

export interface StoreOptions {
  /** SQLite file; in memory when absent. */
  file?: string | undefined;
  now: () => number;
  /** Tokens no service token may equal (the admin token). */
  reservedTokens?: readonly string[];
}

/** Every table of the service behind one object, one repository per resource. */
export class Store {
  readonly db: Database;
  readonly organizations: Organizations;
  readonly systems: Systems;
  readonly tokens: Tokens;
  readonly users: Users;
  readonly mappings: UserMappings;
  readonly approvals: Approvals;
  readonly connectors: Connectors;
  readonly states: ConnectorStates;
  readonly templates: UiTemplates;
  readonly tasks: Tasks;
  /** Every committed write, for those who watch the store live. */
  readonly changes = new StoreChanges();

  constructor(options: StoreOptions) {
    this.db = new Database(options.file);
    const ctx: StoreContext = {
      db: this.db,
      now: options.now,
      // Built only when someone watches: an Update approvals batch notes one change per approval.
      changed: (change) => {
        if (!this.changes.watched) return;
        const built = typeof change === 'function' ? change() : change;
        this.db.afterCommit(() => this.changes.publish(built));
      },
    };
    this.organizations = new Organizations(ctx);
    this.systems = new Systems(ctx);
    this.tokens = new Tokens(ctx, new Set((options.reservedTokens ?? []).map(hashToken)));
    this.users = new Users(ctx);
    this.mappings = new UserMappings(ctx);
    this.approvals = new Approvals(ctx);
    this.connectors = new Connectors(ctx);
    this.states = new ConnectorStates(ctx);
    this.templates = new UiTemplates(ctx);
    this.tasks = new Tasks(ctx, this.approvals, this.connectors);
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn);
  }

  close(): void {
    this.db.close();
  }
}
