import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { Declared, SOURCE_KINDS, SourceKindTraits } from '../../src/conformance/check.js';
import type { SYNC_READS } from '../../src/conformance/subject.js';
import type { SourceKind, SourceOfKind } from '../../src/connector/source.js';
import type { unreachable } from '../../src/internal/unreachable.js';
import type { DeclaredConnector } from '../../src/worker/core/declared.js';
import type { SyncMode } from '../../src/worker/operations/metrics.js';

// A kind of source is declared once, by `ConnectorSource`; every other description of it is tied to that one, and
// every place that tells the kinds apart is keyed by them, so that a new kind is a compile error wherever it must be
// handled, rather than the other branch taken in silence.

/** The kinds with one more, as adding a kind to `ConnectorSource` would make them. */
type Widened = SourceKind | 'stream';

describe('a kind of source is described once', () => {
  it("the worker's check of a connector's source takes each kind with its members, and no other kind", () => {
    type Checked = z.output<typeof DeclaredConnector>['source'];
    expectTypeOf<Checked['kind']>().toEqualTypeOf<SourceKind>();
    expectTypeOf<{ [K in SourceKind]: keyof Extract<Checked, { kind: K }> }>().toEqualTypeOf<{
      [K in SourceKind]: keyof SourceOfKind<K>;
    }>();
  });

  it("the conformance kit's view of the connector and the worker's sync modes have every kind", () => {
    expectTypeOf<Declared['kind']>().toEqualTypeOf<SourceKind>();
    expectTypeOf<SourceKind>().toExtend<SyncMode>();
  });
});

describe('every branch on the kind of source handles every kind', () => {
  it('the tables are keyed by the kinds, and one more kind does not satisfy them', () => {
    expectTypeOf<keyof typeof SOURCE_KINDS>().toEqualTypeOf<SourceKind>();
    expectTypeOf<typeof SOURCE_KINDS>().toExtend<Record<SourceKind, SourceKindTraits>>();
    expectTypeOf<typeof SOURCE_KINDS>().not.toExtend<Record<Widened, SourceKindTraits>>();

    expectTypeOf<keyof typeof SYNC_READS>().toEqualTypeOf<SourceKind>();
    expectTypeOf<typeof SYNC_READS>().toExtend<{ [K in SourceKind]: keyof SourceOfKind<K> }>();
    expectTypeOf<typeof SYNC_READS>().not.toExtend<Record<Widened, string>>();
  });

  it('a switch that ends in unreachable() refuses a kind it does not handle', () => {
    expectTypeOf<Parameters<typeof unreachable>[0]>().toBeNever();
    const handled = (kind: SourceKind, end: typeof unreachable) => {
      switch (kind) {
        case 'incremental':
        case 'snapshot':
          return kind;
        default:
          return end(kind, 'kind of source');
      }
    };
    const widened = (kind: Widened, end: typeof unreachable) => {
      switch (kind) {
        case 'incremental':
        case 'snapshot':
          return kind;
        default:
          // @ts-expect-error 'stream' reaches the end: not handled
          return end(kind, 'kind of source');
      }
    };
    expectTypeOf(handled).returns.toEqualTypeOf<SourceKind>();
    expectTypeOf(widened).returns.toEqualTypeOf<SourceKind>();
  });
});
