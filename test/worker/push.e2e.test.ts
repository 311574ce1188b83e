import { Readable } from 'node:stream';
import { request } from 'undici';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestHarness } from '../../src/testing/index.js';
import { type ConnectorOptions, ConnectorWorker } from '../../src/worker/index.js';
import { at, openHarness } from './support/harness.js';
import { captureLogs } from './support/logs.js';
import type { MemorySource } from './support/memory-source.js';
import { PushConnector, signed, WEBHOOK_SECRET } from './support/push-connector.js';

let harness: TestHarness;
let source: MemorySource;
beforeEach(async () => ({ harness, source } = await openHarness({ approvals: ['PO-1', 'PO-2'] })));

/** A worker of the connector with its push path, the webhook secret given, after a first sync. */
async function startWorker(connector: PushConnector, push: ConnectorOptions['push'] = {}) {
  const worker = await harness.start(connector, { push: { secret: WEBHOOK_SECRET, ...push } });
  await worker.syncNow();
  return worker;
}

const held = (id: string) => harness.approvals().find((approval) => approval.id === id);

/** The value of a metric of the worker, by name and labels. */
async function metric(worker: ConnectorWorker<PushConnector>, name: string, labels = ''): Promise<number> {
  const { body } = await worker.metrics.render();
  const line = body.split('\n').find((text) => text.startsWith(`approval_connector_${name}${labels} `));
  return Number(line?.split(' ')[1]);
}

async function post(url: string, body: string, headers: Record<string, string> = {}, method = 'POST') {
  const answer = await request(url, { method, body, headers, reset: true });
  return { status: answer.statusCode, body: await answer.body.text() };
}

describe('a verified delivery', () => {
  it('is answered 202, and the approvals it names show as the source holds them now, by a lookup', async () => {
    const connector = new PushConnector(source);
    const worker = await startWorker(connector);
    const cursor = harness.state().state;
    source.put('PO-1', at(30), { resolved: true, data: { title: 'Decided in the source' } });

    // The event says nothing true of the approval: only the lookup's answer is pushed.
    expect(await harness.deliver(worker, signed({ ids: ['PO-1'], resolved: false }, 'D-1'))).toBe(202);

    expect(held('PO-1')).toMatchObject({ resolved: true, data: { title: 'Decided in the source' } });
    expect(connector.lookups).toEqual([['PO-1']]);
    expect(harness.state().state).toEqual(cursor);
    expect(await metric(worker, 'push_deliveries_total', '{outcome="accepted"}')).toBe(1);
    expect(await metric(worker, 'push_lag_seconds_count')).toBe(1);
  });

  it('delivered three times, and two out of order, leaves the service equal to the source', async () => {
    const connector = new PushConnector(source);
    const worker = await startWorker(connector);
    source.put('PO-1', at(30), { data: { title: 'v2' } });
    const first = signed({ ids: ['PO-1'] }, 'D-1');
    source.put('PO-1', at(40), { resolved: true, data: { title: 'v3' } });
    const second = signed({ ids: ['PO-1'] }, 'D-2');

    const answers = [];
    for (const delivery of [second, first, first, first])
      answers.push(await harness.deliver(worker, delivery));

    expect(answers).toEqual([202, 202, 200, 200]);
    expect(held('PO-1')).toMatchObject({ resolved: true, data: { title: 'v3' } });
    expect(held('PO-1')?.lastModified).toBe(at(40));
    // The retries of D-1 cost nothing: two lookups, one per delivery id.
    expect(connector.lookups).toEqual([['PO-1'], ['PO-1']]);
    expect(await metric(worker, 'push_deliveries_total', '{outcome="duplicate"}')).toBe(2);
  });

  it('a lookup naming an approval nobody holds no longer fails the lookup of the others', async () => {
    // The source no longer has PO-2 (withdrawn), and never had the other: the first is resolved, the second is not
    // written (the service refuses a new approval without schemaId and approver, which failed the whole batch).
    const connector = new PushConnector(source);
    const worker = await startWorker(connector);
    source.records.delete('PO-2');

    expect(await harness.deliver(worker, signed({ ids: ['PO-2', 'NEVER-AN-APPROVAL'] }, 'D-1'))).toBe(202);

    expect(held('PO-2')).toMatchObject({ resolved: true });
    expect(held('NEVER-AN-APPROVAL')).toBeUndefined();
    expect(harness.approvals()).toHaveLength(2);
  });

  it('that names no approval is answered and changes nothing', async () => {
    const connector = new PushConnector(source);
    const worker = await startWorker(connector);
    expect(await harness.deliver(worker, signed({ ids: [] }))).toBe(202);
    expect(connector.lookups).toEqual([]);
  });
});

describe('a delivery that cannot be trusted or read', () => {
  it('forged or unsigned, is refused 401, counted, and changes nothing', async () => {
    const { lines, destination } = captureLogs();
    const connector = new PushConnector(source);
    const worker = await harness.start(connector, {
      push: { secret: WEBHOOK_SECRET },
      logger: { level: 'info', destination },
    });
    await worker.syncNow();
    source.put('PO-1', at(30), { resolved: true });
    const before = harness.approvals();

    const unsigned = { body: JSON.stringify({ ids: ['PO-1'] }) };
    const forged = signed({ ids: ['PO-1'] }, 'D-1', 'a-secret-that-is-not-the-one');
    expect(await harness.deliver(worker, unsigned)).toBe(401);
    expect(await harness.deliver(worker, forged)).toBe(401);
    // A forged request with a real delivery id does not keep the genuine delivery out.
    expect(harness.approvals()).toEqual(before);
    expect(connector.lookups).toEqual([]);
    expect(await metric(worker, 'push_deliveries_total', '{outcome="refused"}')).toBe(2);
    expect(await harness.deliver(worker, signed({ ids: ['PO-1'] }, 'D-1'))).toBe(202);
    expect(held('PO-1')).toMatchObject({ resolved: true });
    // Logged once, not once a refusal: a flood of forged requests does not flood the logs.
    const refusals = lines.filter((line) => line.msg.startsWith('push deliveries refused'));
    expect(refusals).toMatchObject([{ level: 40, refused: 1 }]);
  });

  it('over the body limit, as it says or as it is read, is answered 413 without being read further', async () => {
    const worker = await startWorker(new PushConnector(source), { maxBodyBytes: 64 });
    const url = worker.pushHealth?.url as string;
    const large = signed({ ids: Array.from({ length: 20 }, (_, n) => `PO-${n}`) });
    expect((await post(url, large.body, large.headers)).status).toBe(413);
    // Chunked, without a content-length: found as it is read.
    const chunks = async function* () {
      for (let n = 0; n < 4; n += 1) yield Buffer.from('{"ids":["PO-1","PO-2","PO-3","PO-4"]}');
    };
    const chunked = await request(url, {
      method: 'POST',
      body: Readable.from(chunks()),
      headers: large.headers,
      reset: true,
    });
    expect(chunked.statusCode).toBe(413);
    await chunked.body.dump();
    expect(await metric(worker, 'push_deliveries_total', '{outcome="too_large"}')).toBe(2);
  });

  it('that approvalIds() cannot read, is answered 202, then counted malformed and dropped, its body not logged', async () => {
    const { lines, destination } = captureLogs();
    const connector = new PushConnector(source);
    const worker = await harness.start(connector, {
      push: { secret: WEBHOOK_SECRET },
      logger: { level: 'debug', destination },
    });
    expect(await harness.deliver(worker, signed('not json, a PAYLOAD of the source'))).toBe(202);
    expect(await metric(worker, 'push_deliveries_total', '{outcome="malformed"}')).toBe(1);
    expect(connector.lookups).toEqual([]);
    expect(lines.map((line) => line.msg)).toContain(
      'a verified push delivery named no approvals that could be read: dropped',
    );
    expect(JSON.stringify(lines)).not.toMatch(/PAYLOAD|sha256=|the-webhook-secret/);
  });

  it('on another path or with another method, is answered 404 or 405', async () => {
    const worker = await startWorker(new PushConnector(source));
    const url = worker.pushHealth?.url as string;
    expect((await post(`${url}/else`, '{}')).status).toBe(404);
    expect((await post(url, '', {}, 'GET')).status).toBe(405);
  });
});

describe('the push ingress', () => {
  it('looks up once what deliveries that come together name, however many', async () => {
    const connector = new PushConnector(source);
    const worker = await startWorker(connector, { delayMs: 500 });
    source.put('PO-1', at(30), { resolved: true });
    const url = worker.pushHealth?.url as string;
    const deliveries = ['D-1', 'D-2', 'D-3'].map((id) => signed({ ids: ['PO-1', 'PO-2'] }, id));
    const answers = await Promise.all(deliveries.map(({ body, headers }) => post(url, body, headers)));
    await worker.pushSettled();
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202]);
    expect(connector.lookups).toEqual([['PO-1', 'PO-2']]);
    expect(held('PO-1')).toMatchObject({ resolved: true });
  });

  it('listens on its own port, in a worker that syncs, and not in one that only runs tasks', async () => {
    const worker = await harness.start(new PushConnector(source), { operations: { port: 0 } });
    expect(worker.pushHealth?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/push$/);
    expect(new URL(worker.pushHealth?.url as string).port).not.toBe(
      new URL(worker.operationsUrl as string).port,
    );

    const tasksOnly = await harness.start(new PushConnector(source), { sync: { enabled: false } });
    expect(tasksOnly.pushHealth).toBeUndefined();
    const off = await harness.start(new PushConnector(source), { push: false });
    expect(off.pushHealth).toBeUndefined();
  });

  it('is off unless asked for, as the operations port is, and the worker says so once', () => {
    const { lines, destination } = captureLogs();
    // The connector options as given, without the harness's, which open the ingress on a free port for tests.
    const worker = new ConnectorWorker(new PushConnector(source), {
      service: harness.serviceOptions(),
      logger: { level: 'info', destination },
    });
    expect(worker.pushHealth).toBeUndefined();
    expect(lines.map((line) => line.msg)).toEqual([
      'the connector has a push path, but its ingress is off: set PUSH_PORT (push.port) to take its events',
    ]);
  });

  it('answers 503 while the worker starts, for the source to deliver again, and closes as it stops', async () => {
    // Registration keeps failing: the worker keeps trying and never gets to running.
    harness.faults.inject({
      method: 'PATCH',
      path: '/v2/connector',
      fault: { type: 'status', status: 503 },
      times: 1_000,
    });
    const worker = new ConnectorWorker(
      new PushConnector(source),
      harness.connectorOptions({ push: { secret: WEBHOOK_SECRET } }),
    );
    const starting = worker.start();
    await vi.waitFor(() => expect(worker.pushHealth?.url).toBeDefined());
    const url = worker.pushHealth?.url as string;
    const { body, headers } = signed({ ids: ['PO-1'] });
    expect(await post(url, body, headers)).toEqual({ status: 503, body: '{"status":"not running"}' });
    await worker.stop();
    await starting;
    expect(worker.pushHealth?.url).toBeUndefined();
    await expect(post(url, body, headers)).rejects.toThrow();
  });

  it('leaves to the scheduled sync, and counts, what a full queue of lookups cannot take', async () => {
    const connector = new PushConnector(source);
    const worker = await startWorker(connector, { queueSize: 2, delayMs: 50 });
    for (const id of ['PO-3', 'PO-4', 'PO-5']) source.put(id, at(30));
    const url = worker.pushHealth?.url as string;
    const { body, headers } = signed({ ids: ['PO-3', 'PO-4', 'PO-5'] });
    expect((await post(url, body, headers)).status).toBe(202);
    await worker.pushSettled();
    expect(connector.lookups).toEqual([['PO-3', 'PO-4']]);
    expect(await metric(worker, 'push_overflows_total')).toBe(1);
    await worker.syncNow();
    expect(held('PO-5')).toBeDefined();
  });
});

describe('push health', () => {
  it('counts a change the sync found that no event announced as missed, and not one an event announced', async () => {
    const connector = new PushConnector(source);
    const worker = await startWorker(connector, { missedGraceMs: 0 });
    source.put('PO-1', at(30), { resolved: true });
    source.put('PO-2', at(31), { data: { title: 'Changed' } });
    // Only PO-2's event comes: PO-1's is lost on its way.
    await harness.deliver(worker, signed({ ids: ['PO-2'] }, 'D-2'));

    await worker.syncNow();

    expect(held('PO-1')).toMatchObject({ resolved: true });
    expect(worker.pushHealth).toMatchObject({ missed: 1, state: 'healthy' });
    expect(await metric(worker, 'push_missed_total')).toBe(1);
    // A request raised, then withdrawn, in the source, of which no event said anything: the sync finds the one, a
    // reconciliation the other.
    source.put('PO-3', at(40));
    await worker.syncNow();
    expect(worker.pushHealth?.missed).toBe(2);
    source.records.delete('PO-3');
    await worker.reconcileNow();
    expect(held('PO-3')).toMatchObject({ resolved: true });
    expect(worker.pushHealth?.missed).toBe(3);
  });

  it("counts no change the worker's own tasks made as missed, in a worker that runs them: it looked them up", async () => {
    const worker = await harness.start(new PushConnector(source), {
      push: { secret: WEBHOOK_SECRET, missedGraceMs: 0 },
      sync: { afterTaskMs: 0 },
    });
    await worker.syncNow();
    const task = harness.createTask(worker, { type: 'approve', approvalId: 'PO-1' });
    expect(await harness.awaitResult(task)).toEqual({ status: 'success' });
    await vi.waitFor(() => expect(held('PO-1')?.resolved).toBe(true));
    await worker.syncNow();
    expect(worker.pushHealth?.missed).toBe(0);
  });

  it('says push is degraded while it is quiet and the sync keeps finding changes, in its report, metrics and logs', async () => {
    const { lines, destination } = captureLogs();
    const worker = await harness.start(new PushConnector(source), {
      push: { secret: WEBHOOK_SECRET, missedGraceMs: 0, degradedAfterMissed: 3 },
      logger: { level: 'info', destination },
    });
    await worker.syncNow();
    for (const [n, id] of ['PO-1', 'PO-2', 'PO-3'].entries()) {
      source.put(id, at(30 + n), { resolved: true });
      await worker.syncNow();
    }
    expect(worker.pushHealth).toMatchObject({ state: 'degraded', missedSinceLastDelivery: 3 });
    expect(await metric(worker, 'push_degraded')).toBe(1);
    expect(lines.filter((line) => line.msg.startsWith('push degraded'))).toHaveLength(1);

    await harness.deliver(worker, signed({ ids: ['PO-1'] }));
    expect(worker.pushHealth).toMatchObject({ state: 'healthy', missedSinceLastDelivery: 0, missed: 3 });
    expect(await metric(worker, 'push_degraded')).toBe(0);
    expect(lines.map((line) => line.msg)).toContain('push recovered: a verified delivery came');
  });
});
