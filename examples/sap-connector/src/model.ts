/**
 * The entities of SAP's task-processing service (`TASKPROCESSING;mo`, OData V2) that the connector reads, with the
 * fields it uses, as SAP's documentation names them. Fields the connector does not use are dropped when parsed.
 * @module
 */
import { z } from 'zod';
import { parseODataDate } from './odata.js';

/** Identifies a task: the key of SAP's Task entity. */
export interface TaskRef {
  /** `SAP__Origin`: the system alias of the task's source system. */
  origin: string;
  /** `InstanceID`: the task instance (a work item id for SAP Business Workflow). */
  instanceId: string;
}

/** A user name and password for SAP's basic authentication. */
export interface SapCredentials {
  username: string;
  password: string;
}

// SAP writes an empty value as null or leaves it out, depending on the release; both read as undefined.
const text = z
  .string()
  .nullish()
  .transform((value) => (value === null || value === '' ? undefined : value));

const date = z
  .string()
  .nullish()
  .transform((value, context) => {
    if (value === null || value === undefined || value === '') return undefined;
    const parsed = parseODataDate(value);
    if (parsed === undefined) {
      context.addIssue({ code: 'custom', message: `is not an OData date such as /Date(1424149556000)/` });
      return z.NEVER;
    }
    return parsed;
  });

/** One entry of a collection that was asked for with `$expand`: `{"results": [...]}`. */
const expanded = <Item extends z.ZodType>(item: Item) => z.object({ results: z.array(item) });

/**
 * A potential owner of a task: a `TASKPROCESSING.UserInfo` (`UniqueName`, `DisplayName`, `Email`) in version 2 of the
 * service; version 1 documented `Owner` (and `Type`) instead, which reads as the same user name.
 */
export const UserInfo = z
  .object({
    UniqueName: z.string().min(1).optional(),
    Owner: z.string().min(1).optional(),
    DisplayName: text,
    Email: text,
  })
  .refine((user) => user.UniqueName !== undefined || user.Owner !== undefined, {
    message: 'has neither UniqueName nor Owner',
  })
  .transform(({ UniqueName, Owner, DisplayName, Email }) => ({
    UniqueName: (UniqueName ?? Owner) as string,
    DisplayName,
    Email,
  }));
export type UserInfo = z.output<typeof UserInfo>;

/** `TASKPROCESSING.CustomAttribute`: a name and value the task definition adds (an amount, a document number). */
export const CustomAttribute = z.object({
  Name: z.string().min(1),
  Value: z
    .string()
    .nullish()
    .transform((value) => value ?? ''),
});
export type CustomAttribute = z.output<typeof CustomAttribute>;

/** `TASKPROCESSING.Task`, as the Decision function import answers it (navigation properties not expanded). */
export const Task = z.object({
  SAP__Origin: z.string().min(1),
  InstanceID: z.string().min(1),
  TaskDefinitionID: text,
  TaskDefinitionName: text,
  TaskTitle: text,
  Priority: text,
  /** READY, RESERVED, IN_PROGRESS, EXECUTED, COMPLETED, FOR_RESUBMISSION, … */
  Status: z.string().min(1),
  CreatedOn: date,
  CreatedBy: text,
  CreatedByName: text,
  /** The user who reserved (claimed) the task, when one did. */
  Processor: text,
  CompletionDeadLine: date,
});
export type Task = z.output<typeof Task>;

/** A task of the task collection as the connector reads it: with its potential owners and custom attributes. */
export const InboxTask = Task.extend({
  PotentialOwners: expanded(UserInfo),
  CustomAttributeData: expanded(CustomAttribute),
});
export type InboxTask = z.output<typeof InboxTask>;

/** `TASKPROCESSING.DecisionOption`: one of the decisions a task offers. */
export const DecisionOption = z.object({
  DecisionKey: z.string().min(1),
  DecisionText: text,
  /** A hint that the decision needs a comment. */
  CommentMandatory: z
    .boolean()
    .nullish()
    .transform((value) => value === true),
  /** POSITIVE (approve), NEGATIVE (reject) or none. */
  Nature: text,
});
export type DecisionOption = z.output<typeof DecisionOption>;

/** An open task of the inbox with the decisions it offers. */
export interface OpenTask {
  task: InboxTask;
  decisionOptions: readonly DecisionOption[];
}

/** The statuses of a task that still waits for a decision. */
export const OPEN_STATUSES = ['READY', 'RESERVED', 'IN_PROGRESS'] as const;
