import type { z } from 'zod';
import type { TaskResultStatus, UiTemplateWrite } from '../api/index.js';
import type { PushDeclaration } from './push.js';
import type { ConnectorSource, IncrementalSource, SnapshotSource, SourceApproval } from './source.js';
import type { SourceContext } from './source-context.js';
import type { TaskDeclaration, TaskDeclarations } from './task.js';

/**
 * The base class of a connector: what the author declares, and nothing else. A subclass declares its task types
 * with {@link task} (each with the schema of the data its handler needs) and its source with {@link incremental}
 * or {@link snapshot}; every other name is the author's (`client`, `logger`, `metrics`, …). What the kit provides
 * reaches the author's code through the context argument of each method (its `signal`, `logger`, `state`, a
 * task's `credentials`). A `ConnectorWorker` runs it: registration and keys, the sync loop, the task poller,
 * UI templates, state, and a lifecycle fit for a long-lived worker.
 *
 * `AppState` is the type of the author's own part of connector state, as `context.state` reads and writes it.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { Connector, incremental, task } from 'approval-connector-kit';
 * import { z } from 'zod';
 *
 * class MyConnector extends Connector {
 *   readonly tasks = {
 *     approve: task({
 *       input: z.object({ approval: z.object({ id: z.string() }) }),
 *       run: async ({ approval }, { signal }) => { await this.client.approve(approval.id, { signal }); },
 *     }),
 *   };
 *   readonly source = incremental({ changes: ({ since }) => this.client.changedSince(since) });
 *
 *   constructor(private readonly client: MySourceClient) {
 *     super();
 *   }
 * }
 * ```
 */
export abstract class Connector<AppState extends object = Record<string, unknown>> {
  /** The task types, each declared with {@link task}: the schema of its input, its pre-check and its handler. */
  abstract readonly tasks: TaskDeclarations<AppState>;
  /** How the source is read, declared with {@link incremental} or {@link snapshot}. */
  abstract readonly source: ConnectorSource<AppState>;
  /**
   * Whether actions need the approver's credentials (then tasks carry them, sealed to the connector's key).
   * @default false
   */
  readonly authRequired: boolean = false;
  /**
   * The UI templates to publish, one per `(type, schemaId)`.
   * @default []
   */
  readonly uiTemplates: readonly UiTemplateWrite[] = [];
  /** Overrides the automatic classification of a handler's error; `undefined` falls back to it. */
  classifyFailure?(error: unknown): TaskResultStatus | undefined;
}

/**
 * Declares a task type: the schema of the task data its handler needs (`approval`, `approveComments`), an optional
 * pre-check, and the handler. Both get the schema's output, inferred from `input`, and the same task context.
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { task } from 'approval-connector-kit';
 * import { z } from 'zod';
 *
 * const tasks = {
 *   reject: task({
 *     input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
 *     precheck: async ({ approval }) => (await source.isOpen(approval.id)) || alreadyDecided(approval.id),
 *     run: ({ approval, approveComments }, { signal }) => source.reject(approval.id, approveComments, { signal }),
 *   }),
 * };
 * ```
 */
export function task<Input extends z.ZodType, AppState extends object = Record<string, unknown>>(
  declaration: TaskDeclaration<Input, AppState>,
): TaskDeclaration<Input, AppState> {
  return declaration;
}

/**
 * A source's `lookup()` and `push`, as `incremental()` and `snapshot()` take them: a push path only beside
 * `lookup()`, through which the kit reads what an event names. A `push` without `lookup()` does not compile.
 */
export type LookupAndPush<AppState extends object = Record<string, unknown>> =
  | {
      lookup?: (ids: readonly string[], context: SourceContext<AppState>) => AsyncIterable<SourceApproval>;
      push?: undefined;
    }
  | {
      lookup: (ids: readonly string[], context: SourceContext<AppState>) => AsyncIterable<SourceApproval>;
      push: PushDeclaration<AppState>;
    };

/** What {@link incremental} takes. */
export type IncrementalDeclaration<AppState extends object = Record<string, unknown>> = Omit<
  IncrementalSource<AppState>,
  'kind' | 'ordered' | 'lookup' | 'push'
> & {
  /**
   * Whether `changes()` yields in `(lastModified, id)` order. When it does, the cursor is saved after each
   * acknowledged batch, so a crash mid-run re-reads less; otherwise it is saved at the end of each run. A record
   * out of the promised order is still pushed, and the cursor then waits for the end of the run.
   * @default false
   */
  ordered?: boolean;
} & LookupAndPush<AppState>;

/**
 * Declares a source read as changes since a point in time: `changes(window, context)` yields every change at or
 * after `window.since` (everything when it is `undefined`); the kit keeps the cursor. `lookup(ids, context)`, when
 * given, enables reconciliation, and a push path beside it (`push`, declared with `push({...})`).
 *
 * @example
 * <!-- example: run -->
 * ```ts
 * import { incremental } from 'approval-connector-kit';
 *
 * const changes = incremental({ ordered: true, changes: ({ since }, { signal }) => jira.issuesUpdatedSince(since, signal) });
 * ```
 */
export function incremental<AppState extends object = Record<string, unknown>>(
  declaration: IncrementalDeclaration<AppState>,
): IncrementalSource<AppState> {
  return { ...declaration, kind: 'incremental', ordered: declaration.ordered ?? false };
}

/** What {@link snapshot} takes. */
export type SnapshotDeclaration<AppState extends object = Record<string, unknown>> = Omit<
  SnapshotSource<AppState>,
  'kind' | 'lookup' | 'push'
> &
  LookupAndPush<AppState>;

/**
 * Declares a source that can only list what is open now: `snapshot(context)` yields every approval open in the
 * source; the kit pushes what is new or changed and marks resolved what it no longer lists. `lookup(ids, context)`,
 * when given, enables reconciliation, and a push path beside it (`push`).
 */
export function snapshot<AppState extends object = Record<string, unknown>>(
  declaration: SnapshotDeclaration<AppState>,
): SnapshotSource<AppState> {
  return { ...declaration, kind: 'snapshot' };
}
