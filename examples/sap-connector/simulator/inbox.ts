/**
 * The simulated SAP system's data: users, task definitions and tasks, and the activity that changes them over time
 * (new tasks, edits, reservations, decisions taken in SAP itself). Everything follows from the seed and the number
 * of steps taken, so two inboxes with one seed that took the same steps hold the same tasks.
 * @module
 */

/** A user of the simulated system, with the password it logs on with. */
export interface SimulatedUser {
  username: string;
  password: string;
  firstName: string;
  lastName: string;
  email: string;
}

export interface SimulatedDecisionOption {
  key: string;
  text: string;
  /** SAP's hint of what the decision means; empty where the workflow step's customizing does not maintain it. */
  nature: 'POSITIVE' | 'NEGATIVE' | '';
  commentMandatory: boolean;
}

export interface SimulatedTaskDefinition {
  id: string;
  name: string;
  /** The decisions its tasks offer; see {@link SimulatedTaskDefinition.variants}. */
  options: readonly SimulatedDecisionOption[];
  /**
   * For a task definition that many workflow steps reuse, each with decisions of its own (SAP's generic decision
   * task, `TS00008267`): the sets of decisions its tasks offer, one per task, by turns.
   */
  variants?: readonly (readonly SimulatedDecisionOption[])[];
}

export type TaskStatus = 'READY' | 'RESERVED' | 'COMPLETED';
export type Priority = 'VERY_HIGH' | 'HIGH' | 'MEDIUM' | 'LOW';

export interface SimulatedTask {
  origin: string;
  instanceId: string;
  definition: SimulatedTaskDefinition;
  /** The decisions this task offers: its definition's, or, for a generic decision task, its step's. */
  options: readonly SimulatedDecisionOption[];
  title: string;
  priority: Priority;
  status: TaskStatus;
  createdOn: Date;
  createdBy: SimulatedUser;
  /** The user who reserved it (RESERVED), or who decided it (COMPLETED). */
  processor: SimulatedUser | undefined;
  potentialOwners: readonly SimulatedUser[];
  dueOn: Date | undefined;
  attributes: [name: string, value: string][];
  completedOn: Date | undefined;
}

/** What a test chooses of a new task rather than leaving it to the seed. */
export interface NewTaskChoices {
  /** One of {@link TASK_DEFINITIONS}. */
  taskDefinitionId?: string;
  title?: string;
  /** The approvers' user names. */
  potentialOwners?: readonly string[];
  /**
   * The decisions it offers, as its workflow step's customizing has them: with `nature: ''` where the customizing
   * keeps no `Nature`, as many systems' does (SAP answers `Nature` empty then, and My Inbox shows the options all
   * the same). Keys must be unique.
   * @default its task definition's
   */
  decisionOptions?: readonly SimulatedDecisionOption[];
}

/** A decision taken on a task: through the Decision function import (`odata`) or in SAP itself (`activity`). */
export interface SimulatedDecision {
  origin: string;
  instanceId: string;
  decisionKey: string;
  decisionText: string;
  comments: string;
  username: string;
  at: Date;
  via: 'odata' | 'activity';
}

/** What one step of activity did. */
export type SimulatedEvent =
  | { kind: 'created'; instanceId: string }
  | { kind: 'edited'; instanceId: string; field: 'priority' | 'title' | 'attribute' }
  | { kind: 'reserved'; instanceId: string; username: string }
  | { kind: 'decided'; instanceId: string; username: string; decisionKey: string }
  | { kind: 'idle' };

/** The system alias SAP__Origin of every simulated task. */
export const ORIGIN = 'LOCAL_TGW';

/** The simulated clock moves this much per step. */
export const STEP_MS = 5 * 60_000;

const DEFAULT_START = Date.parse('2026-01-05T08:00:00.000Z');

export const TECHNICAL_USER: SimulatedUser = {
  username: 'APPROVAL_SYNC',
  password: 'sync-Init-2026',
  firstName: 'Approval',
  lastName: 'Sync',
  email: 'approval.sync@example.com',
};

export const APPROVERS: readonly SimulatedUser[] = [
  user('AMILLER', 'Anna', 'Miller'),
  user('BCHEN', 'Bo', 'Chen'),
  user('CNOVAK', 'Clara', 'Novak'),
  user('DOKAFOR', 'David', 'Okafor'),
];

const REQUESTERS: readonly SimulatedUser[] = [
  user('EWEBER', 'Eva', 'Weber'),
  user('FSILVA', 'Filipe', 'Silva'),
  user('GROSSI', 'Giulia', 'Rossi'),
];

const approveReject = (approveText: string, rejectNeedsComment: boolean): SimulatedDecisionOption[] => [
  { key: '0001', text: approveText, nature: 'POSITIVE', commentMandatory: false },
  { key: '0002', text: 'Reject', nature: 'NEGATIVE', commentMandatory: rejectNeedsComment },
];

// SAP's generic decision task: one task definition that the decision steps of many workflows reuse, each step with
// decisions of its own. Here two steps: a release of a purchase requisition, and a budget check that can also send
// the requisition back, a decision with neither an approving nor a rejecting nature.
const GENERIC_DECISION_STEPS: readonly (readonly SimulatedDecisionOption[])[] = [
  approveReject('Release', true),
  [
    { key: '0001', text: 'Approve', nature: 'POSITIVE', commentMandatory: false },
    { key: '0002', text: 'Reject', nature: 'NEGATIVE', commentMandatory: true },
    { key: '0003', text: 'Return for rework', nature: '', commentMandatory: true },
  ],
];

export const TASK_DEFINITIONS: readonly SimulatedTaskDefinition[] = [
  {
    id: 'TS00008267',
    name: 'Generic Decision Task',
    options: GENERIC_DECISION_STEPS[0]!,
    variants: GENERIC_DECISION_STEPS,
  },
  { id: 'TS20000166', name: 'Approve purchase order', options: approveReject('Approve', false) },
  { id: 'TS21500004', name: 'Approve credit limit', options: approveReject('Approve', true) },
];

const PRIORITIES: readonly Priority[] = ['VERY_HIGH', 'HIGH', 'MEDIUM', 'MEDIUM', 'LOW'];
const SUPPLIERS = ['Northwind Traders', 'Contoso Ltd', 'Fabrikam Inc', 'Tailspin Toys'];
const CUSTOMERS = ['Adatum Corporation', 'Litware Inc', 'Proseware Inc', 'Wide World Importers'];

/** The tasks of the simulated system and the activity that changes them. */
export class SimulatedInbox {
  readonly #random: () => number;
  readonly #tasks = new Map<string, SimulatedTask>();
  readonly #decisions: SimulatedDecision[] = [];
  #now: number;
  #nextInstance = 1_750_567;
  #nextDocument = 10_004_711;

  constructor(options: { seed: number; initialTasks: number; start?: Date }) {
    this.#random = seededRandom(options.seed);
    this.#now = options.start?.getTime() ?? DEFAULT_START;
    // The first tasks were created over the two days before the start, oldest first.
    const span = 2 * 24 * 60 * 60_000;
    const offsets = Array.from({ length: options.initialTasks }, () =>
      Math.floor(this.#random() * span),
    ).sort((a, b) => b - a);
    for (const offset of offsets) this.#create(new Date(this.#now - offset));
  }

  /** The simulated time. */
  now(): Date {
    return new Date(this.#now);
  }

  /** Every task, completed ones included, in the order they were created. */
  tasks(): readonly SimulatedTask[] {
    return [...this.#tasks.values()];
  }

  task(origin: string, instanceId: string): SimulatedTask | undefined {
    return origin === ORIGIN ? this.#tasks.get(instanceId) : undefined;
  }

  /** Every decision taken, in order. */
  decisions(): readonly SimulatedDecision[] {
    return [...this.#decisions];
  }

  /** Moves the clock one step and lets one thing happen, drawn from the seed. */
  step(): SimulatedEvent {
    this.#now += STEP_MS;
    const open = this.tasks().filter((task) => task.status !== 'COMPLETED');
    const roll = this.#random();
    if (open.length === 0 || roll < 0.35)
      return { kind: 'created', instanceId: this.#create(this.now()).instanceId };
    const task = pick(this.#random, open);
    if (roll < 0.6) return this.#edit(task);
    if (roll < 0.7 && task.status === 'READY') {
      const processor = pick(this.#random, task.potentialOwners);
      this.reserve(task, processor);
      return { kind: 'reserved', instanceId: task.instanceId, username: processor.username };
    }
    if (roll < 0.9) {
      const decider = task.processor ?? pick(this.#random, task.potentialOwners);
      const option = pick(this.#random, task.options);
      const comments = option.commentMandatory ? 'Decided in SAP' : '';
      this.decide(task, option, decider, comments, 'activity');
      return {
        kind: 'decided',
        instanceId: task.instanceId,
        username: decider.username,
        decisionKey: option.key,
      };
    }
    return { kind: 'idle' };
  }

  /**
   * A new task, with what is given chosen rather than drawn: its task definition, title, potential owners and
   * decision options. The
   * rest is drawn from the seed, as for a task of the activity.
   */
  create(chosen: NewTaskChoices = {}): SimulatedTask {
    return this.#create(this.now(), chosen);
  }

  /** Changes a task's title, as a change of its workflow's object (a requisition's text) does. */
  retitle(task: SimulatedTask, title: string): void {
    task.title = title;
  }

  /**
   * Withdraws a task: its workflow was logically deleted, so the task leaves every inbox, and a read of it finds
   * nothing.
   */
  withdraw(task: SimulatedTask): void {
    this.#tasks.delete(task.instanceId);
  }

  /** Reserves (claims) a task for one of its potential owners: from now on only that user can decide it. */
  reserve(task: SimulatedTask, processor: SimulatedUser): void {
    Object.assign(task, { status: 'RESERVED', processor });
  }

  /** Completes a task with a decision, as SAP does when one of its agents decides. */
  decide(
    task: SimulatedTask,
    option: SimulatedDecisionOption,
    decider: SimulatedUser,
    comments: string,
    via: SimulatedDecision['via'],
  ): void {
    Object.assign(task, { status: 'COMPLETED', processor: decider, completedOn: this.now() });
    this.#decisions.push({
      origin: task.origin,
      instanceId: task.instanceId,
      decisionKey: option.key,
      decisionText: option.text,
      comments,
      username: decider.username,
      at: this.now(),
      via,
    });
  }

  #create(createdOn: Date, chosen: NewTaskChoices = {}): SimulatedTask {
    const definition =
      chosen.taskDefinitionId === undefined
        ? pick(this.#random, TASK_DEFINITIONS)
        : TASK_DEFINITIONS.find(({ id }) => id === chosen.taskDefinitionId);
    if (definition === undefined) throw new RangeError(`No task definition ${chosen.taskDefinitionId}`);
    const keys = chosen.decisionOptions?.map(({ key }) => key) ?? [];
    if (new Set(keys).size !== keys.length || keys.includes('')) {
      throw new RangeError(`Decision keys must be unique and not empty, got ${keys.join(', ')}`);
    }
    const owners =
      chosen.potentialOwners === undefined
        ? shuffled(this.#random, APPROVERS).slice(0, 1 + Math.floor(this.#random() * 2))
        : chosen.potentialOwners.map((username) => {
            const owner = APPROVERS.find((approver) => approver.username === username);
            if (owner === undefined) throw new RangeError(`${username} is no approver`);
            return owner;
          });
    const document = String(this.#nextDocument++);
    const amount = (100 + Math.floor(this.#random() * 4_990) * 10).toFixed(2);
    // By turns, not drawn: the same seed gives the same tasks whatever the variants.
    const step = definition.variants === undefined ? 0 : this.#nextInstance % definition.variants.length;
    const { title, attributes } = describeDocument(definition, step, document, amount, this.#random);
    const task: SimulatedTask = {
      origin: ORIGIN,
      instanceId: String(this.#nextInstance++).padStart(12, '0'),
      definition,
      options: chosen.decisionOptions ?? definition.variants?.[step] ?? definition.options,
      title: chosen.title ?? title,
      priority: pick(this.#random, PRIORITIES),
      status: 'READY',
      createdOn,
      createdBy: pick(this.#random, REQUESTERS),
      processor: undefined,
      potentialOwners: owners,
      dueOn: this.#random() < 0.5 ? new Date(createdOn.getTime() + 7 * 24 * 60 * 60_000) : undefined,
      attributes,
      completedOn: undefined,
    };
    this.#tasks.set(task.instanceId, task);
    return task;
  }

  #edit(task: SimulatedTask): SimulatedEvent {
    const which = Math.floor(this.#random() * 3);
    if (which === 0) {
      task.priority = pick(
        this.#random,
        PRIORITIES.filter((priority) => priority !== task.priority),
      );
      return { kind: 'edited', instanceId: task.instanceId, field: 'priority' };
    }
    if (which === 1) {
      task.title = task.title.endsWith(' (revised)')
        ? task.title.slice(0, -' (revised)'.length)
        : `${task.title} (revised)`;
      return { kind: 'edited', instanceId: task.instanceId, field: 'title' };
    }
    const amount = task.attributes.find(([name]) => name.endsWith('_VALUE') || name === 'CREDIT_LIMIT');
    if (amount !== undefined)
      amount[1] = (Number(amount[1]) + 10 * (1 + Math.floor(this.#random() * 50))).toFixed(2);
    return { kind: 'edited', instanceId: task.instanceId, field: 'attribute' };
  }
}

function describeDocument(
  definition: SimulatedTaskDefinition,
  step: number,
  document: string,
  amount: string,
  random: () => number,
): { title: string; attributes: [string, string][] } {
  switch (definition.id) {
    case 'TS00008267':
      return {
        title:
          step === 0
            ? `Release purchase requisition ${document}`
            : `Check the budget of purchase requisition ${document}`,
        attributes: [
          ['PURCHASE_REQUISITION', document],
          ['TOTAL_VALUE', amount],
          ['CURRENCY', 'EUR'],
        ],
      };
    case 'TS20000166': {
      const supplier = pick(random, SUPPLIERS);
      return {
        title: `Approve purchase order 45${document.slice(2)} from ${supplier}`,
        attributes: [
          ['PURCHASE_ORDER', `45${document.slice(2)}`],
          ['SUPPLIER_NAME', supplier],
          ['NET_VALUE', amount],
          ['CURRENCY', 'EUR'],
        ],
      };
    }
    default: {
      const customer = pick(random, CUSTOMERS);
      return {
        title: `Approve credit limit for ${customer}`,
        attributes: [
          ['CUSTOMER_NAME', customer],
          ['CREDIT_LIMIT', amount],
          ['CURRENCY', 'EUR'],
        ],
      };
    }
  }
}

function user(username: string, firstName: string, lastName: string): SimulatedUser {
  return {
    username,
    password: `${firstName.toLowerCase()}-Init-2026`,
    firstName,
    lastName,
    email: `${firstName}.${lastName}@example.com`.toLowerCase(),
  };
}

// The example is a project of its own, so it carries its own small seeded generator (mulberry32).
/** A seeded generator (mulberry32) of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 2 ** 32;
  };
}

function shuffled<T>(random: () => number, items: readonly T[]): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError('pick() needs at least one item');
  return item;
}
