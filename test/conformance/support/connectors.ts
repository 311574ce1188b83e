import {
  type ChangeWindow,
  Connector,
  incremental,
  type SourceApproval,
  type SourceContext,
  snapshot,
  type TaskContext,
  task,
} from 'approval-connector-kit';
import type { ConformanceSubject } from 'approval-connector-kit/conformance';
import { z } from 'zod';
import { FakeDriver, type FakeRequest, type FakeSource } from './source.js';

/** What can be wrong with a connector of these tests: each is a bug the battery exists to catch. */
export type Bug =
  | 'wall-clock-cursor'
  | 'resolved-never-set'
  | 'ties-dropped-at-page-boundary'
  | 'failure-swallowed'
  | 'precheck-ignored'
  | 'vanished-forgotten'
  | 'progress-saved-before-acknowledged'
  | 'credentials-kept-in-state'
  | 'signal-ignored';

const PAGE_SIZE = 3;

function approvalOf(request: FakeRequest, bugs: ReadonlySet<Bug>): SourceApproval {
  return {
    id: request.id,
    schemaId: 'request',
    approver: request.approver,
    resolved: bugs.has('resolved-never-set') ? false : request.status !== 'open',
    lastModified: bugs.has('wall-clock-cursor') ? new Date() : new Date(request.updatedAt),
    data: { title: request.title },
  };
}

function taskTypes(source: FakeSource, bugs: ReadonlySet<Bug>) {
  const precheck = async (
    { approval }: { approval: { id: string } },
    { signal }: { signal: AbortSignal },
  ) => {
    if (bugs.has('precheck-ignored')) return true as const;
    try {
      if (await source.isOpen(approval.id, bugs.has('signal-ignored') ? undefined : signal))
        return true as const;
    } catch (error) {
      if (bugs.has('failure-swallowed')) return true as const;
      throw error;
    }
    return {
      status: 'systemError' as const,
      meta: { code: 'already_decided', message: `${approval.id} is already decided` },
    };
  };
  const decide =
    (status: 'approved' | 'rejected') =>
    async ({ approval }: { approval: { id: string } }, context: TaskContext) => {
      const password = context.credentials?.password;
      if (password !== undefined && bugs.has('credentials-kept-in-state')) {
        await context.state.write({ lastLogin: password.reveal() });
      }
      try {
        const signal = bugs.has('signal-ignored') ? undefined : context.signal;
        await source.decide(approval.id, status, context.idempotencyKey, signal);
      } catch (error) {
        if (!bugs.has('failure-swallowed')) throw error;
      }
    };
  return {
    approve: task({
      input: z.object({ approval: z.object({ id: z.string(), data: z.object({ title: z.string() }) }) }),
      precheck,
      run: decide('approved'),
    }),
    reject: task({
      input: z.object({ approval: z.object({ id: z.string() }), approveComments: z.string().min(1) }),
      precheck,
      run: decide('rejected'),
    }),
  };
}

/** An incremental connector over a {@link FakeSource}: paged, ordered, with `lookup()`; `bugs` break it. */
export class FakeIncrementalConnector extends Connector {
  readonly tasks;
  readonly source;
  override readonly uiTemplates = [
    { type: 'card', schemaId: 'request', template: { title: '{{data.title}}' } },
  ];

  constructor(
    private readonly fake: FakeSource,
    private readonly bugs: ReadonlySet<Bug> = new Set(),
  ) {
    super();
    this.tasks = taskTypes(fake, bugs);
    this.source = incremental({
      ordered: true,
      changes: (window: ChangeWindow, context: SourceContext) => this.#changes(window, context),
      lookup: (ids: readonly string[]) => this.#lookup(ids),
    });
  }

  async *#changes({ since }: ChangeWindow, context: SourceContext): AsyncIterable<SourceApproval> {
    // Pages by (updatedAt, id), from the first change at `since`.
    let after = since === undefined ? undefined : { at: since.getTime() - 1, id: '\uffff' };
    // The bug: a mark of its own, saved as soon as a page is read, before the service has what was read.
    const mark = context.state.read()?.mark as { at: number; id: string } | undefined;
    if (this.bugs.has('progress-saved-before-acknowledged') && mark !== undefined) {
      if (after === undefined || mark.at > after.at) after = mark;
    }
    for (;;) {
      const page = await this.fake.page(after, PAGE_SIZE);
      const last = page.at(-1);
      if (this.bugs.has('progress-saved-before-acknowledged') && last !== undefined) {
        await context.state.write({ mark: { at: last.updatedAt, id: last.id } });
      }
      for (const request of page) yield approvalOf(request, this.bugs);
      if (page.length < PAGE_SIZE || last === undefined) return;
      after = this.bugs.has('ties-dropped-at-page-boundary')
        ? { at: last.updatedAt, id: '\uffff' }
        : { at: last.updatedAt, id: last.id };
    }
  }

  async *#lookup(ids: readonly string[]): AsyncIterable<SourceApproval> {
    for (const id of ids) {
      const request = this.fake.get(id);
      if (request !== undefined) yield approvalOf(request, this.bugs);
    }
  }
}

/** A snapshot connector over a {@link FakeSource}: it lists what is open. */
export class FakeSnapshotConnector extends Connector {
  readonly tasks;
  readonly source;
  readonly #remembered = new Map<string, FakeRequest>();

  constructor(
    private readonly fake: FakeSource,
    private readonly bugs: ReadonlySet<Bug> = new Set(),
  ) {
    super();
    this.tasks = taskTypes(fake, bugs);
    this.source = snapshot({ snapshot: () => this.#open() });
  }

  async *#open(): AsyncIterable<SourceApproval> {
    await this.fake.call();
    const open = [...this.fake.requests.values()].filter((request) => request.status === 'open');
    for (const request of open) this.#remembered.set(request.id, request);
    // The bug: a cache that lists what it once saw, as if it were still there.
    const listed = this.bugs.has('vanished-forgotten') ? [...this.#remembered.values()] : open;
    for (const request of listed) yield approvalOf(request, this.bugs);
  }
}

/** The incremental connector with `authRequired`: tasks carry the approver's credentials, sealed to its key. */
export class FakeAuthConnector extends FakeIncrementalConnector {
  override readonly authRequired = true;
}

export function authSubject(...bugs: Bug[]): ConformanceSubject<FakeDriver> {
  return {
    name: bugs.length === 0 ? 'FakeAuthConnector' : `FakeAuthConnector with ${bugs.join(', ')}`,
    driver: () => new FakeDriver(),
    connector: (driver) => new FakeAuthConnector(driver.source, new Set(bugs)),
  };
}

export function incrementalSubject(...bugs: Bug[]): ConformanceSubject<FakeDriver> {
  return {
    name: bugs.length === 0 ? 'FakeIncrementalConnector' : `FakeIncrementalConnector with ${bugs.join(', ')}`,
    driver: () => Object.assign(new FakeDriver(), { pageSize: PAGE_SIZE }),
    connector: (driver) => new FakeIncrementalConnector(driver.source, new Set(bugs)),
  };
}

/** The snapshot connector's cache outlives a restart, as a cache in a shared store would. */
export function snapshotSubject(...bugs: Bug[]): ConformanceSubject<FakeDriver> {
  const connectors = new WeakMap<FakeDriver, FakeSnapshotConnector>();
  return {
    name: bugs.length === 0 ? 'FakeSnapshotConnector' : `FakeSnapshotConnector with ${bugs.join(', ')}`,
    driver: () => new FakeDriver(),
    connector: (driver) => {
      if (!bugs.includes('vanished-forgotten')) return new FakeSnapshotConnector(driver.source);
      const connector = connectors.get(driver) ?? new FakeSnapshotConnector(driver.source, new Set(bugs));
      connectors.set(driver, connector);
      return connector;
    },
  };
}
