import { z } from 'zod';
import { type ChangeWindow, Connector, incremental, type SourceApproval, task } from '../../src/index.js';

const START = Date.parse('2026-01-01T00:00:00.000Z');

/** Called by the source after it has yielded each record, with how many it has yielded so far. */
export type OnYield = (yielded: number) => void;

/** The approval at `index` of the benchmarks' source: 310 bytes of JSON on average, with nested data. */
export function sampleApproval(index: number): SourceApproval {
  return {
    id: `PO-${String(index).padStart(7, '0')}`,
    schemaId: 'purchase-order',
    approver: `approver-${index % 50}`,
    resolved: index % 10 === 0,
    lastModified: new Date(START + index * 1000).toISOString(),
    data: {
      title: `Purchase order ${index}`,
      amount: { value: (index % 9973) * 10.5, currency: 'EUR' },
      requester: `requester-${index % 200}`,
      lines: [
        { sku: `SKU-${index % 1000}`, quantity: 1 + (index % 7) },
        { sku: `SKU-${(index + 1) % 1000}`, quantity: 2 },
      ],
    },
  };
}

/** Builds the approval at an index of a source. */
export type MakeApproval = (index: number) => SourceApproval;

/**
 * The approval at `index` with about 1 KB of JSON in its `data` (980 bytes on average, 1,120 for the whole
 * approval): what the benchmarks against hand-written loops send.
 */
export function kilobyteApproval(index: number): SourceApproval {
  const approval = sampleApproval(index);
  return {
    ...approval,
    data: {
      ...approval.data,
      costCenter: `CC-${index % 97}`,
      notes: Array.from(
        { length: 13 },
        (_, line) => `Line ${line + 1} of order ${index}: delivered to site ${(index + line) % 31}, checked.`,
      ),
      tags: ['capex', `quarter-${(index % 4) + 1}`, `region-${index % 5}`],
    },
  };
}

/**
 * A source system of `count` approvals that exist only while they are read: each record is built when the sync loop
 * asks for the next one, in `(lastModified, id)` order, and nothing keeps it afterwards. So whatever memory a run
 * holds is the kit's, not the source's.
 */
export async function* lazyApprovals(
  count: number,
  onYield?: OnYield,
  make: MakeApproval = sampleApproval,
): AsyncGenerator<SourceApproval> {
  for (let index = 0; index < count; index += 1) {
    yield make(index);
    onYield?.(index + 1);
  }
}

/** An incremental connector whose source is {@link lazyApprovals}. Its task handler is never called here. */
export class LazyConnector extends Connector {
  readonly tasks = {
    approve: task({ input: z.object({ approval: z.object({ id: z.string() }) }), run: async () => {} }),
  };
  readonly source = incremental({ changes: (window) => this.#changes(window) });
  readonly #count: number;
  readonly #onYield: OnYield | undefined;
  readonly #make: MakeApproval;

  constructor(count: number, options: { onYield?: OnYield; approval?: MakeApproval } = {}) {
    super();
    this.#count = count;
    this.#onYield = options.onYield;
    this.#make = options.approval ?? sampleApproval;
  }

  #changes(window: ChangeWindow): AsyncIterable<SourceApproval> {
    // A first run (no cursor) reads everything, which is what every benchmark run here is.
    if (window.since !== undefined) throw new Error('the benchmark expects a first run, without a cursor');
    return lazyApprovals(this.#count, this.#onYield, this.#make);
  }
}
