import { describe, expect, it, vi } from 'vitest';
import type { ApprovalWrite } from '../../src/api/index.js';
import type { IntegrationClient } from '../../src/client/index.js';
import { registerSerializedApprovalsSender } from '../../src/client/serialized-approvals.js';
import type { CursorKey } from '../../src/worker/sync/cursor.js';
import { ApprovalPusher, type PushLimits } from '../../src/worker/sync/pusher.js';

/** The writes of a body the pusher sent. */
const writesOf = (body: string): ApprovalWrite[] =>
  (JSON.parse(body) as { approvals: ApprovalWrite[] }).approvals;

/** A client whose Update approvals calls each wait until the test settles them. */
function stubClient() {
  const calls: { writes: ApprovalWrite[]; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const client = {};
  registerSerializedApprovalsSender(client, (body) => {
    {
      const writes = writesOf(body);
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      return new Promise<void>((resolve, reject) => {
        calls.push({
          writes: [...writes],
          resolve: () => {
            inFlight -= 1;
            resolve();
          },
          reject: (error) => {
            inFlight -= 1;
            reject(error);
          },
        });
      });
    }
  });
  return {
    client: client as unknown as IntegrationClient,
    calls,
    get inFlight() {
      return inFlight;
    },
    get mostInFlight() {
      return mostInFlight;
    },
  };
}

/** A client that acknowledges every batch at once. */
function acknowledgingClient() {
  const batches: ApprovalWrite[][] = [];
  const bodies: string[] = [];
  const client = {};
  registerSerializedApprovalsSender(client, async (body) => {
    bodies.push(body);
    batches.push(writesOf(body));
  });
  return { client: client as unknown as IntegrationClient, batches, bodies };
}

const T0 = Date.UTC(2026, 4, 1, 10);
const write = (n: number, data: Record<string, unknown> = {}): ApprovalWrite => ({
  id: `PO-${n}`,
  schemaId: 'po',
  approver: 'ada',
  resolved: false,
  lastModified: new Date(T0 + n * 1000).toISOString(),
  data: { title: `Request ${n}`, ...data },
});
const keyOf = (n: number): CursorKey => ({ at: T0 + n * 1000, id: `PO-${n}` });
const limits = (overrides: Partial<PushLimits> = {}): PushLimits => ({
  batchSize: 100,
  batchBytes: 1024 * 1024,
  concurrency: 4,
  ...overrides,
});
const bodyBytes = (writes: readonly ApprovalWrite[]) =>
  Buffer.byteLength(JSON.stringify({ approvals: writes }));

describe('batches', () => {
  it('fills a batch up to exactly batchBytes of the body it sends, not one byte short', async () => {
    const { client, bodies } = acknowledgingClient();
    const three = [write(0), write(1), write(2)];
    const batchBytes = bodyBytes(three);
    const pusher = new ApprovalPusher({ client, limits: limits({ batchBytes }) });
    for (const item of [...three, write(3)]) await pusher.add(item);
    await pusher.finish();
    expect(bodies.map((body) => Buffer.byteLength(body))).toEqual([batchBytes, bodyBytes([write(3)])]);
  });

  it('holds at most batchSize approvals, keeping their order', async () => {
    const { client, batches } = acknowledgingClient();
    const pusher = new ApprovalPusher({ client, limits: limits({ batchSize: 3 }) });
    for (let n = 0; n < 8; n += 1) await pusher.add(write(n));
    await pusher.finish();
    expect(batches.map((batch) => batch.map((item) => item.id))).toEqual([
      ['PO-0', 'PO-1', 'PO-2'],
      ['PO-3', 'PO-4', 'PO-5'],
      ['PO-6', 'PO-7'],
    ]);
    expect(pusher.pushed).toBe(8);
  });

  it('keeps each request body within batchBytes, filling batches as far as it allows', async () => {
    const { client, batches } = acknowledgingClient();
    const batchBytes = 1_000;
    const pusher = new ApprovalPusher({ client, limits: limits({ batchBytes }) });
    const writes = Array.from({ length: 40 }, (_, n) => write(n, { note: 'x'.repeat((n * 37) % 200) }));
    for (const item of writes) await pusher.add(item);
    await pusher.finish();

    expect(batches.flat()).toEqual(writes);
    expect(batches.length).toBeGreaterThan(1);
    for (const [index, batch] of batches.entries()) {
      expect(bodyBytes(batch)).toBeLessThanOrEqual(batchBytes);
      // A batch was closed only because the next approval would not fit.
      const next = batches[index + 1]?.[0];
      if (next !== undefined) expect(bodyBytes([...batch, next])).toBeGreaterThan(batchBytes);
    }
  });

  it('counts bytes in UTF-8, not in characters', async () => {
    const { client, batches } = acknowledgingClient();
    const batchBytes = 1_000;
    const pusher = new ApprovalPusher({ client, limits: limits({ batchBytes }) });
    for (let n = 0; n < 12; n += 1) await pusher.add(write(n, { note: 'é€'.repeat(60) }));
    await pusher.finish();
    for (const batch of batches) expect(bodyBytes(batch)).toBeLessThanOrEqual(batchBytes);
  });

  it('sends an approval larger than batchBytes alone rather than dropping it', async () => {
    const { client, batches } = acknowledgingClient();
    const pusher = new ApprovalPusher({ client, limits: limits({ batchBytes: 500 }) });
    await pusher.add(write(0));
    await pusher.add(write(1, { note: 'x'.repeat(800) }));
    await pusher.add(write(2));
    await pusher.finish();
    expect(batches.map((batch) => batch.map((item) => item.id))).toEqual([['PO-0'], ['PO-1'], ['PO-2']]);
  });
});

describe('backpressure', () => {
  it('has at most `concurrency` requests in flight and reads at most one waiting batch ahead', async () => {
    const stub = stubClient();
    const concurrency = 2;
    const batchSize = 5;
    const pusher = new ApprovalPusher({ client: stub.client, limits: limits({ batchSize, concurrency }) });
    let read = 0;
    async function* source() {
      for (let n = 0; n < 100; n += 1) {
        read += 1;
        yield write(n);
      }
    }
    const feeding = (async () => {
      for await (const item of source()) await pusher.add(item);
      await pusher.finish();
    })();

    await vi.waitFor(() => expect(stub.calls).toHaveLength(concurrency));
    // Give the feeder every chance to read further while no request is answered.
    for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(stub.inFlight).toBe(concurrency);
    // In flight, one full batch waiting for a slot, and the approval that found the batch full.
    expect(read).toBeLessThanOrEqual((concurrency + 1) * batchSize + 1);
    const readWhileBlocked = read;

    // One answer frees one slot: the source is read one batch further, no more.
    stub.calls[0]?.resolve();
    await vi.waitFor(() => expect(stub.calls).toHaveLength(concurrency + 1));
    for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(read - readWhileBlocked).toBeLessThanOrEqual(batchSize);

    // Answer everything as it comes.
    let answered = 1;
    while (answered < 100 / batchSize) {
      await vi.waitFor(() => expect(stub.calls.length).toBeGreaterThan(answered));
      stub.calls[answered]?.resolve();
      answered += 1;
    }
    await feeding;
    expect(stub.mostInFlight).toBe(concurrency);
    expect(pusher.pushed).toBe(100);
  });

  it('rejects with a failed request once the others have settled, and takes no more approvals', async () => {
    const stub = stubClient();
    const pusher = new ApprovalPusher({
      client: stub.client,
      limits: limits({ batchSize: 1, concurrency: 3 }),
    });
    await pusher.add(write(0));
    await pusher.add(write(1));
    await pusher.add(write(2));
    const finished = pusher.finish();
    await vi.waitFor(() => expect(stub.calls).toHaveLength(3));
    stub.calls[0]?.reject(new Error('service down'));
    let settled = false;
    void finished
      .catch(() => {})
      .finally(() => {
        settled = true;
      });
    stub.calls[1]?.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false); // the third request is still in flight
    stub.calls[2]?.resolve();
    await expect(finished).rejects.toThrow('service down');
    await expect(pusher.add(write(3))).rejects.toThrow('service down');
    expect(pusher.pushed).toBe(2);
    expect(stub.calls).toHaveLength(3);
  });
});

describe('acknowledgement', () => {
  /** A pusher over a stub client, with three requests in flight, recording what it reports acknowledged. */
  function acknowledgingPusher(batchSize: number) {
    const stub = stubClient();
    const acknowledged: CursorKey[] = [];
    const pusher = new ApprovalPusher({
      client: stub.client,
      limits: limits({ batchSize, concurrency: 3 }),
      onAcknowledged: (key) => acknowledged.push(key),
    });
    return { stub, pusher, acknowledged };
  }

  it('reports only the contiguous acknowledged prefix when batches finish out of order', async () => {
    const { stub, pusher, acknowledged } = acknowledgingPusher(2);
    for (let n = 0; n < 6; n += 1) await pusher.add(write(n), keyOf(n));
    const finished = pusher.finish();
    await vi.waitFor(() => expect(stub.calls).toHaveLength(3));
    const [first, second, third] = stub.calls;

    third?.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(acknowledged).toEqual([]);

    second?.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(acknowledged).toEqual([]);

    // The first batch completes the prefix: everything up to the end of the third is acknowledged at once.
    first?.resolve();
    await finished;
    expect(acknowledged).toEqual([keyOf(5)]);
  });

  it('advances batch by batch when they finish in order, and never backwards', async () => {
    const { stub, pusher, acknowledged } = acknowledgingPusher(2);
    // The second batch holds older changes than the first (a source out of order).
    for (const n of [4, 5, 0, 1, 6, 7]) await pusher.add(write(n), keyOf(n));
    const finished = pusher.finish();
    await vi.waitFor(() => expect(stub.calls).toHaveLength(3));
    stub.calls[0]?.resolve();
    await vi.waitFor(() => expect(acknowledged).toEqual([keyOf(5)]));
    stub.calls[1]?.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(acknowledged).toEqual([keyOf(5)]);
    stub.calls[2]?.resolve();
    await finished;
    expect(acknowledged).toEqual([keyOf(5), keyOf(7)]);
  });

  it('does not report a prefix past a failed batch', async () => {
    const { stub, pusher, acknowledged } = acknowledgingPusher(1);
    for (let n = 0; n < 3; n += 1) await pusher.add(write(n), keyOf(n));
    const finished = pusher.finish();
    await vi.waitFor(() => expect(stub.calls).toHaveLength(3));
    stub.calls[0]?.resolve();
    stub.calls[1]?.reject(new Error('rejected'));
    stub.calls[2]?.resolve();
    await expect(finished).rejects.toThrow('rejected');
    expect(acknowledged).toEqual([keyOf(0)]);
  });
});
