import { DatabaseSync, StatementSync } from 'node:sqlite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_APPROVAL_ID_LENGTH } from '../../src/api/index.js';
import type { ReferenceBackend, Tenant } from '../../src/backend/index.js';
import { call, type ManualClock, start } from './helpers.js';

let backend: ReferenceBackend;
let clock: ManualClock;

beforeAll(async () => {
  ({ backend, clock } = await start());
});
afterAll(() => backend.close());

const BASE = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(BASE + seconds * 1000).toISOString();

function put(tenant: Tenant, id: string, approval: unknown) {
  return call(backend, 'PUT', `/v2/rawapprovals/${encodeURIComponent(id)}`, {
    token: tenant.connectorToken,
    body: { approval },
  });
}
function putMany(tenant: Tenant, approvals: unknown[]) {
  return call(backend, 'PUT', '/v2/rawapprovals', { token: tenant.connectorToken, body: { approvals } });
}
function get(tenant: Tenant, id: string) {
  return call(backend, 'GET', `/v2/rawapprovals/${encodeURIComponent(id)}`, { token: tenant.connectorToken });
}
function list(tenant: Tenant, query = '') {
  return call(backend, 'GET', `/v2/rawapprovals${query}`, { token: tenant.connectorToken });
}

describe('Update approval (9) and Get approval (8)', () => {
  it('creates an approval and answers it in the envelope, with defaults for resolved and data', async () => {
    const tenant = backend.createTenant();
    expect(
      await put(tenant, 'PO 1/2', {
        schemaId: 's',
        approver: 'u',
        lastModified: '2026-01-01T02:00:00+02:00',
      }),
    ).toEqual(expect.objectContaining({ status: 200, body: { status: 'success' } }));
    const answer = await get(tenant, 'PO 1/2');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      status: 'success',
      data: {
        approval: {
          id: 'PO 1/2',
          schemaId: 's',
          approver: 'u',
          resolved: false,
          lastModified: '2026-01-01T00:00:00.000Z',
          data: {},
        },
      },
    });
  });

  it('stamps a new approval without lastModified with the time it was received', async () => {
    const tenant = backend.createTenant();
    await put(tenant, 'A', { schemaId: 's', approver: 'u' });
    expect((await get(tenant, 'A')).body.data.approval.lastModified).toBe(
      new Date(clock.now()).toISOString(),
    );
  });

  it('merges: fields sent replace the stored ones, fields left out keep theirs', async () => {
    const tenant = backend.createTenant();
    await put(tenant, 'A', { schemaId: 's', approver: 'u', data: { a: 1 }, lastModified: at(1) });
    await put(tenant, 'A', { resolved: true, lastModified: at(2) });
    expect((await get(tenant, 'A')).body.data.approval).toEqual({
      id: 'A',
      schemaId: 's',
      approver: 'u',
      resolved: true,
      lastModified: at(2),
      data: { a: 1 },
    });
  });

  it('ignores, and answers success to, a write that is not newer; applies one without lastModified', async () => {
    const tenant = backend.createTenant();
    await put(tenant, 'A', { schemaId: 's', approver: 'u', lastModified: at(10) });
    expect((await put(tenant, 'A', { approver: 'older', lastModified: at(5) })).body).toEqual({
      status: 'success',
    });
    expect((await put(tenant, 'A', { approver: 'same', lastModified: at(10) })).status).toBe(200);
    // The same instant written with another offset is not newer either.
    await put(tenant, 'A', { approver: 'offset', lastModified: '2026-01-01T01:00:10.000+01:00' });
    expect((await get(tenant, 'A')).body.data.approval.approver).toBe('u');
    await put(tenant, 'A', { approver: 'always' });
    expect((await get(tenant, 'A')).body.data.approval).toMatchObject({
      approver: 'always',
      lastModified: at(10),
    });
  });

  it.each([
    ['a new approval without schemaId', { approver: 'u' }],
    ['a new approval without approver', { schemaId: 's' }],
    ['a lastModified without offset', { schemaId: 's', approver: 'u', lastModified: '2026-01-01T00:00:00' }],
    ['a resolved that is not a boolean', { schemaId: 's', approver: 'u', resolved: 'yes' }],
    ['data that is not an object', { schemaId: 's', approver: 'u', data: [1] }],
  ])('answers 400 {status: failure} for %s', async (_, approval) => {
    const tenant = backend.createTenant();
    const answer = await put(tenant, 'A', approval);
    expect(answer).toMatchObject({ status: 400, body: { status: 'failure' } });
    expect((await get(tenant, 'A')).status).toBe(404);
  });

  it('answers 400 without the approval object and 404 {status: failure} for an unknown approval', async () => {
    const tenant = backend.createTenant();
    const bad = await call(backend, 'PUT', '/v2/rawapprovals/A', { token: tenant.connectorToken, body: {} });
    expect(bad.status).toBe(400);
    expect(await get(tenant, 'missing')).toMatchObject({ status: 404, body: { status: 'failure' } });
  });
});

describe('Update approvals (11)', () => {
  it('writes a batch in order; repeated ids are applied in order', async () => {
    const tenant = backend.createTenant();
    const answer = await putMany(tenant, [
      { id: 'A', schemaId: 's', approver: 'u', lastModified: at(1) },
      { id: 'B', schemaId: 's', approver: 'u', lastModified: at(2) },
      { id: 'A', resolved: true, lastModified: at(3) },
      { id: 'A', resolved: false, lastModified: at(2) },
    ]);
    expect(answer).toMatchObject({ status: 200, body: { status: 'success' } });
    expect((await get(tenant, 'A')).body.data.approval).toMatchObject({
      resolved: true,
      lastModified: at(3),
    });
  });

  it('is atomic: one invalid approval writes none of the batch', async () => {
    const tenant = backend.createTenant();
    await putMany(tenant, [{ id: 'A', schemaId: 's', approver: 'u', lastModified: at(1) }]);
    const answer = await putMany(tenant, [
      { id: 'A', approver: 'changed', lastModified: at(2) },
      { id: 'B', schemaId: 's', approver: 'u' },
      { id: 'C', approver: 'no schema' },
    ]);
    expect(answer).toMatchObject({ status: 400, body: { status: 'failure' } });
    expect((await get(tenant, 'A')).body.data.approval.approver).toBe('u');
    expect((await get(tenant, 'B')).status).toBe(404);
  });

  it('runs a batch as one transaction of one prepared statement per approval, prepared once', async () => {
    const tenant = backend.createTenant();
    const batch = (from: number) =>
      Array.from({ length: 50 }, (_, i) => ({
        id: `A${from + i}`,
        schemaId: 's',
        approver: 'u',
        lastModified: at(1),
      }));
    await putMany(tenant, batch(0));
    const prepare = vi.spyOn(DatabaseSync.prototype, 'prepare');
    const spies = (['run', 'get', 'all'] as const).map((method) => vi.spyOn(StatementSync.prototype, method));
    let statements: string[] = [];
    let prepared: unknown[] = [];
    const newer = batch(0).map((approval) => ({ ...approval, lastModified: at(2) }));
    try {
      // New approvals, then newer versions of existing ones.
      expect((await putMany(tenant, batch(50))).status).toBe(200);
      expect((await putMany(tenant, newer)).status).toBe(200);
    } finally {
      // Each statement's first word; run() keeps the order of the writes and of BEGIN and COMMIT.
      statements = spies.flatMap((spy) =>
        spy.mock.contexts.map(
          (statement) => (statement as StatementSync).sourceSQL.trim().split(/\s/, 1)[0]!,
        ),
      );
      prepared = prepare.mock.calls.map(([sql]) => sql);
      for (const spy of [prepare, ...spies]) spy.mockRestore();
    }
    expect(prepared).toEqual([]);
    expect(statements.filter((statement) => statement === 'INSERT')).toHaveLength(100);
    expect(statements.filter((statement) => !['INSERT', 'SELECT'].includes(statement))).toEqual([
      'BEGIN',
      'COMMIT',
      'BEGIN',
      'COMMIT',
    ]);
    // Nothing is read per approval (authentication reads the token).
    expect(statements.filter((statement) => statement === 'SELECT').length).toBeLessThan(50);
  });

  it('answers 400 for an empty batch, a missing id, or more than 500 approvals', async () => {
    const tenant = backend.createTenant();
    expect((await putMany(tenant, [])).status).toBe(400);
    expect((await putMany(tenant, [{ schemaId: 's', approver: 'u' }])).status).toBe(400);
    const many = Array.from({ length: 501 }, (_, i) => ({ id: `A${i}`, schemaId: 's', approver: 'u' }));
    expect((await putMany(tenant, many)).status).toBe(400);
    expect((await putMany(tenant, many.slice(0, 500))).status).toBe(200);
  });

  it('answers 413 {status: failure} for a body over 5 MiB', async () => {
    const tenant = backend.createTenant();
    const answer = await putMany(tenant, [
      { id: 'A', schemaId: 's', approver: 'u', data: { big: 'x'.repeat(5 * 1024 * 1024) } },
    ]);
    expect(answer).toMatchObject({ status: 413, body: { status: 'failure' } });
  });
});

describe('approval ids', () => {
  const longest = 'A'.repeat(MAX_APPROVAL_ID_LENGTH);

  it('reads an approval with a 255-character id written by Update approvals on endpoints 8 and 9, not 414', async () => {
    const tenant = backend.createTenant();
    // Multi-byte characters too: the limit counts characters, not the bytes of their percent-encoding.
    const ids = [longest, '€'.repeat(MAX_APPROVAL_ID_LENGTH), `${'😀'.repeat(127)}A`];
    expect(ids.map((id) => id.length)).toEqual([255, 255, 255]);
    const written = await putMany(
      tenant,
      ids.map((id) => ({ id, schemaId: 's', approver: 'u', lastModified: at(1) })),
    );
    expect(written.status).toBe(200);
    for (const id of ids) {
      const read = await get(tenant, id);
      expect(read.status).toBe(200);
      expect(read.body.data.approval.id).toBe(id);
      const update = await put(tenant, id, { resolved: true, lastModified: at(2) });
      expect(update).toMatchObject({ status: 200, body: { status: 'success' } });
    }
    expect(backend.listApprovals(tenant.system.id).map((approval) => approval.resolved)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it('refuses an id over 255 characters with the same 400 on Update approvals and on endpoints 8 and 9', async () => {
    const tenant = backend.createTenant();
    const id = `${longest}A`;
    const batch = await putMany(tenant, [{ id, schemaId: 's', approver: 'u' }]);
    expect(batch).toMatchObject({ status: 400, body: { status: 'failure' } });
    expect(await put(tenant, id, { schemaId: 's', approver: 'u' })).toMatchObject({
      status: 400,
      body: { status: 'failure' },
    });
    expect(await get(tenant, id)).toMatchObject({ status: 400, body: { status: 'failure' } });
    // Far longer than the router's own default limit of 100.
    expect(await get(tenant, 'B'.repeat(5000))).toMatchObject({ status: 400, body: { status: 'failure' } });
    expect(backend.listApprovals(tenant.system.id)).toEqual([]);
  });

  it('refuses on Update approvals an id that the path endpoints cannot name: ".", "..", a lone surrogate', async () => {
    const tenant = backend.createTenant();
    // JSON escapes: a raw lone surrogate would reach the server as U+FFFD.
    for (const id of ['.', '..', 'A\\uD800', '\\uDC00B']) {
      const rawBody = `{"approvals":[{"id":"${id}","schemaId":"s","approver":"u"}]}`;
      const answer = await call(backend, 'PUT', '/v2/rawapprovals', {
        token: tenant.connectorToken,
        rawBody,
      });
      expect(answer).toMatchObject({ status: 400, body: { status: 'failure' } });
    }
    expect(backend.listApprovals(tenant.system.id)).toEqual([]);
  });
});

describe('the lastModified rule for full writes, as a sync sends them', () => {
  /** A write of every field of approval A, as the worker's sync sends each approval. */
  const full = (version: number, lastModified?: string) => ({
    schemaId: `s${version}`,
    approver: `u${version}`,
    resolved: version % 2 === 1,
    ...(lastModified === undefined ? {} : { lastModified }),
    data: { version },
  });
  /** Approval A as Get approval answers it after the write of `version` stamped `lastModified`. */
  const stored = (version: number, lastModified: string) => ({ id: 'A', ...full(version), lastModified });

  describe.each([
    [
      'Update approvals (11)',
      (tenant: Tenant, approval: object) => putMany(tenant, [{ id: 'A', ...approval }]),
    ],
    ['Update approval (9)', (tenant: Tenant, approval: object) => put(tenant, 'A', approval)],
  ])('%s', (_, write) => {
    it('replaces every field with a full write that is newer', async () => {
      const tenant = backend.createTenant();
      await write(tenant, full(1, at(10)));
      expect(await write(tenant, full(2, at(11)))).toMatchObject({
        status: 200,
        body: { status: 'success' },
      });
      expect((await get(tenant, 'A')).body.data.approval).toEqual(stored(2, at(11)));
    });

    it('ignores, and answers success to, a full write that is older or of the same instant in any offset', async () => {
      const tenant = backend.createTenant();
      await write(tenant, full(1, at(10)));
      for (const lastModified of [
        at(9),
        at(10),
        '2026-01-01T01:00:10.000+01:00',
        '2025-12-31T18:30:10-05:30',
      ]) {
        expect(await write(tenant, full(2, lastModified))).toMatchObject({
          status: 200,
          body: { status: 'success' },
        });
      }
      expect((await get(tenant, 'A')).body.data.approval).toEqual(stored(1, at(10)));
    });

    it('applies a full write without lastModified whatever is stored, keeping the stored lastModified', async () => {
      const tenant = backend.createTenant();
      await write(tenant, full(1, at(10)));
      expect((await write(tenant, full(2))).status).toBe(200);
      expect((await get(tenant, 'A')).body.data.approval).toEqual(stored(2, at(10)));
    });
  });

  it('applies the full writes of one id in a batch in order: one older than an earlier one is ignored', async () => {
    const tenant = backend.createTenant();
    const answer = await putMany(tenant, [
      { id: 'A', ...full(1, at(10)) },
      { id: 'A', ...full(2, at(12)) },
      { id: 'A', ...full(3, at(11)) },
      { id: 'A', ...full(4, at(12)) },
    ]);
    expect(answer).toMatchObject({ status: 200, body: { status: 'success' } });
    expect((await get(tenant, 'A')).body.data.approval).toEqual(stored(2, at(12)));
  });
});

describe('the lastModified rule (property)', () => {
  type Model = { schemaId: string; approver: string; resolved: boolean; lastModified: number; data: object };
  interface Write {
    id: string;
    schemaId?: string;
    approver?: string;
    resolved?: boolean;
    lastModified?: { seconds: number; offset: number };
    data?: Record<string, number>;
  }
  const write: fc.Arbitrary<Write> = fc.record(
    {
      id: fc.constantFrom('A', 'B', 'C'),
      schemaId: fc.constantFrom('s1', 's2'),
      approver: fc.constantFrom('u1', 'u2'),
      resolved: fc.boolean(),
      lastModified: fc.record({
        seconds: fc.integer({ min: 0, max: 6 }),
        offset: fc.constantFrom(0, 120, -330),
      }),
      data: fc.dictionary(fc.constantFrom('k', 'l'), fc.integer(), { maxKeys: 2 }),
    },
    { requiredKeys: ['id'] },
  );

  /** The same instant, written with a UTC offset of `offset` minutes. */
  function withOffset(ms: number, offset: number): string {
    if (offset === 0) return new Date(ms).toISOString();
    const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
    const sign = offset > 0 ? '+' : '-';
    const abs = Math.abs(offset);
    return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  }

  function apply(model: Map<string, Model>, w: Write, now: number): boolean {
    const incoming = w.lastModified === undefined ? undefined : BASE + w.lastModified.seconds * 1000;
    const stored = model.get(w.id);
    if (stored === undefined) {
      if (w.schemaId === undefined || w.approver === undefined) return false;
      model.set(w.id, {
        schemaId: w.schemaId,
        approver: w.approver,
        resolved: w.resolved ?? false,
        lastModified: incoming ?? now,
        data: w.data ?? {},
      });
      return true;
    }
    if (incoming !== undefined && incoming <= stored.lastModified) return true;
    model.set(w.id, {
      schemaId: w.schemaId ?? stored.schemaId,
      approver: w.approver ?? stored.approver,
      resolved: w.resolved ?? stored.resolved,
      lastModified: incoming ?? stored.lastModified,
      data: w.data ?? stored.data,
    });
    return true;
  }

  function toWire(w: Write) {
    const { lastModified, ...rest } = w;
    return lastModified === undefined
      ? rest
      : { ...rest, lastModified: withOffset(BASE + lastModified.seconds * 1000, lastModified.offset) };
  }

  it('keeps the newest write of each approval, merging fields, whatever the order and batching', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(write, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
        async (batches) => {
          const tenant = backend.createTenant();
          const model = new Map<string, Model>();
          for (const batch of batches) {
            const next = new Map(model);
            const valid = batch.every((w) => apply(next, w, clock.now()));
            const answer =
              batch.length === 1
                ? await put(tenant, batch[0]!.id, (({ id: _id, ...fields }) => fields)(toWire(batch[0]!)))
                : await putMany(tenant, batch.map(toWire));
            expect(answer.status).toBe(valid ? 200 : 400);
            if (valid) for (const [id, value] of next) model.set(id, value);
          }
          for (const id of ['A', 'B', 'C']) {
            const answer = await get(tenant, id);
            const expected = model.get(id);
            if (expected === undefined) {
              expect(answer.status).toBe(404);
              continue;
            }
            expect(answer.body.data.approval).toEqual({
              id,
              ...expected,
              lastModified: new Date(expected.lastModified).toISOString(),
            });
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('Get approvals (10)', () => {
  it('answers at most 50: the most recently modified, oldest first', async () => {
    const tenant = backend.createTenant();
    await putMany(
      tenant,
      Array.from({ length: 60 }, (_, i) => ({
        id: `A${String(i).padStart(2, '0')}`,
        schemaId: 's',
        approver: 'u',
        lastModified: at(i),
      })),
    );
    const answer = await list(tenant);
    expect(answer.status).toBe(200);
    const ids = answer.body.data.approvals.map((a: { id: string }) => a.id);
    expect(ids).toHaveLength(50);
    expect(ids[0]).toBe('A10');
    expect(ids[49]).toBe('A59');
  });

  it('filters by lastModified[gt], sent percent-encoded or not, and by resolved; shallow leaves data out', async () => {
    const tenant = backend.createTenant();
    await putMany(tenant, [
      { id: 'A', schemaId: 's', approver: 'u', lastModified: at(1), resolved: true, data: { a: 1 } },
      { id: 'B', schemaId: 's', approver: 'u', lastModified: at(2), data: { b: 1 } },
      { id: 'C', schemaId: 's', approver: 'u', lastModified: at(3), resolved: true },
    ]);
    const ids = (answer: { body: { data: { approvals: { id: string }[] } } }) =>
      answer.body.data.approvals.map((a) => a.id);
    expect(ids(await list(tenant, `?lastModified%5Bgt%5D=${encodeURIComponent(at(1))}`))).toEqual(['B', 'C']);
    expect(ids(await list(tenant, `?lastModified[gt]=${at(2)}`))).toEqual(['C']);
    expect(ids(await list(tenant, '?resolved=true'))).toEqual(['A', 'C']);
    expect(ids(await list(tenant, '?resolved=false'))).toEqual(['B']);
    expect(ids(await list(tenant, `?resolved=true&lastModified%5Bgt%5D=${at(1)}`))).toEqual(['C']);
    const shallow = await list(tenant, '?view=shallow');
    expect(shallow.body.data.approvals[0]).toEqual({
      id: 'A',
      schemaId: 's',
      approver: 'u',
      resolved: true,
      lastModified: at(1),
    });
    expect((await list(tenant, '?view=full')).body.data.approvals[0].data).toEqual({ a: 1 });
  });

  it.each([
    '?resolved=yes',
    '?resolved=1',
    '?view=deep',
    '?lastModified%5Bgt%5D=yesterday',
    '?lastModified%5Bgt%5D=2026-01-01T00:00:00',
  ])('answers 400 {status: failure} for %s', async (query) => {
    const tenant = backend.createTenant();
    expect(await list(tenant, query)).toMatchObject({ status: 400, body: { status: 'failure' } });
  });

  it('pages forward with lastModified[gt] without skipping or repeating, ties included (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 0, maxLength: 140 }),
        fc.option(fc.boolean(), { nil: undefined }),
        async (seconds, resolved) => {
          const tenant = backend.createTenant();
          const approvals = seconds.map((s, i) => ({
            id: `A${String(i).padStart(3, '0')}`,
            schemaId: 's',
            approver: 'u',
            resolved: i % 3 === 0,
            lastModified: at(s),
          }));
          if (approvals.length > 0) expect((await putMany(tenant, approvals)).status).toBe(200);
          const expected = approvals
            .filter((a) => resolved === undefined || a.resolved === resolved)
            .sort((a, b) => a.lastModified.localeCompare(b.lastModified) || a.id.localeCompare(b.id))
            .map((a) => a.id);
          const seen: string[] = [];
          let cursor = at(-1);
          for (let guard = 0; guard < 10; guard++) {
            const filter = resolved === undefined ? '' : `&resolved=${resolved}`;
            const page = (await list(tenant, `?lastModified%5Bgt%5D=${encodeURIComponent(cursor)}${filter}`))
              .body.data.approvals as { id: string; lastModified: string }[];
            if (page.length === 0) break;
            seen.push(...page.map((a) => a.id));
            cursor = page.at(-1)!.lastModified;
          }
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('lets a page grow past 50 when the 50th shares its lastModified with the next ones', async () => {
    const tenant = backend.createTenant();
    await putMany(
      tenant,
      Array.from({ length: 70 }, (_, i) => ({
        id: `A${String(i).padStart(2, '0')}`,
        schemaId: 's',
        approver: 'u',
        lastModified: at(i < 45 ? i : 100),
      })),
    );
    const answer = await list(tenant, `?lastModified%5Bgt%5D=${at(-1)}`);
    expect(answer.body.data.approvals).toHaveLength(70);
  });
});
