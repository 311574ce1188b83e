/**
 * The simulated instance's data: its users, change requests, requested items and their approval records, and the
 * activity that changes them over time (a change raised, an item ordered, a record edited, an approval decided in
 * ServiceNow itself, a change cancelled). Everything follows from the seed and the steps taken, so two instances of
 * one seed that took the same steps hold the same records. Every change stamps `sys_updated_on` (one-second
 * precision, UTC) and counts `sys_mod_count`, and each insert, update and delete of a record is told to `onChange`:
 * where the push path's business rules run.
 * @module
 */
import { APPROVAL_STATE_LABELS, TABLES, TASK_TABLES, wallClock } from './tables.js';

/** A record: each field's value as the Table API answers it (a string). */
export type Row = Record<string, string>;

/** What a business rule runs after. */
export type RecordOperation = 'insert' | 'update' | 'delete';

/** A user who signs in to the simulated instance. */
export interface SimulatedUser {
  sysId: string;
  userName: string;
  password: string;
  firstName: string;
  lastName: string;
  email: string;
  timeZone: string;
}

/** A decision on an approval record: through the Table API (`api`), or in ServiceNow itself (`ui`). */
export interface SimulatedDecision {
  approval: string;
  state: string;
  userName: string;
  comment: string;
  via: 'api' | 'ui';
}

/** What one step of activity did. */
export type SimulatedEvent =
  | { kind: 'raised' | 'ordered' | 'edited' | 'cancelled'; table: string; sysId: string; number: string }
  | { kind: 'decided'; approval: string; state: string; userName: string }
  | { kind: 'idle' };

/** What a test chooses of a new approved record rather than leaving it to the seed. */
export interface NewRecordChoices {
  /** `change_request` or `sc_req_item`. @default drawn from the seed */
  table?: 'change_request' | 'sc_req_item';
  /** Its short description. */
  title?: string;
  /** The approvers' sys_ids: one approval record each. */
  approvers?: readonly string[];
}

/** The instance's time zone: the one a user without a time zone of their own reads date-times in. */
export const INSTANCE_TIME_ZONE = 'America/Los_Angeles';

/** The integration user the connector syncs with. */
export const INTEGRATION_USER: SimulatedUser = {
  sysId: 'd06c10d48c72f62bc3f2ac46b6cfc51c',
  userName: 'approval.sync',
  password: 'sync-Now-2026',
  firstName: 'Approval',
  lastName: 'Sync',
  email: 'approval.sync@example.com',
  timeZone: 'GMT',
};

/** The approvers, with fixed sys_ids whatever the seed (the service's seed names them). */
export const APPROVERS: readonly SimulatedUser[] = [
  person('d723d86fb7bc88f601d790b9ad90ea00', 'Nora', 'Ibsen', 'Europe/Oslo'),
  person('48425267360b810f9b409ab535d18f32', 'Ravi', 'Patel', 'Asia/Kolkata'),
  person('4756ad675987576bb7947df46d408ac5', 'Sofia', 'Marquez', 'America/Mexico_City'),
  person('e9498326bd905bc88505a1fcd5a0d9a4', 'Tom', 'Becker', ''),
];

/** Who raises changes and orders items. */
const REQUESTERS: readonly SimulatedUser[] = [
  person('bd10b6e65097ce000ebac1da326f648c', 'Lena', 'Vogt', 'Europe/Berlin'),
  person('890a5869dfc3afde7b956f4ba8088cb9', 'Marcus', 'Hale', ''),
];

const HOUR = 3_600_000;
/** The initial records were raised this far apart, the last one now. */
const INITIAL_SPACING_MS = 17 * 60_000;

const CHANGES = [
  'Patch the VPN concentrators',
  'Upgrade the payroll database to 19c',
  'Rotate the TLS certificates of the web tier',
  'Move the build agents to the new subnet',
  'Decommission the old file server',
];
const ITEMS: readonly (readonly [name: string, price: string])[] = [
  ['Developer laptop', '2199.00'],
  ['Standing desk', '649.00'],
  ['Adobe Creative Cloud licence', '89.99'],
  ['External monitor 27"', '379.00'],
];

/** The records of the simulated instance, and what changes them; see the module's documentation. */
export class SimulatedInstance {
  readonly #tables = new Map<string, Map<string, Row>>(
    Object.keys(TABLES).map((table) => [table, new Map()]),
  );
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #collisions: () => boolean;
  readonly #decisions: SimulatedDecision[] = [];
  readonly #comments: { approval: string; userName: string; text: string }[] = [];
  #numbers = 0;
  /** Every change is stamped with this second while set: the initial records', or the collisions'. */
  #heldSecond: number | undefined;
  #colliding = false;
  /** Told each insert, update and delete of a record (after it), as an after business rule is. */
  onChange: ((table: string, row: Readonly<Row>, operation: RecordOperation) => void) | undefined;

  constructor(options: { seed: number; requests: number; now: () => number; collisions?: () => boolean }) {
    this.#random = seeded(options.seed);
    this.#now = options.now;
    this.#collisions = options.collisions ?? (() => false);
    for (const user of [INTEGRATION_USER, ...APPROVERS, ...REQUESTERS]) {
      this.#put('sys_user', user.sysId, {
        user_name: user.userName,
        first_name: user.firstName,
        last_name: user.lastName,
        name: `${user.firstName} ${user.lastName}`,
        email: user.email,
        active: 'true',
        locked_out: 'false',
        time_zone: user.timeZone,
      });
    }
    for (const [name] of ITEMS) this.#put('sc_cat_item', this.#sysId(), { name });
    // Raised over the hours before the start, each at its own second.
    for (let index = 0; index < options.requests; index += 1) {
      this.#heldSecond =
        Math.floor((this.#now() - (options.requests - index) * INITIAL_SPACING_MS) / 1000) * 1000;
      this.raise();
    }
    this.#heldSecond = undefined;
    this.#colliding = false;
  }

  /** The instance's clock as it answers a call (its `Date`): the clock given, which collisions do not hold. */
  time(): number {
    return this.#now();
  }

  /**
   * Now, as the instance stamps a change: the clock given, or, while `collisions` says so, the second it said so
   * first, so that every change shares one `sys_updated_on`.
   */
  now(): number {
    const colliding = this.#collisions();
    if (colliding && !this.#colliding) this.#heldSecond = Math.floor(this.#now() / 1000) * 1000;
    if (!colliding && this.#colliding) this.#heldSecond = undefined;
    this.#colliding = colliding;
    return this.#heldSecond ?? this.#now();
  }

  /** The records of a table, in the order they were inserted; `undefined` for a table the instance has not. */
  rows(table: string): Readonly<Row>[] | undefined {
    const rows = this.#tables.get(table);
    return rows === undefined ? undefined : [...rows.values()];
  }

  /** One record; a task's by its sys_id in any task table when `table` is `task`. */
  row(table: string, sysId: string): Readonly<Row> | undefined {
    if (table === 'task') return TASK_TABLES.map((one) => this.#tables.get(one)?.get(sysId)).find(Boolean);
    return this.#tables.get(table)?.get(sysId);
  }

  /** The table a task's record is in. */
  taskTable(sysId: string): string | undefined {
    return TASK_TABLES.find((table) => this.#tables.get(table)?.has(sysId));
  }

  /** The user of a user name, signing in. */
  user(userName: string): Readonly<Row> | undefined {
    return this.rows('sys_user')?.find((row) => row.user_name === userName);
  }

  /** The approval records of a record. */
  approvalsOf(documentId: string): Readonly<Row>[] {
    return [...(this.#tables.get('sysapproval_approver')?.values() ?? [])].filter(
      (row) => row.document_id === documentId,
    );
  }

  decisions(): readonly SimulatedDecision[] {
    return [...this.#decisions];
  }

  /** The comments added to approval records (the `comments` journal), oldest first. */
  comments(): readonly { approval: string; userName: string; text: string }[] {
    return [...this.#comments];
  }

  /** The time zone a user reads date-times in: their own, or the instance's. */
  timeZoneOf(user: Readonly<Row> | undefined): string {
    return user?.time_zone || INSTANCE_TIME_ZONE;
  }

  /** A date-time value as `user` reads it. */
  display(value: string, user: Readonly<Row> | undefined): string {
    return wallClock(value, this.timeZoneOf(user));
  }

  /**
   * A change request or a requested item waiting for approval, with an approval record for each approver
   * (drawn from the seed unless chosen).
   */
  raise(choices: NewRecordChoices = {}): {
    table: string;
    sysId: string;
    number: string;
    approvals: string[];
  } {
    const table = choices.table ?? (this.#random() < 0.6 ? 'change_request' : 'sc_req_item');
    const approvers = choices.approvers ?? this.#approvers(table === 'change_request' ? this.#int(1, 2) : 1);
    const requester = this.#pick(REQUESTERS).sysId;
    const start = this.now() + this.#int(24, 96) * HOUR;
    const due = this.#at(start - 12 * HOUR);
    let values: Row;
    if (table === 'change_request') {
      values = {
        number: `CHG${String(30_001 + this.#numbers++).padStart(7, '0')}`,
        short_description: choices.title ?? this.#pick(CHANGES),
        description: 'Planned work, rolled out by the infrastructure team.',
        type: this.#pick(['normal', 'normal', 'emergency']),
        risk: String(this.#int(1, 3)),
        impact: String(this.#int(1, 3)),
        priority: String(this.#int(2, 4)),
        category: this.#pick(['Network', 'Software', 'Hardware']),
        requested_by: requester,
        start_date: this.#at(start),
        end_date: this.#at(start + 2 * HOUR),
        state: '-3',
        approval: 'requested',
      };
    } else {
      const [name, price] = this.#pick(ITEMS);
      const request = this.#put('sc_request', this.#sysId(), {
        number: `REQ${String(10_001 + this.#numbers).padStart(7, '0')}`,
        requested_for: requester,
        approval: 'requested',
      });
      const item = this.rows('sc_cat_item')?.find((row) => row.name === name);
      values = {
        number: `RITM${String(10_001 + this.#numbers++).padStart(7, '0')}`,
        short_description: choices.title ?? name,
        cat_item: item?.sys_id ?? '',
        quantity: String(this.#int(1, 3)),
        price,
        requested_for: requester,
        request: request.sys_id ?? '',
        stage: 'waiting_for_approval',
        due_date: this.#at(start + 72 * HOUR),
        approval: 'requested',
      };
    }
    const record = this.#put(table, this.#sysId(), values, requester);
    const approvals = approvers.map((approver) => {
      const approval = this.#put(
        'sysapproval_approver',
        this.#sysId(),
        {
          approver,
          state: 'requested',
          source_table: table,
          document_id: record.sys_id!,
          sysapproval: record.sys_id!,
          due_date: due,
          comments: '',
        },
        'system',
      );
      return approval.sys_id!;
    });
    return { table, sysId: record.sys_id!, number: record.number!, approvals };
  }

  /** Changes fields of a record, as a user of the instance would; the change is told. */
  update(table: string, sysId: string, changes: Readonly<Row>, by: string): Readonly<Row> {
    const row = this.#tables.get(table)?.get(sysId);
    if (row === undefined) throw new Error(`No ${table} record ${sysId}`);
    const { comments, ...fields } = changes;
    Object.assign(row, fields, {
      sys_updated_on: this.#stamp(),
      sys_updated_by: by,
      sys_mod_count: String(Number(row.sys_mod_count) + 1),
    });
    if (comments !== undefined && comments !== '')
      this.#comments.push({ approval: sysId, userName: by, text: comments });
    this.onChange?.(table, row, 'update');
    return row;
  }

  /**
   * Deletes a record; deleting an approved record deletes its approval records with it (a cascade delete, which runs
   * their business rules). Each deletion is told.
   */
  delete(table: string, sysId: string): void {
    const row = this.#tables.get(table)?.get(sysId);
    if (row === undefined) throw new Error(`No ${table} record ${sysId}`);
    this.#tables.get(table)!.delete(sysId);
    this.onChange?.(table, row, 'delete');
    for (const approval of this.approvalsOf(sysId)) {
      this.#tables.get('sysapproval_approver')?.delete(approval.sys_id!);
      this.onChange?.('sysapproval_approver', approval, 'delete');
    }
  }

  /**
   * An approver's decision on a waiting approval record, and what the record it approves does about it (the
   * workflow's rule): one rejection rejects it, and the approvals still requested are no longer required; once
   * every approval is approved, it is approved.
   */
  decide(
    approvalId: string,
    state: 'approved' | 'rejected',
    userName: string,
    comment: string,
    via: 'api' | 'ui',
  ) {
    const approval = this.update('sysapproval_approver', approvalId, { state, comments: comment }, userName);
    this.#decisions.push({ approval: approvalId, state, userName, comment, via });
    const table = approval.source_table!;
    const siblings = this.approvalsOf(approval.document_id!);
    if (state === 'rejected') {
      for (const other of siblings.filter((row) => row.state === 'requested')) {
        this.update('sysapproval_approver', other.sys_id!, { state: 'not_required' }, 'system');
      }
      this.update(table, approval.document_id!, { approval: 'rejected' }, 'system');
    } else if (siblings.every((row) => row.state === 'approved')) {
      this.update(table, approval.document_id!, { approval: 'approved' }, 'system');
    }
    return approval;
  }

  /** Cancels a record waiting for approval: its approvals still requested are cancelled. */
  cancel(table: string, sysId: string): void {
    const cancelled: Row = table === 'change_request' ? { state: '4' } : { stage: 'Request_Cancelled' };
    this.update(table, sysId, cancelled, 'system');
    for (const approval of this.approvalsOf(sysId).filter((row) => row.state === 'requested')) {
      this.update('sysapproval_approver', approval.sys_id!, { state: 'cancelled' }, 'system');
    }
  }

  /** One step of activity, drawn from the seed. */
  step(): SimulatedEvent {
    const waiting = this.rows('sysapproval_approver')?.filter((row) => row.state === 'requested') ?? [];
    const kind =
      waiting.length === 0
        ? 'raise'
        : this.#weighted(['raise', 3], ['edit', 2], ['decide', 3], ['cancel', 1]);
    if (kind === 'raise') {
      const { table, sysId, number } = this.raise();
      return { kind: table === 'change_request' ? 'raised' : 'ordered', table, sysId, number };
    }
    const approval = this.#pick(waiting);
    const table = approval.source_table!;
    const record = this.row(table, approval.document_id!)!;
    if (kind === 'edit') {
      const title = `${record.short_description!.replace(/ \(revised\)$/, '')} (revised)`;
      this.update(table, record.sys_id!, { short_description: title }, 'system');
      return { kind: 'edited', table, sysId: record.sys_id!, number: record.number! };
    }
    if (kind === 'cancel') {
      this.cancel(table, record.sys_id!);
      return { kind: 'cancelled', table, sysId: record.sys_id!, number: record.number! };
    }
    const state = this.#random() < 0.75 ? 'approved' : 'rejected';
    const userName = this.row('sys_user', approval.approver!)?.user_name ?? 'system';
    this.decide(approval.sys_id!, state, userName, state === 'rejected' ? 'Not this quarter' : '', 'ui');
    return { kind: 'decided', approval: approval.sys_id!, state, userName };
  }

  /** Whether a state is one of the approval states. */
  static isApprovalState(state: string): boolean {
    return Object.hasOwn(APPROVAL_STATE_LABELS, state);
  }

  #put(table: string, sysId: string, values: Row, by = 'system'): Row {
    const stamp = this.#stamp();
    const row: Row = {
      sys_id: sysId,
      sys_created_on: stamp,
      sys_created_by: by,
      sys_updated_on: stamp,
      sys_updated_by: by,
      sys_mod_count: '0',
      ...values,
    };
    this.#tables.get(table)!.set(sysId, row);
    this.onChange?.(table, row, 'insert');
    return row;
  }

  /** `sys_updated_on` for a change now: the instance's clock, to the second, in UTC. */
  #stamp(): string {
    return this.#at(this.now());
  }

  #at(ms: number): string {
    return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
  }

  #approvers(count: number): string[] {
    const pool = APPROVERS.map(({ sysId }) => sysId);
    const chosen: string[] = [];
    while (chosen.length < count) {
      const one = this.#pick(pool.filter((id) => !chosen.includes(id)));
      chosen.push(one);
    }
    return chosen;
  }

  #sysId(): string {
    return Array.from({ length: 32 }, () => Math.floor(this.#random() * 16).toString(16)).join('');
  }

  #int(min: number, max: number): number {
    return min + Math.floor(this.#random() * (max - min + 1));
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#random() * items.length)] as T;
  }

  #weighted<T>(...choices: (readonly [T, number])[]): T {
    let left = this.#random() * choices.reduce((sum, [, weight]) => sum + weight, 0);
    for (const [choice, weight] of choices) {
      left -= weight;
      if (left < 0) return choice;
    }
    return choices[0]![0];
  }
}

/** A seeded source of numbers in [0, 1): a small-fast counter generator (sfc32), its state filled from the seed. */
function seeded(seed: number): () => number {
  let [a, b, c, d] = [0x9e3779b9, 0x243f6a88, 0xb7e15162, seed >>> 0];
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let index = 0; index < 12; index += 1) next();
  return next;
}

function person(sysId: string, firstName: string, lastName: string, timeZone: string): SimulatedUser {
  const userName = `${firstName}.${lastName}`.toLowerCase();
  return {
    sysId,
    userName,
    password: `${firstName.toLowerCase()}-Now-2026`,
    firstName,
    lastName,
    email: `${userName}@example.com`,
    timeZone,
  };
}
