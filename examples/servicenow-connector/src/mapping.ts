/**
 * From ServiceNow's approval records to the kit's `SourceApproval`, and the UI templates that show them: one
 * approval per record of `sysapproval_approver` (one approver's approval of one record), its data the approved
 * record (a change request, a requested item, …) with the fields an approver needs, as a person reads them.
 * @module
 */
import type { SourceApproval } from 'approval-connector-kit';
import type { UiTemplateWrite } from 'approval-connector-kit/client';
import { type ApprovedRecord, type ApproverRecord, parseDateTime, SYS_ID } from './model.js';

/** A field of an approved record that the approval's data carries, and its label in the UI template. */
export interface ShownField {
  name: string;
  label: string;
}

/** What the connector shows of the records of one table. */
export interface TableView {
  /** The table's label, as a person names its records. */
  label: string;
  /** The fields read (display values) and shown, after the number and the short description. */
  fields: readonly ShownField[];
}

/** The fields every view starts with: the record's number and short description, its title. */
const HEAD: readonly ShownField[] = [
  { name: 'number', label: 'Number' },
  { name: 'short_description', label: 'Short description' },
];

/**
 * The views of the tables whose approvals the connector knows how to show. A table not listed gets
 * {@link DEFAULT_VIEW}; give one its own here.
 */
export const TABLE_VIEWS: Readonly<Record<string, TableView>> = {
  change_request: {
    label: 'Change request',
    fields: [
      { name: 'type', label: 'Type' },
      { name: 'risk', label: 'Risk' },
      { name: 'impact', label: 'Impact' },
      { name: 'priority', label: 'Priority' },
      { name: 'category', label: 'Category' },
      { name: 'requested_by', label: 'Requested by' },
      { name: 'start_date', label: 'Planned start' },
      { name: 'end_date', label: 'Planned end' },
      { name: 'state', label: 'State' },
      { name: 'description', label: 'Description' },
    ],
  },
  sc_req_item: {
    label: 'Requested item',
    fields: [
      { name: 'cat_item', label: 'Item' },
      { name: 'quantity', label: 'Quantity' },
      { name: 'price', label: 'Price' },
      { name: 'requested_for', label: 'Requested for' },
      { name: 'request', label: 'Request' },
      { name: 'stage', label: 'Stage' },
      { name: 'due_date', label: 'Due' },
    ],
  },
  sc_request: {
    label: 'Request',
    fields: [
      { name: 'requested_for', label: 'Requested for' },
      { name: 'price', label: 'Price' },
      { name: 'opened_by', label: 'Opened by' },
      { name: 'request_state', label: 'State' },
    ],
  },
};

/** The view of a table {@link TABLE_VIEWS} does not list. */
export const DEFAULT_VIEW: TableView = {
  label: 'Record',
  fields: [
    { name: 'opened_by', label: 'Opened by' },
    { name: 'state', label: 'State' },
    { name: 'description', label: 'Description' },
  ],
};

/** The view of `table`. */
export function viewOf(table: string): TableView {
  return Object.hasOwn(TABLE_VIEWS, table) ? (TABLE_VIEWS[table] as TableView) : DEFAULT_VIEW;
}

/** The fields to read of a record of `table`: its sys_id, when it last changed, and those its view shows. */
export function recordFields(table: string): string[] {
  return ['sys_id', 'sys_updated_on', 'sys_mod_count', ...shownNames(table)];
}

/** The fields the view of `table` shows, the number and short description first. */
function shownNames(table: string): string[] {
  return [...HEAD, ...viewOf(table).fields].map(({ name }) => name);
}

/** The schema of the approvals of one approved table: `servicenow-change_request`, … */
export function schemaIdOf(table: string): string {
  return `servicenow-${table}`;
}

/** The state of an approval record that waits for its approver; every other state is resolved. */
export const WAITING_STATE = 'requested';

/**
 * An approval, as the service holds it: the approver record and the record it approves (`undefined` when that
 * record is gone, or the integration user may not read it).
 */
export function toSourceApproval(
  approval: ApproverRecord,
  record: ApprovedRecord | undefined,
  instanceUrl: string,
): SourceApproval {
  const table = approval.source_table.value;
  const documentId = approval.document_id.value || approval.sysapproval.value;
  const view = viewOf(table);
  const shown = record === undefined ? undefined : shownFields(record, table);
  const number = shown?.number || approval.document_id.display || approval.sysapproval.display || documentId;
  return {
    id: approval.sys_id.value,
    schemaId: schemaIdOf(table),
    approver: approval.approver.value,
    resolved: approval.state.value !== WAITING_STATE,
    lastModified: new Date(lastModifiedOf(approval, record)),
    data: {
      table,
      tableLabel: view.label,
      number,
      title: shown?.short_description || number,
      state: approval.state.display || approval.state.value,
      // Who decides this one, by name: what the app shows where no user mapping names the account.
      approverName: approval.approver.display || approval.approver.value,
      requestedOn: approval.sys_created_on.display || null,
      dueDate: approval.due_date.display || null,
      record: shown ?? null,
      link: SYS_ID.test(documentId)
        ? `${instanceUrl.replace(/\/$/, '')}/${table}.do?sys_id=${documentId}`
        : null,
    },
  };
}

/** The display values of the fields the table's view shows, by field name; `''` where the record has none. */
function shownFields(record: ApprovedRecord, table: string): Record<string, string> {
  return Object.fromEntries(
    shownNames(table).map((name) => [name, (record[name] as { display: string } | undefined)?.display ?? '']),
  );
}

/**
 * When the approval last changed, as the service compares it: the later `sys_updated_on` of the approver record and
 * the approved record, plus, as milliseconds, the sum of their `sys_mod_count`s modulo 1000.
 *
 * `sys_updated_on` has one-second precision, and the service keeps a write only when its `lastModified` is later
 * than the one it holds: two changes within one second would share a stamp, and the second be dropped. Each change
 * of either record raises one of the two: its second, or its update count, by one. (A sum that passes a multiple of
 * 1000 within one second repeats a stamp; the next change of either record brings it.)
 */
export function lastModifiedOf(approval: ApproverRecord, record: ApprovedRecord | undefined): number {
  const seconds = [approval, record].flatMap((one) =>
    one === undefined ? [] : [parseDateTime(one.sys_updated_on.value) ?? 0],
  );
  const updates = [approval, record].reduce(
    (sum, one) => sum + (one === undefined ? 0 : Number.parseInt(one.sys_mod_count.value, 10) || 0),
    0,
  );
  return Math.max(...seconds) + (updates % 1000);
}

/**
 * The UI templates of the approvals of one approved table: a `card` (the record's number and short description,
 * the approval's state and due date) and a `detail` (those, and every field the table's view reads).
 */
export function tableTemplates(table: string): UiTemplateWrite[] {
  const view = viewOf(table);
  const schemaId = schemaIdOf(table);
  return [
    {
      type: 'card',
      schemaId,
      template: {
        title: '{{title}}',
        subtitle: `${view.label} {{number}}`,
        fields: [
          { label: 'Approval', path: 'state' },
          { label: 'Due', path: 'dueDate' },
        ],
      },
    },
    {
      type: 'detail',
      schemaId,
      template: {
        title: '{{title}}',
        subtitle: `${view.label} {{number}}, for {{approverName}}`,
        fields: [
          { label: 'Approval', path: 'state' },
          { label: 'Requested', path: 'requestedOn' },
          { label: 'Due', path: 'dueDate' },
          ...view.fields.map(({ name, label }) => ({ label, path: `record.${name}` })),
          { label: 'In ServiceNow', path: 'link' },
        ],
      },
    },
  ];
}
