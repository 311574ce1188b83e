/**
 * The tables of the simulated instance, their fields' types and choices, and how a field's value becomes the
 * display value a user reads: a choice's label, a referenced record's display field, a date-time in the user's time
 * zone, an amount with its currency. Values are kept as the Table API answers them: strings, date-times in UTC.
 * @module
 */

export type FieldType =
  | 'sys_id'
  | 'string'
  | 'integer'
  | 'boolean'
  | 'choice'
  | 'reference'
  | 'document_id'
  | 'table_name'
  | 'date_time'
  | 'currency'
  | 'journal';

export interface FieldDefinition {
  type: FieldType;
  /** A choice field's values and their labels. */
  choices?: Readonly<Record<string, string>>;
  /** The table a reference field refers to. */
  reference?: string;
}

export interface TableDefinition {
  label: string;
  /** The field whose display value stands for a record where another refers to it. */
  displayField: string;
  fields: Readonly<Record<string, FieldDefinition>>;
}

const text: FieldDefinition = { type: 'string' };
const dateTime: FieldDefinition = { type: 'date_time' };
const user: FieldDefinition = { type: 'reference', reference: 'sys_user' };

/** The system fields every record has. */
const SYSTEM: Readonly<Record<string, FieldDefinition>> = {
  sys_id: { type: 'sys_id' },
  sys_created_on: dateTime,
  sys_created_by: text,
  sys_updated_on: dateTime,
  sys_updated_by: text,
  sys_mod_count: { type: 'integer' },
};

/** A task's approval, as the task tables' `approval` field sums its approval records up. */
const APPROVAL: FieldDefinition = {
  type: 'choice',
  choices: {
    'not requested': 'Not Yet Requested',
    requested: 'Requested',
    approved: 'Approved',
    rejected: 'Rejected',
  },
};

/** The approval states of `sysapproval_approver`, with their labels (ServiceNow's documentation lists them). */
export const APPROVAL_STATE_LABELS: Readonly<Record<string, string>> = {
  'not requested': 'Not Yet Requested',
  requested: 'Requested',
  approved: 'Approved',
  rejected: 'Rejected',
  cancelled: 'Cancelled',
  not_required: 'No Longer Required',
  skipped: 'Skipped',
  duplicate: 'Duplicate',
};

export const TABLES: Readonly<Record<string, TableDefinition>> = {
  sys_user: {
    label: 'User',
    displayField: 'name',
    fields: {
      ...SYSTEM,
      user_name: text,
      first_name: text,
      last_name: text,
      name: text,
      email: text,
      active: { type: 'boolean' },
      locked_out: { type: 'boolean' },
      time_zone: text,
    },
  },
  sysapproval_approver: {
    label: 'Approval',
    displayField: 'sys_id',
    fields: {
      ...SYSTEM,
      approver: user,
      state: { type: 'choice', choices: APPROVAL_STATE_LABELS },
      source_table: { type: 'table_name' },
      document_id: { type: 'document_id' },
      sysapproval: { type: 'reference', reference: 'task' },
      due_date: dateTime,
      comments: { type: 'journal' },
    },
  },
  change_request: {
    label: 'Change Request',
    displayField: 'number',
    fields: {
      ...SYSTEM,
      number: text,
      short_description: text,
      description: text,
      type: { type: 'choice', choices: { normal: 'Normal', standard: 'Standard', emergency: 'Emergency' } },
      risk: { type: 'choice', choices: { '1': 'High', '2': 'Moderate', '3': 'Low' } },
      impact: { type: 'choice', choices: { '1': 'High', '2': 'Medium', '3': 'Low' } },
      priority: { type: 'choice', choices: { '1': 'Critical', '2': 'High', '3': 'Moderate', '4': 'Low' } },
      category: text,
      requested_by: user,
      start_date: dateTime,
      end_date: dateTime,
      state: {
        type: 'choice',
        choices: {
          '-5': 'New',
          '-4': 'Assess',
          '-3': 'Authorize',
          '-2': 'Scheduled',
          '3': 'Closed',
          '4': 'Canceled',
        },
      },
      approval: APPROVAL,
    },
  },
  sc_request: {
    label: 'Request',
    displayField: 'number',
    fields: { ...SYSTEM, number: text, requested_for: user, approval: APPROVAL },
  },
  sc_cat_item: {
    label: 'Catalog Item',
    displayField: 'name',
    fields: { ...SYSTEM, name: text },
  },
  sc_req_item: {
    label: 'Requested Item',
    displayField: 'number',
    fields: {
      ...SYSTEM,
      number: text,
      short_description: text,
      cat_item: { type: 'reference', reference: 'sc_cat_item' },
      quantity: { type: 'integer' },
      price: { type: 'currency' },
      requested_for: user,
      request: { type: 'reference', reference: 'sc_request' },
      stage: {
        type: 'choice',
        choices: {
          waiting_for_approval: 'Waiting for Approval',
          fulfillment: 'Fulfillment',
          complete: 'Completed',
          Request_Cancelled: 'Request Cancelled',
        },
      },
      due_date: dateTime,
      approval: APPROVAL,
    },
  },
};

/** The tables whose records are tasks: what `sysapproval` refers to. */
export const TASK_TABLES = ['change_request', 'sc_request', 'sc_req_item'] as const;

/**
 * The formats of date-times by time zone, made once each: a format is costly to make (`toLocaleString` with options
 * makes one at every call), and every display value of a date-time needs one. Sweden's locale writes a date-time as
 * ISO 8601 does, with a space: the Table API's own format.
 */
const WALL_CLOCKS = new Map<string, Intl.DateTimeFormat>();

/** What `toLocaleString` shows of a date-time when given no fields: every one, as numbers. */
const DATE_TIME = {
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
} as const;

/** A date-time value (UTC, `yyyy-MM-dd HH:mm:ss`) as the wall clock of `timeZone`, in the same format. */
export function wallClock(value: string, timeZone: string): string {
  const ms = Date.parse(`${value.replace(' ', 'T')}Z`);
  if (value === '' || Number.isNaN(ms)) return '';
  let format = WALL_CLOCKS.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('sv-SE', { timeZone, ...DATE_TIME });
    WALL_CLOCKS.set(timeZone, format);
  }
  return format.format(ms);
}

const DOLLARS = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** An amount as a user reads it: `1299.00` is `$1,299.00`. */
export function money(value: string): string {
  const amount = Number(value);
  return value === '' || Number.isNaN(amount) ? value : DOLLARS.format(amount);
}
