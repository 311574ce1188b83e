/**
 * The soak's source system: `approvals` approvals that change over `versions` versions of the source, generated
 * from a seed. Every record of every version is a pure function of the seed, so the driver knows, without asking
 * the worker, what the source held at each version and what the service must end with.
 * @module
 */
import { z } from 'zod';
import { parseOptions } from '../../src/internal/options.js';
import { hash32, unit } from './random.js';

/** The size and seed of a {@link VersionedSource}. */
export interface SourceShape {
  seed: number;
  /** Approvals in the last version (a tenth of them are created in later versions). */
  approvals: number;
  /** Versions of the source, from 0; each one changes some approvals. */
  versions: number;
  /** The share of existing approvals each version after the first changes, in [0, 1]. */
  changeRate: number;
}

/** An approval as the source holds it in one version. */
export interface SoakApproval {
  id: string;
  schemaId: string;
  approver: string;
  resolved: boolean;
  /** UTC ISO 8601 with milliseconds, as `Date#toISOString` writes it. */
  lastModified: string;
  data: Record<string, unknown>;
}

/** A position in the source's order of changes: `(lastModified, id)`, as the kit's sync cursor holds it. */
export interface ChangeKey {
  lastModified: string;
  id: string;
}

const ShapeSchema = z.object({
  seed: z.number().int(),
  approvals: z.number().int().min(1).max(1_000_000),
  versions: z.number().int().min(1).max(10_000),
  changeRate: z.number().min(0).max(1),
});

const START = Date.UTC(2026, 0, 1);
// Each version's changes land in its own day of source time, so a later version is always later in the source's
// clock, as in a real source.
const VERSION_MS = 86_400_000;
const SCHEMAS = ['purchase-order', 'leave-request', 'expense-claim'] as const;
const CURRENCIES = ['EUR', 'USD', 'JPY'] as const;
const ID = /^AP-(\d{7})$/;

/** Orders changes by `lastModified` as instants, then by `id`. */
export function compareKeys(a: ChangeKey, b: ChangeKey): number {
  const byTime = Date.parse(a.lastModified) - Date.parse(b.lastModified);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The generated source. Cheap to build; the records of the version last asked for are kept, sorted. */
export class VersionedSource {
  readonly shape: SourceShape;
  /** How much of its day a version's changes are spread over, in milliseconds. */
  readonly #spreadMs: number;
  readonly #forced = new Map<number, number>();
  #sorted: { version: number; records: SoakApproval[] } | undefined;

  constructor(shape: SourceShape) {
    this.shape = parseOptions(ShapeSchema, shape, 'source shape');
    // Two seconds an approval: wide enough that an overlap window re-reads only part of a version.
    this.#spreadMs = Math.min(80_000, Math.max(60, this.shape.approvals * 2)) * 1000;
  }

  /** The id of the approval at `index`. */
  static id(index: number): string {
    return `AP-${String(index).padStart(7, '0')}`;
  }

  /** The index of an approval id, or `undefined` for an id the source never had. */
  indexOf(id: string): number | undefined {
    const match = ID.exec(id);
    const index = match === null ? Number.NaN : Number(match[1]);
    return Number.isInteger(index) && index < this.shape.approvals ? index : undefined;
  }

  /** The version in which the approval at `index` is created. */
  bornIn(index: number): number {
    const { seed, versions } = this.shape;
    if (versions === 1 || unit(seed, 'born-later', index) >= 0.1) return 0;
    return 1 + (hash32(seed, 'born-in', index) % (versions - 1));
  }

  /** Whether the approval at `index` changes (or is created) in `version`. */
  changesIn(index: number, version: number): boolean {
    const born = this.bornIn(index);
    if (version < born) return false;
    if (version === born) return true;
    return (
      unit(this.shape.seed, 'changes', index, version) < this.shape.changeRate ||
      this.#forcedIn(version) === index
    );
  }

  /** The approval at `index` as it was written in `version` (which must be one it changes in). */
  written(index: number, version: number): SoakApproval {
    const { seed } = this.shape;
    // Stamped to the minute (as Jira's JQL sees them), the second or the millisecond, and 5% of a version's
    // changes in one burst: many records share a timestamp, and some runs of them are longer than a batch.
    const precision = unit(seed, 'precision', index, version);
    const offset = hash32(seed, 'offset', index, version) % this.#spreadMs;
    const burst = hash32(seed, 'burst', version) % this.#spreadMs;
    const stamped =
      unit(seed, 'in-burst', index, version) < 0.05
        ? burst - (burst % 1000)
        : offset - (offset % (precision < 0.2 ? 60_000 : precision < 0.5 ? 1000 : 1));
    const lines = 1 + (hash32(seed, 'lines', index, version) % 3);
    return {
      id: VersionedSource.id(index),
      schemaId: SCHEMAS[hash32(seed, 'schema', index) % SCHEMAS.length]!,
      approver: `approver-${hash32(seed, 'approver', index, version) % 97}`,
      resolved: unit(seed, 'resolved', index, version) < (version === this.bornIn(index) ? 0.1 : 0.35),
      lastModified: new Date(START + version * VERSION_MS + stamped).toISOString(),
      data: {
        title: `Request ${index}, version ${version}`,
        version,
        amount: {
          value: (hash32(seed, 'amount', index, version) % 1_000_000) / 100,
          currency: CURRENCIES[hash32(seed, 'currency', index, version) % CURRENCIES.length]!,
        },
        lines: Array.from({ length: lines }, (_, line) => ({
          sku: `SKU-${hash32(seed, 'sku', index, version, line) % 1000}`,
          quantity: 1 + line,
        })),
        ...(unit(seed, 'note', index, version) < 0.1
          ? { note: 'Überweisung ✓ 請求書 "quoted" \\ back' }
          : {}),
      },
    };
  }

  /** Every record the approval at `index` had, oldest first, up to and including `version`. */
  history(index: number, version: number): SoakApproval[] {
    const records: SoakApproval[] = [];
    for (let at = this.bornIn(index); at <= version; at += 1) {
      if (this.changesIn(index, at)) records.push(this.written(index, at));
    }
    return records;
  }

  /** The approval at `index` as the source holds it in `version`; `undefined` before it is created. */
  current(index: number, version: number): SoakApproval | undefined {
    for (let at = version; at >= this.bornIn(index); at -= 1) {
      if (this.changesIn(index, at)) return this.written(index, at);
    }
    return undefined;
  }

  /** Every approval the source holds in `version`, in `(lastModified, id)` order. */
  records(version: number): readonly SoakApproval[] {
    if (this.#sorted?.version !== version) {
      const records: SoakApproval[] = [];
      for (let index = 0; index < this.shape.approvals; index += 1) {
        const record = this.current(index, version);
        if (record !== undefined) records.push(record);
      }
      this.#sorted = { version, records: records.sort(compareKeys) };
    }
    return this.#sorted.records;
  }

  /** The records of `version` changed at or after `since` (ms since the epoch; everything when `undefined`). */
  changesSince(version: number, since: number | undefined): readonly SoakApproval[] {
    const records = this.records(version);
    if (since === undefined) return records;
    let low = 0;
    let high = records.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (Date.parse(records[middle]!.lastModified) < since) low = middle + 1;
      else high = middle;
    }
    return records.slice(low);
  }

  /** The greatest `(lastModified, id)` of `version`: where a sync cursor ends once it has read everything. */
  newest(version: number): ChangeKey {
    const last = this.records(version).at(-1);
    if (last === undefined) throw new RangeError(`version ${version} of the source is empty`);
    return { lastModified: last.lastModified, id: last.id };
  }

  // One approval changes in every version after the first, whatever the change rate, so each version is new work.
  #forcedIn(version: number): number | undefined {
    if (version === 0) return undefined;
    let forced = this.#forced.get(version);
    if (forced === undefined) {
      forced = hash32(this.shape.seed, 'forced', version) % this.shape.approvals;
      while (this.bornIn(forced) > version) forced = (forced + 1) % this.shape.approvals;
      this.#forced.set(version, forced);
    }
    return forced;
  }
}
