/**
 * What a check of the battery is, and what it runs in.
 * @module
 */
import type { UiTemplateWrite } from '../api/index.js';
import type { ReferenceBackend } from '../backend/index.js';
import type { Connector, ConnectorSource } from '../connector/index.js';
import type { SourceKind } from '../connector/internal.js';
import { seededRandom } from '../internal/random.js';
import { unreachable } from '../internal/unreachable.js';
import type { ConformanceSubject, SourceDriver } from './driver.js';
import { CheckSkipped, ConformanceFailure, messageOf } from './report.js';
import { SOURCE_CLOCKS, type SourceClock, Stage, type StageSettings } from './stage.js';

/** What the checks make of a kind of source. */
export interface SourceKindTraits {
  /** The kind in a sentence: `'a snapshot source'`. */
  readonly named: string;
  /** Whether its runs save a `(lastModified, id)` cursor, which the cursor checks watch. */
  readonly savesCursor: boolean;
  /**
   * Whether it lists only what is open now: a request it stops listing is resolved by the next run, one resolved
   * before it was first listed never reaches the service, and one resolved keeps the content it was last listed
   * with. Otherwise a request deleted from the source can be anything until a reconciliation.
   */
  readonly listsOpenOnly: boolean;
}

/**
 * What the checks make of each kind of source, keyed by every kind `ConnectorSource` declares: a new kind is a
 * compile error here until it says, and the checks read these rather than the kind's name.
 */
export const SOURCE_KINDS = {
  incremental: { named: 'an incremental source', savesCursor: true, listsOpenOnly: false },
  snapshot: { named: 'a snapshot source', savesCursor: false, listsOpenOnly: true },
} as const satisfies Record<SourceKind, SourceKindTraits>;

/** What the connector declares, read once from a connector built for a throwaway driver. */
export interface Declared {
  name: string;
  kind: SourceKind;
  ordered: boolean;
  taskTypes: string[];
  lookup: boolean;
  /** Whether the source declares a push path, and whether that path registers its webhook itself. */
  push: boolean;
  webhook: boolean;
  authRequired: boolean;
  uiTemplates: readonly UiTemplateWrite[];
}

export function declarationsOf(connector: Connector<object>): Declared {
  const { source } = connector;
  return {
    name: connector.constructor.name,
    kind: source.kind,
    ordered: orderedIn(source),
    taskTypes: Object.keys(connector.tasks),
    lookup: source.lookup !== undefined,
    push: source.push !== undefined,
    webhook: source.push?.webhook !== undefined,
    authRequired: connector.authRequired,
    uiTemplates: connector.uiTemplates,
  };
}

/** Whether the source declares that it reads in `(lastModified, id)` order. */
function orderedIn(source: ConnectorSource<object>): boolean {
  switch (source.kind) {
    case 'incremental':
      return source.ordered;
    case 'snapshot':
      return false;
    default:
      return unreachable(source, 'source');
  }
}

/** What a check runs in: the backend, the subject, the seed and a way to open stages that are closed after it. */
export class CheckEnvironment<D extends SourceDriver = SourceDriver> {
  readonly backend: ReferenceBackend;
  readonly subject: ConformanceSubject<D>;
  readonly declared: Declared;
  readonly seed: number;
  readonly numRuns: number;
  readonly random: () => number;
  readonly #stages: Stage<D>[] = [];
  #clockTurn: number | undefined;

  constructor(parts: {
    backend: ReferenceBackend;
    subject: ConformanceSubject<D>;
    declared: Declared;
    seed: number;
    numRuns: number;
  }) {
    this.backend = parts.backend;
    this.subject = parts.subject;
    this.declared = parts.declared;
    this.seed = parts.seed;
    this.numRuns = parts.numRuns;
    this.random = seededRandom(parts.seed);
  }

  /**
   * A new tenant and a fresh source; closed with the environment. Unless `settings` says, the source's clock is
   * the next of behind, equal to and ahead of the machine's, from a start drawn from the seed, so that a check's
   * stages, and the checks of a battery, see all three.
   */
  async stage(settings: StageSettings = {}): Promise<Stage<D>> {
    const clock = settings.clock ?? this.nextClock();
    const stage = await Stage.open(this.backend, this.subject, { ...settings, clock });
    this.#stages.push(stage);
    return stage;
  }

  /** The source clock of the next stage: the three in turn, from one drawn from the seed. */
  nextClock(): SourceClock {
    const clocks = Object.keys(SOURCE_CLOCKS) as SourceClock[];
    this.#clockTurn ??= Math.floor(this.random() * clocks.length);
    return clocks[this.#clockTurn++ % clocks.length] ?? 'equal';
  }

  /** What the checks make of the declared kind of source. */
  get source(): SourceKindTraits {
    return SOURCE_KINDS[this.declared.kind];
  }

  /**
   * Compares what the stage's service holds with what its source holds, as the declared kind of source shows it
   * (see {@link Stage.expectExact}).
   */
  expectExact(stage: Stage<D>, context: string): Promise<void> {
    const { listsOpenOnly } = this.source;
    return stage.expectExact(listsOpenOnly ? 'resolved' : 'any', listsOpenOnly, context);
  }

  /** A title for a request, drawn from the seed. */
  title(prefix = 'Request'): string {
    return `${prefix} ${Math.floor(this.random() * 1_000_000).toString(36)}`;
  }

  async close(): Promise<void> {
    await Promise.all(this.#stages.map((stage) => stage.close()));
  }
}

/** One check of the battery. */
export interface Check {
  /** A stable name, `group.check`: what the report and the runner show, and what `only`/`skip` take. */
  name: string;
  /** What it proves, in a sentence. */
  title: string;
  /** Run once per declared task type (`tasks.*`), with the type. */
  perTaskType?: boolean;
  run(environment: CheckEnvironment, taskType: string | undefined): Promise<void>;
}

/** Skips the check, saying why, unless `condition` holds. */
export function requires(condition: unknown, reason: string): asserts condition {
  if (!condition) throw new CheckSkipped(reason);
}

/** Fails when a sync run that should have succeeded did not. */
export async function expectRun(
  run: Promise<{ error?: unknown; cut: boolean }>,
  what = 'a sync run',
): Promise<void> {
  const { error } = await run;
  if (error !== undefined) {
    throw new ConformanceFailure(`${what} to succeed`, `it failed: ${messageOf(error)}`);
  }
}

/** Gives the machine's clock a tick, so that what happens next is stamped later than what happened before. */
export const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 2));
