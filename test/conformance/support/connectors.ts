import {
  type ChangeWindow,
  Connector,
  incremental,
  type PushDeclaration,
  type PushDelivery,
  push,
  type Secret,
  type SourceApproval,
  type SourceContext,
  snapshot,
  type TaskContext,
  task,
  verifyHmacSignature,
} from 'approval-connector-kit';
import type { ConformanceSubject } from 'approval-connector-kit/conformance';
import { z } from 'zod';
import {
  DELIVERY_HEADER,
  FakeDriver,
  type FakeDriverOptions,
  type FakeEvent,
  type FakePage,
  type FakeRequest,
  type FakeSource,
  SIGNATURE_HEADER,
} from './source.js';

/**
 * What can be wrong with a connector of these tests: each is a bug the battery exists to catch, in a connector that
 * is correct everywhere else (a good pre-check, one instance across runs, paging to the end).
 */
export type Bug =
  // Sync: what arrives, and when.
  | 'wall-clock-cursor'
  | 'resolved-never-set'
  | 'ties-dropped-at-page-boundary'
  | 'detail-cache-by-time'
  | 'progress-saved-before-acknowledged'
  | 'mark-in-memory'
  // Snapshot and reconciliation: nothing resolved that was not read.
  | 'cache-never-forgets'
  | 'first-page-only'
  | 'short-page-taken-as-last'
  | 'listing-failure-swallowed'
  | 'lookup-first-page-only'
  | 'lookup-failure-swallowed'
  // Tasks.
  | 'failure-swallowed'
  | 'outage-as-verdict'
  | 'precheck-ignored'
  | 'acts-then-fails'
  | 'credentials-kept-in-state'
  | 'signal-ignored'
  | 'acts-after-deadline'
  // The push path: what it takes, and what it names.
  | 'verify-always-true'
  | 'verify-ignores-body'
  | 'unsigned-accepted'
  | 'verify-reserialized-body'
  | 'delivery-id-per-request'
  | 'ids-filtered-by-payload'
  | 'payload-state'
  | 'every-id-on-each-event'
  | 'approval-ids-mismatch'
  | 'throws-on-unknown-event'
  | 'lookup-drops-batch-on-missing';

export const PAGE_SIZE = 3;

function approvalOf(request: FakeRequest, bugs: ReadonlySet<Bug>, title = request.title): SourceApproval {
  return {
    id: request.id,
    schemaId: 'request',
    approver: request.approver,
    resolved: bugs.has('resolved-never-set') ? false : request.status !== 'open',
    lastModified: bugs.has('wall-clock-cursor') ? new Date() : new Date(request.updatedAt),
    data: { title },
  };
}

/** Reads every page of a listing, `next(offset)` giving the page at that offset, until the source says no more. */
async function* allPages(
  next: (offset: number) => Promise<FakePage>,
  bugs: ReadonlySet<Bug>,
  firstPageOnly: Bug,
): AsyncIterable<FakeRequest> {
  let offset = 0;
  for (;;) {
    const { records, more } = await next(offset);
    yield* records;
    offset += records.length;
    if (bugs.has(firstPageOnly)) return;
    // The bug: a page shorter than asked taken for the last one.
    if (bugs.has('short-page-taken-as-last') && records.length < PAGE_SIZE) return;
    if (!more || records.length === 0) return;
  }
}

function taskTypes(source: FakeSource, bugs: ReadonlySet<Bug>) {
  const precheck = async (
    { approval }: { approval: { id: string } },
    { signal }: { signal: AbortSignal },
  ) => {
    if (bugs.has('precheck-ignored') || bugs.has('acts-then-fails')) return true as const;
    let open: boolean;
    try {
      open = await source.isOpen(approval.id, bugs.has('signal-ignored') ? undefined : signal);
    } catch (error) {
      // The bug: an outage taken for a verdict on the request.
      if (!bugs.has('outage-as-verdict')) throw error;
      return { status: 'systemError' as const, meta: { code: 'not_checked', message: String(error) } };
    }
    if (open) return true as const;
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
      const ignoresSignal = bugs.has('signal-ignored') || bugs.has('acts-after-deadline');
      const wasOpen = source.get(approval.id)?.status === 'open';
      try {
        await source.decide(
          approval.id,
          status,
          context.idempotencyKey,
          ignoresSignal ? undefined : context.signal,
        );
      } catch (error) {
        // The bug: the source refused, and the approver is told it is done.
        if (!bugs.has('failure-swallowed')) throw error;
      }
      // The bug: checks after acting, when the decision is already in the source.
      if (bugs.has('acts-then-fails') && !wasOpen) {
        throw Object.assign(new Error(`${approval.id} was already decided`), { status: 409 });
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

/** The source's records by id, a page of ids at a time; `bugs` break it. */
async function* lookup(
  fake: FakeSource,
  ids: readonly string[],
  bugs: ReadonlySet<Bug>,
): AsyncIterable<SourceApproval> {
  try {
    for await (const request of allPages(
      (offset) => fake.find(ids, offset, PAGE_SIZE),
      bugs,
      'lookup-first-page-only',
    )) {
      yield approvalOf(request, bugs);
    }
  } catch (error) {
    // The bug: a failed lookup taken for requests the source no longer has.
    if (!bugs.has('lookup-failure-swallowed')) throw error;
  }
}

/** Whether the delivery carries the fake source's signature of its body under `secret`; `bugs` break it. */
function verifyDelivery(delivery: PushDelivery, secret: Secret | undefined, bugs: ReadonlySet<Bug>): boolean {
  const signature = delivery.headers[SIGNATURE_HEADER];
  // The bug: a check that accepts anything.
  if (bugs.has('verify-always-true')) return true;
  // The bug: an unsigned delivery taken for one from a source set up without a secret.
  if (bugs.has('unsigned-accepted') && signature === undefined) return true;
  // The bug: a signature of the right form taken for a genuine one.
  if (bugs.has('verify-ignores-body')) return /^sha256=[0-9a-f]{64}$/.test(signature ?? '');
  if (secret === undefined) return false;
  // The bug: the signature checked over the body as parsed and written again, not over the bytes that came.
  const body = bugs.has('verify-reserialized-body')
    ? JSON.stringify(JSON.parse(delivery.body.toString('utf8')))
    : delivery.body;
  return verifyHmacSignature({ secret, body, signature, prefix: 'sha256=' });
}

function eventOf(delivery: PushDelivery): FakeEvent {
  return JSON.parse(delivery.body.toString('utf8')) as FakeEvent;
}

/**
 * The push path of the fake connectors, over the fake source's webhook: deliveries verified by their signature, each
 * naming the request it concerns, deduped by their id. One per connector instance: what it remembers lives as long
 * as the process.
 */
class FakePushPath {
  /** For the bug: every request read or named so far. */
  readonly #known = new Set<string>();
  /** For the bug: the request as the latest delivery about it said. */
  readonly #payloads = new Map<string, FakeRequest>();

  constructor(
    private readonly fake: FakeSource,
    private readonly bugs: ReadonlySet<Bug>,
  ) {}

  declaration(): PushDeclaration {
    return push({
      verify: (delivery, { secret }) => verifyDelivery(delivery, secret, this.bugs),
      approvalIds: (delivery) => this.#approvalIds(eventOf(delivery)),
      // The bug: deduped by the request, so a second event about it is taken for a retry of the first.
      deliveryId: (delivery) =>
        this.bugs.has('delivery-id-per-request')
          ? eventOf(delivery).request.id
          : delivery.headers[DELIVERY_HEADER],
    });
  }

  /** Tells the push path of a request the connector read. */
  read(id: string): void {
    if (this.bugs.has('every-id-on-each-event')) this.#known.add(id);
  }

  #approvalIds({ event, request }: FakeEvent): string[] {
    // The bug: an event it was not written for is an error, and the delivery is dropped.
    if (this.bugs.has('throws-on-unknown-event') && event !== 'created' && event !== 'updated') {
      throw new Error(`Unknown event ${event}`);
    }
    // The bug: a request the payload shows decided is taken to need nothing more.
    if (this.bugs.has('ids-filtered-by-payload') && request.status !== 'open') return [];
    if (this.bugs.has('payload-state')) this.#payloads.set(request.id, request);
    // The bug: the source's key in another form than the approval's id.
    if (this.bugs.has('approval-ids-mismatch')) return [request.id.toLowerCase()];
    // The bug: every request it knows, whatever the event.
    if (this.bugs.has('every-id-on-each-event')) {
      this.#known.add(request.id);
      return [...this.#known];
    }
    return [request.id];
  }

  /** The lookup beside the push path; `bugs` break it. */
  async *lookup(ids: readonly string[]): AsyncIterable<SourceApproval> {
    // The bug: the source refuses a batch with an id it does not have, and the refusal is taken for none found.
    if (this.bugs.has('lookup-drops-batch-on-missing') && ids.some((id) => !this.fake.requests.has(id)))
      return;
    for await (const approval of lookup(this.fake, ids, this.bugs)) {
      this.read(approval.id);
      const payload = this.#payloads.get(approval.id);
      this.#payloads.delete(approval.id);
      // The bug: what the delivery said of the request, rather than what the source says now.
      yield payload === undefined ? approval : approvalOf(payload, this.bugs);
    }
  }
}

/** How a fake connector differs from the usual one. */
export interface FakeConnectorOptions {
  /** Whether its source declares it reads in `(lastModified, id)` order. @default true */
  ordered?: boolean;
  /** Whether its source declares a push path. @default true */
  push?: boolean;
}

/**
 * An incremental connector over a {@link FakeSource}: paged, ordered, with `lookup()` and a push path; `bugs` break
 * it.
 */
export class FakeIncrementalConnector extends Connector {
  readonly tasks;
  readonly source;
  override readonly uiTemplates = [
    { type: 'card', schemaId: 'request', template: { title: '{{data.title}}' } },
  ];
  /** For the bug: where the last page read ended, kept in memory. */
  #mark: { at: number; id: string } | undefined;
  /** For the bug: the titles read, by the time of their change. */
  readonly #titles = new Map<number, string>();
  readonly #push: FakePushPath;

  constructor(
    private readonly fake: FakeSource,
    private readonly bugs: ReadonlySet<Bug> = new Set(),
    options: FakeConnectorOptions = {},
  ) {
    super();
    this.tasks = taskTypes(fake, bugs);
    this.#push = new FakePushPath(fake, bugs);
    this.source = incremental({
      ordered: options.ordered ?? true,
      changes: (window: ChangeWindow, context: SourceContext) => this.#changes(window, context),
      lookup: (ids: readonly string[]) => this.#push.lookup(ids),
      ...(options.push === false ? {} : { push: this.#push.declaration() }),
    });
  }

  async *#changes({ since }: ChangeWindow, context: SourceContext): AsyncIterable<SourceApproval> {
    // Pages by (updatedAt, id), from the first change at `since`.
    let after = since === undefined ? undefined : { at: since.getTime() - 1, id: '\uffff' };
    // The bug: a mark of its own, saved as soon as a page is read, before the service has what was read.
    const mark = this.bugs.has('progress-saved-before-acknowledged')
      ? (context.state.read()?.mark as { at: number; id: string } | undefined)
      : this.#mark;
    if (mark !== undefined && (after === undefined || mark.at > after.at)) after = mark;
    for (;;) {
      const { records, more } = await this.fake.page(after, PAGE_SIZE);
      const last = records.at(-1);
      if (last !== undefined && this.bugs.has('progress-saved-before-acknowledged')) {
        await context.state.write({ mark: { at: last.updatedAt, id: last.id } });
      }
      // The bug: the same mark, in memory: it outlives a run that failed before the service had the page.
      if (last !== undefined && this.bugs.has('mark-in-memory'))
        this.#mark = { at: last.updatedAt, id: last.id };
      for (const request of records) {
        this.#push.read(request.id);
        yield approvalOf(request, this.bugs, this.#title(request));
      }
      if (!more || last === undefined) return;
      after = this.bugs.has('ties-dropped-at-page-boundary')
        ? { at: last.updatedAt, id: '\uffff' }
        : { at: last.updatedAt, id: last.id };
    }
  }

  #title(request: FakeRequest): string {
    if (!this.bugs.has('detail-cache-by-time')) return request.title;
    // The bug: details cached by the time of the change, which tied requests share.
    const cached = this.#titles.get(request.updatedAt);
    if (cached !== undefined) return cached;
    this.#titles.set(request.updatedAt, request.title);
    return request.title;
  }
}

/** A snapshot connector over a {@link FakeSource}: it lists what is open, page by page, with a push path. */
export class FakeSnapshotConnector extends Connector {
  readonly tasks;
  readonly source;
  /** For the bug: every request it ever listed. */
  readonly #remembered = new Map<string, FakeRequest>();
  readonly #push: FakePushPath;

  constructor(
    private readonly fake: FakeSource,
    private readonly bugs: ReadonlySet<Bug> = new Set(),
  ) {
    super();
    this.tasks = taskTypes(fake, bugs);
    this.#push = new FakePushPath(fake, bugs);
    this.source = snapshot({
      snapshot: () => this.#open(),
      lookup: (ids: readonly string[]) => this.#push.lookup(ids),
      push: this.#push.declaration(),
    });
  }

  async *#open(): AsyncIterable<SourceApproval> {
    const open: FakeRequest[] = [];
    try {
      for await (const request of allPages(
        (offset) => this.fake.openPage(offset, PAGE_SIZE),
        this.bugs,
        'first-page-only',
      )) {
        open.push(request);
      }
    } catch (error) {
      // The bug: a failed listing taken for a source with nothing (more) open.
      if (!this.bugs.has('listing-failure-swallowed')) throw error;
    }
    for (const request of open) this.#remembered.set(request.id, request);
    // The bug: a cache that lists what it once saw, as if it were still there.
    const listed = this.bugs.has('cache-never-forgets') ? [...this.#remembered.values()] : open;
    for (const request of listed) {
      this.#push.read(request.id);
      yield approvalOf(request, this.bugs);
    }
  }
}

/** The incremental connector with `authRequired`: tasks carry the approver's credentials, sealed to its key. */
export class FakeAuthConnector extends FakeIncrementalConnector {
  override readonly authRequired = true;
}

const named = (kind: string, bugs: Bug[]) => (bugs.length === 0 ? kind : `${kind} with ${bugs.join(', ')}`);

export function authSubject(...bugs: Bug[]): ConformanceSubject<FakeDriver> {
  return {
    name: named('FakeAuthConnector', bugs),
    driver: () => new FakeDriver(),
    connector: (driver) => new FakeAuthConnector(driver.source, new Set(bugs)),
  };
}

export function incrementalSubject(...bugs: Bug[]): ConformanceSubject<FakeDriver> {
  return incrementalSubjectWith({}, ...bugs);
}

/**
 * The incremental connector with a driver that differs: one whose `holds()` does not say when a request changed is
 * the hard case for a cursor; one that cannot make the source hang leaves only its slow answers to the deadline.
 * `push: false` leaves its push path out.
 */
export function incrementalSubjectWith(
  options: FakeDriverOptions & { unordered?: boolean; push?: false },
  ...bugs: Bug[]
): ConformanceSubject<FakeDriver> {
  const traits = [options.unordered ? 'unordered' : '', options.push === false ? 'without push' : '']
    .filter(Boolean)
    .join(', ');
  return {
    name: named(`FakeIncrementalConnector${traits === '' ? '' : ` (${traits})`}`, bugs),
    driver: () => Object.assign(new FakeDriver(options), { pageSize: PAGE_SIZE }),
    connector: (driver) =>
      new FakeIncrementalConnector(driver.source, new Set(bugs), {
        ordered: !options.unordered,
        ...(options.push === false ? { push: false } : {}),
      }),
  };
}

export function snapshotSubject(...bugs: Bug[]): ConformanceSubject<FakeDriver> {
  return {
    name: named('FakeSnapshotConnector', bugs),
    driver: () => Object.assign(new FakeDriver(), { pageSize: PAGE_SIZE }),
    connector: (driver) => new FakeSnapshotConnector(driver.source, new Set(bugs)),
  };
}
