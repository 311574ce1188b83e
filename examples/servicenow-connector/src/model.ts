/**
 * The records the connector reads through ServiceNow's Table API, as zod schemas of the fields it uses. Every read
 * asks for `sysparm_display_value=all`, so each field comes as `{"value": …, "display_value": …}`: the `value` is
 * what the database holds (a choice's value, a reference's sys_id, a date-time in UTC), the `display_value` what a
 * person reads (the choice's label, the referenced record's display field, the date-time in the reading user's time
 * zone and format). Machines read values; the approval's data carries display values. Fields not asked for are
 * dropped when parsed.
 * @module
 */
import { z } from 'zod';

/** A user name and password for the instance's basic authentication. */
export interface ServiceNowCredentials {
  username: string;
  password: string;
}

/** One field as `sysparm_display_value=all` answers it; a reference's `link` (when not excluded) is dropped. */
export const FieldValue = z
  .object({
    value: z.union([z.string(), z.number(), z.boolean(), z.null()]).transform((value) => String(value ?? '')),
    display_value: z
      .union([z.string(), z.number(), z.boolean(), z.null()])
      .optional()
      .transform((value) => (value === null || value === undefined ? '' : String(value))),
  })
  .transform(({ value, display_value }) => ({ value, display: display_value }));
export type FieldValue = z.output<typeof FieldValue>;

/** A field the request named that the answer may leave out (ServiceNow answers only the fields it has). */
const optionalField = FieldValue.optional().transform((field) => field ?? { value: '', display: '' });

/** A sys_id: 32 lower-case hexadecimal digits. */
export const SYS_ID = /^[0-9a-f]{32}$/;

/** A date-time value as the Table API answers it (`yyyy-MM-dd HH:mm:ss`, in UTC), or empty. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** The approval states (`sysapproval_approver.state`) of the published description. Only `requested` waits. */
export const APPROVAL_STATES = [
  'not requested',
  'requested',
  'approved',
  'rejected',
  'cancelled',
  'not_required',
  'skipped',
  'duplicate',
] as const;

/**
 * A record of `sysapproval_approver`, the approvals table: one approver's approval of one record (`document_id`,
 * of the table `source_table`; `sysapproval` when that record is a task).
 */
export const ApproverRecord = z.object({
  sys_id: FieldValue.refine(({ value }) => SYS_ID.test(value), 'is not a sys_id'),
  approver: FieldValue,
  state: FieldValue,
  source_table: optionalField,
  document_id: optionalField,
  sysapproval: optionalField,
  due_date: optionalField,
  sys_created_on: optionalField,
  sys_updated_on: FieldValue.refine(({ value }) => DATE_TIME.test(value), 'is not a date-time value'),
  sys_mod_count: optionalField,
});
export type ApproverRecord = z.output<typeof ApproverRecord>;

/** The fields of {@link ApproverRecord}, as `sysparm_fields` names them. */
export const APPROVER_FIELDS = Object.keys(ApproverRecord.shape);

/** A record of `sys_user`: who an approver is, and the email their user mapping goes by. */
export const UserRecord = z.object({
  sys_id: FieldValue.refine(({ value }) => SYS_ID.test(value), 'is not a sys_id'),
  user_name: optionalField,
  name: optionalField,
  email: optionalField,
});
export type UserRecord = z.output<typeof UserRecord>;

/** The fields of {@link UserRecord}, as `sysparm_fields` names them. */
export const USER_FIELDS = Object.keys(UserRecord.shape);

/**
 * A record an approval is for (a change request, a requested item, …): its `sys_id`, when it last changed, and
 * whatever else the table's fields hold, each a {@link FieldValue}.
 */
export const ApprovedRecord = z
  .object({
    sys_id: FieldValue.refine(({ value }) => SYS_ID.test(value), 'is not a sys_id'),
    sys_updated_on: FieldValue.refine(({ value }) => DATE_TIME.test(value), 'is not a date-time value'),
    sys_mod_count: optionalField,
  })
  .catchall(FieldValue);
export type ApprovedRecord = z.output<typeof ApprovedRecord>;

/** A date-time value of the Table API (`2026-03-02 09:00:05`, UTC) as milliseconds since the epoch. */
export function parseDateTime(value: string): number | undefined {
  const match = DATE_TIME.exec(value);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  const ms = Date.UTC(year!, month! - 1, day!, hour, minute, second);
  return Number.isNaN(ms) ? undefined : ms;
}

/** An instant as a date-time value of the Table API, in UTC, to the second (the rest dropped). */
export function formatDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
