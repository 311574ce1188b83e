import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ApprovalWrite, endpoints } from '../../src/api/index.js';
import { startReferenceBackend } from '../../src/backend/index.js';
import { IntegrationClient } from '../../src/client/index.js';
import { parseSourceApproval } from '../../src/connector/source.js';
import { ApprovalPusher, type PushLimits } from '../../src/worker/sync/pusher.js';
import { ScriptedServer } from '../client/support/scripted-server.js';

// The sync's hot path, against real HTTP: each approval checked and serialized once, the body unchanged.

const T0 = Date.UTC(2026, 4, 1, 10);
const limits: PushLimits = { batchSize: 100, batchBytes: 1024 * 1024, concurrency: 2 };

/** Source records in every form a source may give them, checked as the sync checks them. */
function sourceWrites(): ApprovalWrite[] {
  const records = [
    {
      id: 'PO-1',
      schemaId: 'po',
      approver: 'ada',
      resolved: false,
      lastModified: new Date(T0),
      data: { title: 'Paper', n: 1 },
    },
    {
      data: { nested: { list: [1, 'two', null, { 'é€': true }] }, ['__proto__']: { kept: 1 } },
      lastModified: '2026-05-01T12:00:00+02:00',
      resolved: true,
      approver: 'grace',
      schemaId: 'po',
      id: 'PO-2 ✓',
      extra: 'dropped by the check',
    },
    { id: 'PO-3', schemaId: 'po', approver: 'ada', resolved: false, data: {} },
  ];
  return records.map((record) => parseSourceApproval(JSON.parse(JSON.stringify(record)), false));
}

describe('one pass per approval', () => {
  let server: ScriptedServer;
  let client: IntegrationClient;
  beforeAll(async () => {
    server = await ScriptedServer.start();
    client = new IntegrationClient({ baseUrl: server.url, token: 'tok', retry: { retries: 0 } });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });
  afterEach(() => {
    server.requests.length = 0;
    vi.restoreAllMocks();
  });

  const pushAll = async (writes: readonly ApprovalWrite[]) => {
    const pusher = new ApprovalPusher({ client, limits });
    for (const write of writes) await pusher.add(write);
    await pusher.finish();
  };

  it('sends the body byte for byte as putApprovals would, with the same headers', async () => {
    const writes = [...sourceWrites(), { id: 'PO-4', resolved: true }];
    await client.putApprovals(writes);
    await pushAll(writes);
    const [byClient, byPusher] = server.requests;
    expect(byPusher?.body).toBe(byClient?.body);
    expect(byPusher?.method).toBe('PUT');
    expect(byPusher?.url).toBe(byClient?.url);
    expect(byPusher?.headers['content-type']).toBe(byClient?.headers['content-type']);
    expect(byPusher?.headers.authorization).toBe(byClient?.headers.authorization);
  });

  it('sends the body byte for byte as putApprovals would, whatever the data', async () => {
    const data = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
    await fc.assert(
      fc.asyncProperty(fc.array(data, { minLength: 1, maxLength: 4 }), async (datas) => {
        server.requests.length = 0;
        const writes = datas.map((item, n) =>
          parseSourceApproval(
            {
              id: `PO-${n}`,
              schemaId: 'po',
              approver: 'ada',
              resolved: false,
              lastModified: new Date(T0),
              data: item,
            },
            true,
          ),
        );
        await client.putApprovals(writes);
        await pushAll(writes);
        expect(server.requests[1]?.body).toBe(server.requests[0]?.body);
      }),
      { numRuns: 25 },
    );
  });

  it('serializes each approval once, not once to measure it and again to send it', async () => {
    const writes = sourceWrites();
    const ids = new Set(writes.map((write) => write.id));
    const stringify = vi.spyOn(JSON, 'stringify');
    await pushAll(writes);
    const serializing = (value: unknown) => {
      const approvals = (value as { approvals?: unknown } | null)?.approvals;
      const items = Array.isArray(approvals) ? approvals : [value];
      return items.filter((item) => ids.has((item as { id?: unknown } | null)?.id as string)).length;
    };
    const serialized = stringify.mock.calls.reduce((sum, [value]) => sum + serializing(value), 0);
    expect(serialized).toBe(writes.length);
  });

  it('does not check the approvals again against the request schema', async () => {
    const check = vi.spyOn(endpoints.putApprovals.body, 'safeParse');
    await client.putApprovals(sourceWrites());
    // The spy sees the client's own check, so that its silence below means something.
    expect(check).toHaveBeenCalledTimes(1);
    check.mockClear();
    await pushAll(sourceWrites());
    expect(server.requests).toHaveLength(2);
    expect(check).not.toHaveBeenCalled();
  });
});

describe('against the reference backend', () => {
  it('stores what the pusher sends as the client would have sent it', async () => {
    const backend = await startReferenceBackend();
    const { connectorToken } = backend.createTenant();
    const client = new IntegrationClient({ baseUrl: backend.url, token: connectorToken });
    try {
      const writes = sourceWrites();
      const pusher = new ApprovalPusher({ client, limits: { ...limits, batchSize: 2 } });
      for (const write of writes) await pusher.add(write);
      await pusher.finish();
      expect(pusher.pushed).toBe(writes.length);
      const stored = await Promise.all(writes.map((write) => client.getApproval(write.id)));
      expect(
        stored.map(({ id, schemaId, approver, resolved, data }) => ({
          id,
          schemaId,
          approver,
          resolved,
          data,
        })),
      ).toEqual(
        writes.map(({ id, schemaId, approver, resolved, data }) => ({
          id,
          schemaId,
          approver,
          resolved,
          data,
        })),
      );
      expect(stored[1]?.lastModified).toBe('2026-05-01T10:00:00.000Z');
    } finally {
      await client.close();
      await backend.close();
    }
  });
});
